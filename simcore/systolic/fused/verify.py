"""The verification of a fused group's event schedule: its operations run on numbers, and its
timeline checked apart from the engines.

`verify_fused` expands the schedule (the reference engine's timeline) and requires:
  1. results: replayed with numpy (a load copies its block from DRAM into its slot, a block on
     the array multiplies the blocks its slots hold and adds into its C slot, the vector unit
     applies its steps, a drain copies a block out), every output written exactly once and
     equal to numpy's within the fused programs' tolerance (simcore.ga1.fused.check);
  2. the timeline: the hazard replay (simcore.ga1.hazards, a load's data in place its latency
     after it ends) is clean, the link and the vector unit run one operation at a time in issue
     order, the array's blocks start and end in issue order, every link operation takes the
     link's time for its words and every block at least the array's. A block reads its
     stationary block from its first fetch, its other blocks from its first stream start; the
     order between the array's own blocks (partial sums added into the C block the previous
     block wrote, a slot the array read rewritten by it) is the tile stream's recurrence
     (simcore.systolic.blocked.stream, checked tile by tile by the memory system's audit) and
     is left out of the replay;
  3. the engines: the fast engine's cycles equal the reference's;
  4. the array: its cycle model runs every distinct block shape to the closed form's cycles and
     numpy's product (simcore.systolic.cycle).
The replay is as costly as the group's products in numpy: a large group is verified on a
smaller one with the same machine and schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.ga1.fused.check import within_tolerance
from simcore.ga1.hazards import replay as hazard_replay
from simcore.ga1.vector.reference import gelu_erf, gelu_tanh
from simcore.shape import Shape
from simcore.systolic.blocked.schedule import transfer
from simcore.systolic.closed_form import cycles as array_cycles
from simcore.systolic.cycle import simulate_systolic
from simcore.systolic.fused.engine import Timeline, run_fast, run_reference
from simcore.systolic.fused.evaluate import Group, fused_build, tree_of
from simcore.systolic.fused.ops import ARRAY, LINK, UNITS, Op
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign
from simcore.systolic.vector_unit import VectorUnit, default_vector_unit


class ReplayError(RuntimeError):
    """An operation found a block missing or of the wrong shape, or an output was not written
    exactly once."""


@dataclass(frozen=True)
class FusedVerdict:
    ok: bool
    detail: str


def step(
    name: str, x: np.ndarray, bias: np.ndarray | None, residual: np.ndarray | None
) -> np.ndarray:
    """One elementwise step in numpy."""
    with np.errstate(over="ignore"):
        if name == "bias" and bias is not None:
            done = x + bias
        elif name == "residual" and residual is not None:
            done = x + residual
        elif name == "relu":
            done = np.maximum(x, 0.0)
        elif name == "silu":
            done = x / (1.0 + np.exp(-x))
        elif name == "gelu":
            done = gelu_tanh(x)
        elif name == "gelu-erf":
            done = gelu_erf(x)
        else:
            raise ReplayError(f"elementwise step {name!r} lacks its operand or is unknown")
    return np.asarray(done, dtype=np.float64)


def inputs(group: Group, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if isinstance(group, FusedMlp):
        g = group
        return {
            "X": rng.standard_normal((g.m, g.d)),
            "W1": rng.standard_normal((g.d, g.hidden)) / np.sqrt(g.d),
            "W2": rng.standard_normal((g.hidden, g.d_out)) / np.sqrt(g.hidden),
            "B1": rng.standard_normal((1, g.hidden)),
            "B2": rng.standard_normal((1, g.d_out)),
        }
    return {
        "A": rng.standard_normal((group.m, group.k)),
        "B": rng.standard_normal((group.k, group.n)) / np.sqrt(group.k),
        "BIAS": rng.standard_normal((1, group.n)),
        "R": rng.standard_normal((group.m, group.n)),
    }


def expected(group: Group, dram: dict[str, np.ndarray]) -> tuple[str, np.ndarray]:
    if isinstance(group, FusedMlp):
        g = group
        h = dram["X"] @ dram["W1"] + (dram["B1"] if g.bias else 0.0)
        y = step(_gelu(g.activation, g.gelu), h, None, None) @ dram["W2"]
        return "Y", y + (dram["B2"] if g.bias else 0.0)
    c = dram["A"] @ dram["B"]
    for name in group.epilogue:
        c = (
            c * group.scale
            if name == "scale"
            else step(_gelu(name, group.gelu), c, dram["BIAS"], dram["R"])
        )
    return "C", c


def _gelu(name: str, form: str) -> str:
    return "gelu-erf" if name == "gelu" and form == "erf" else name


class _Replay:
    def __init__(self, group: Group, dram: dict[str, np.ndarray]) -> None:
        self.group, self.dram = group, dram
        self.slots: dict[int, np.ndarray] = {}
        self.written: dict[str, np.ndarray] = {}

    def tensor(self, name: str, like: str) -> np.ndarray:
        if name not in self.dram:
            self.dram[name] = (
                np.zeros_like(self.dram[like]) if like in self.dram else np.zeros((0, 0))
            )
        return self.dram[name]

    def run(self, op: Op) -> None:
        r, c = slice(*op.rows), slice(*op.cols)
        if op.kind in ("load", "back"):
            self.slots[op.writes[0]] = self.dram[op.tensor][r, c].copy()
        elif op.kind in ("drain", "spill"):
            block = self.slots[op.reads[0]]
            self.dram[op.tensor][r, c] = block
            if op.kind == "drain":
                self.written[op.tensor][r, c] += 1
        elif op.unit == ARRAY:
            self._product(op)
        else:
            self._vector(op)

    def _product(self, op: Op) -> None:
        a, b = self.slots.get(op.reads[0]), self.slots.get(op.reads[1])
        m, (k, n) = op.rows[1], op.cols
        if a is None or b is None or a.shape != (m, k) or b.shape != (k, n):
            raise ReplayError(f"a {m}x{k}x{n} block finds its operands missing or misshapen")
        sums = self.slots.get(op.writes[0]) if len(op.reads) > 2 else np.zeros((m, n))
        if sums is None or sums.shape != (m, n):
            raise ReplayError(f"a {m}x{k}x{n} block finds no partial sums to add to")
        self.slots[op.writes[0]] = sums + a @ b

    def _vector(self, op: Op) -> None:
        x = self.slots[op.reads[0]]
        steps = op.tensor.split("+")
        extra = [self.slots[s] for s in op.reads[1:]]  # the bias block, then the residual block
        bias = extra.pop(0) if "bias" in steps else None
        residual = extra.pop(0) if "residual" in steps else None
        form = self.group.gelu
        for name in steps:
            if name == "scale":
                x = x * self.group.scale if isinstance(self.group, EpilogueGemm) else x
            else:
                x = step(_gelu(name, form), x, bias, residual)
        self.slots[op.writes[0]] = x


def replay_outputs(
    group: Group, timeline: Timeline, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the output as the schedule computes it, numpy's, times each element was written)."""
    dram = inputs(group, seed)
    name, want = expected(group, dram)
    for tensor in {op.tensor for op in timeline.ops if op.unit == LINK}:
        if tensor not in dram:
            base = tensor.split(".")[0]
            shape = want.shape if base in (name, "Y", "C") else _intermediate_shape(group)
            dram[tensor] = np.zeros(shape)
    r = _Replay(group, dram)
    for tensor in {op.tensor for op in timeline.ops if op.kind == "drain"}:
        r.written[tensor] = np.zeros(dram[tensor].shape, dtype=np.int64)
    for op in timeline.ops:
        r.run(op)
    return dram[name], want, r.written.get(name, np.zeros(want.shape, dtype=np.int64))


def _intermediate_shape(group: Group) -> tuple[int, int]:
    return (group.m, group.hidden) if isinstance(group, FusedMlp) else (group.m, group.n)


Record = tuple[int, str, int, int, tuple[int, ...], tuple[int, ...], int]


def _trace(timeline: Timeline) -> tuple[list[Record], set[tuple[int, int]]]:
    """The hazard replay's records (a block: its stationary read from its start, the rest from
    its stream start) and the (operation, slot) pairs ordered by the array's own tile stream."""
    rows: list[Record] = []
    internal: set[tuple[int, int]] = set()
    writer: dict[int, int] = {}  # slot -> the unit that wrote it last
    outside: dict[int, int] = {}  # slot -> end of its reads off the array since its last write
    for n, op in enumerate(timeline.ops):
        start, end, stream = timeline.starts[n], timeline.ends[n], timeline.streams[n]
        fill = op.latency if op.kind in ("load", "back") else 0
        if op.work is None:
            rows.append((n, UNITS[op.unit], start, end, op.reads, op.writes, fill))
        else:
            held = op.reads[op.work.held] if op.work.held >= 0 else -1
            if held >= 0:
                rows.append((n, "array", start, end, (held,), (), 0))
            rest = tuple(s for s in op.reads if s != held)
            rows.append((n, "array", stream, end, rest, op.writes, 0))
            internal.update((n, s) for s in op.reads if writer.get(s) == ARRAY)
            internal.update((n, s) for s in op.writes if outside.get(s, 0) <= stream)
        for s in op.reads:
            if op.work is None:
                outside[s] = max(outside.get(s, 0), end)
        for s in op.writes:
            writer[s] = op.unit
            outside[s] = end if op.work is None and s in op.reads else 0
    return rows, internal


def audit(costs: Costs, design: SystolicDesign, timeline: Timeline) -> list[str]:
    """Units one operation at a time in issue order; durations from the machine's figures."""
    problems = []
    free = [0] * len(UNITS)
    array = (0, 0)  # the previous block's start and end
    for n, (op, start, end) in enumerate(zip(timeline.ops, timeline.starts, timeline.ends)):
        if op.unit == ARRAY:
            if start < array[0] or end < array[1]:
                problems.append(f"op {n}: a block starts or ends before the previous block")
            array = (start, end)
        elif start < free[op.unit]:
            problems.append(
                f"op {n}: the {UNITS[op.unit]} starts at {start}, busy until {free[op.unit]}"
            )
        free[op.unit] = end
        if op.unit == LINK:
            words, rate = transfer(costs.machine, op.what, op.elements)
            want = costs.machine.memory.dram.occupancy(words, rate)
            if end - start != want:
                problems.append(
                    f"op {n} {op.kind}: {end - start} cycles on the link, expected {want}"
                )
        elif op.unit == ARRAY:
            least = array_cycles(design, Shape(op.rows[1], *op.cols))
            if end - start < least:
                problems.append(f"op {n}: a block in {end - start} cycles, the array needs {least}")
    return problems


def _array_model(design: SystolicDesign, timeline: Timeline, rng: np.random.Generator) -> str:
    shapes = sorted({(op.rows[1], *op.cols) for op in timeline.ops if op.unit == ARRAY})
    for dims in shapes:
        x = rng.integers(-9, 10, size=dims[:2]).astype(np.float64)
        y = rng.integers(-9, 10, size=dims[1:]).astype(np.float64)
        run = simulate_systolic(design, x, y)
        if run.cycles != array_cycles(design, Shape(*dims)) or not np.array_equal(run.c, x @ y):
            return f"block {dims}: the array's cycle model disagrees"
    return ""


def verify_fused(
    machine: SystolicMachine,
    design: SystolicDesign,
    group: Group,
    schedule: GemmSchedule | MlpSchedule,
    vector: VectorUnit | None = None,
    seed: int = 0,
) -> FusedVerdict:
    """The four checks of the module's note, on the group's event schedule."""
    costs = Costs(machine, design, vector or default_vector_unit(machine.array.cols))
    build = fused_build(costs, group, schedule)
    tree = tree_of(build)
    timeline = run_reference(tree_of(build, compress=False), len(build.slots))
    try:
        got, want, written = replay_outputs(group, timeline, seed)
    except (ReplayError, KeyError) as exc:
        return FusedVerdict(False, f"replay: {exc}")
    if not (written == 1).all():
        return FusedVerdict(False, "an output was not written exactly once")
    ok, worst = within_tolerance(got, want)
    if not ok:
        return FusedVerdict(False, f"the outputs differ from numpy's ({worst:.3g} x the tolerance)")
    trace, internal = _trace(timeline)
    hazards = [h for h in hazard_replay(trace) if (h.index, h.slot) not in internal]
    if hazards:
        return FusedVerdict(False, f"{len(hazards)} hazard(s), first: {hazards[0]}")
    problems = audit(costs, design, timeline)
    if problems:
        return FusedVerdict(False, f"audit: {problems[0]}")
    fast = run_fast(tree, len(build.slots)).cycles  # the tree, against the flat schedule
    if fast != timeline.cycles:
        return FusedVerdict(
            False, f"the fast engine's {fast} cycles differ from the reference's {timeline.cycles}"
        )
    trouble = _array_model(design, timeline, np.random.default_rng(seed))
    if trouble:
        return FusedVerdict(False, trouble)
    return FusedVerdict(
        True,
        f"outputs equal numpy's within tolerance, timeline clean, engines agree ({fast} cycles)",
    )
