"""The systolic target: choose an R x C array, its dataflow, shadow registers, weight buffers and
HBM bandwidth for one GEMM, under a PE budget. Built by the tuner for `--target systolic`
through `systolic_family(pe_budget, max_hbm_words)`; not one of the registry's default spaces.

Parameters: rows and cols are integers 1..pe_budget sampled on a log scale (any array shape is
reachable, and small and large arrays are tried equally often); rows * cols over the budget is
a graded violation. hbm_words is the HBM rate in words per cycle, 1..max_hbm_words, also log.

Timing, both dataflows by the closed form of `simcore.systolic.stream_schedule`:
  * ws: the chapter's model as is: weight tiles of B stream the M rows of A; each tile's
    k x n weights are fetched from HBM into 1 or 2 weight buffers.
  * os: the array holds an R x C tile of C (rows of A by columns of B) while the K-long
    reduction streams through it: the same recurrence with the roles of M and K swapped,
    stream_schedule(array, K, M, N). It is ws read in a mirror: ws shifts a tile's weights in
    for k cycles before its stream, os shifts a tile's m x n results out afterwards (through
    the shadow registers when shadow is on); the HBM path and buffers carry those results out
    instead of weights in. Simple and symmetric, and checkable by the same cycle model (run on
    the role-swapped shape); it is not a separate output-stationary cycle model.
Traffic (words_per_mac) is `simcore.systolic.traffic` of the real product for the dataflow.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.ga1.machine import Machine
from simcore.shape import Shape
from simcore.systolic.model import SystolicArray, TileTiming, Traffic, WeightFetch, stream_schedule, traffic
from simcore.systolic.cycle import SystolicTimingError, simulate_systolic

from search_spaces.base import EXACT, SCALED, Family, Metrics, Space, Verdict
from search_spaces.domains import Choice, IntRange, Param, Point

DATAFLOWS: tuple[str, ...] = ("ws", "os")
# The cycle model runs the full shape up to this many MACs (and within the cost budget).
FULL_VERIFY_MACS = 2**21
# Cost units ~ cycles * (1 + PEs / 3000): about 200 us per unit on a laptop, so ~4 s.
VERIFY_BUDGET = 20_000


@dataclass(frozen=True)
class SystolicPoint:
    """One design point: the array, its dataflow and the weight fetch."""

    array: SystolicArray
    dataflow: str
    fetch: WeightFetch


def systolic_point(point: Point) -> SystolicPoint:
    """Validate a point's values and build the design it names."""
    missing = [k for k in ("rows", "cols", "dataflow", "shadow", "weight_buffers", "hbm_words") if k not in point]
    if missing:
        raise ValueError(f"systolic point lacks {', '.join(missing)}")
    if point["dataflow"] not in DATAFLOWS:
        raise ValueError(f"dataflow must be 'ws' or 'os', got {point['dataflow']!r}")
    array = SystolicArray(point["rows"], point["cols"], point["shadow"])  # type: ignore[arg-type]
    fetch = WeightFetch(point["hbm_words"], point["weight_buffers"])  # type: ignore[arg-type]
    return SystolicPoint(array, str(point["dataflow"]), fetch)


def timed_shape(m: int, k: int, n: int, dataflow: str) -> tuple[int, int, int]:
    """The (stream, stationary rows, columns) problem the recurrence times: os swaps M and K."""
    if dataflow not in DATAFLOWS:
        raise ValueError(f"dataflow must be 'ws' or 'os', got {dataflow!r}")
    return (m, k, n) if dataflow == "ws" else (k, m, n)


# Full column tiles of B run explicitly before the rest of a periodic run is extrapolated.
EXPLICIT_COLUMNS = 4


def _times(timing: TileTiming, on_chip: bool) -> tuple[int, ...]:
    core = (timing.load, timing.stream, timing.end)
    return core if on_chip else (timing.fetch_start, timing.fetch_end, *core)


def closed_form_cycles(array: SystolicArray, m: int, k: int, n: int, fetch: WeightFetch) -> int:
    """stream_schedule(array, m, k, n, fetch).cycles, without walking every column tile.

    The recurrence is shift-invariant and a tile's timing depends only on the two tiles before
    it, and every full column tile of B has the same K tiles. So once two successive full
    columns are each the previous one shifted by the same delta, so is every later one: the
    schedule runs EXPLICIT_COLUMNS full columns and the edge column, checks that, and shifts
    the last two by delta per skipped column. Falls back to the full walk when not periodic.
    """
    columns = -(-n // array.cols)
    if columns <= EXPLICIT_COLUMNS + 1:
        return stream_schedule(array, m, k, n, fetch).cycles
    edge = n - (columns - 1) * array.cols
    run = stream_schedule(array, m, k, EXPLICIT_COLUMNS * array.cols + edge, fetch)
    per = -(-k // array.rows)
    col = [[_times(t, fetch.on_chip) for t in run.tiles[c * per:(c + 1) * per]] for c in range(EXPLICIT_COLUMNS + 1)]
    shifts = {
        b - a
        for c in range(EXPLICIT_COLUMNS - 2, EXPLICIT_COLUMNS)
        for x, y in zip(col[c - 1], col[c]) for a, b in zip(x, y)
    }
    if len(shifts) != 1:
        return stream_schedule(array, m, k, n, fetch).cycles
    skipped = (columns - 1) - EXPLICIT_COLUMNS
    tail = max(t.end for t in run.tiles[(EXPLICIT_COLUMNS - 1) * per:])
    return max(run.cycles, tail + skipped * shifts.pop())


@dataclass(frozen=True)
class DataflowRun:
    """A GEMM on an array in one dataflow: closed-form cycles, weight tiles, buffer traffic."""

    dataflow: str
    pes: int
    cycles: int
    tiles: int
    traffic: Traffic

    @property
    def mac_utilization(self) -> float:
        return self.traffic.macs / (self.pes * self.cycles)

    @property
    def words_per_mac(self) -> float:
        return self.traffic.words_per_mac


def dataflow_run(array: SystolicArray, m: int, k: int, n: int, dataflow: str, fetch: WeightFetch) -> DataflowRun:
    """Closed-form timing and exact traffic of C = A B (A m x k) in `dataflow`."""
    tm, tk, tn = timed_shape(m, k, n, dataflow)
    tiles = -(-tk // array.rows) * -(-tn // array.cols)
    cycles = closed_form_cycles(array, tm, tk, tn, fetch)
    return DataflowRun(dataflow, array.pes, cycles, tiles, traffic(array, m, k, n, dataflow))  # type: ignore[arg-type]


# --- verification by the cycle model ------------------------------------------------------


@dataclass(frozen=True)
class VerifyPlan:
    """The problem the cycle model runs (m x k times k x n), and how it relates to the asked one."""

    array: SystolicArray
    m: int
    k: int
    n: int
    fetch: WeightFetch
    note: str


def _cost(array: SystolicArray, m: int, k: int, n: int, fetch: WeightFetch) -> float:
    return stream_schedule(array, m, k, n, fetch).cycles * (1 + array.pes / 3000)


def _truncate(dim: int, tile: int) -> int:
    """At most three tiles, keeping the edge tile: full-full, full-edge, edge-next all occur."""
    count = -(-dim // tile)
    return dim if count <= 3 else 2 * tile + (dim - (count - 1) * tile)


def _shrink(dim: int, tile: int, new_tile: int, s: int) -> int:
    """Same tile count on a tile edge of `new_tile`, the edge tile scaled by 1/s too."""
    count = -(-dim // tile)
    edge = dim - (count - 1) * tile
    return (count - 1) * new_tile + min(new_tile, max(1, edge // s))


def verify_plan(array: SystolicArray, m: int, k: int, n: int, fetch: WeightFetch) -> VerifyPlan:
    """The full problem if the cycle model can afford it, else a scaled-down one that keeps the
    tile structure: the same array with at most three tiles per dimension and the stream cut
    to just past every tile and fetch length; if even that is too slow, a similar problem with
    the array, the dimensions and the HBM rate all divided by the same power of two."""
    if m * k * n <= FULL_VERIFY_MACS and _cost(array, m, k, n, fetch) <= VERIFY_BUDGET:
        return VerifyPlan(array, m, k, n, fetch, "full shape")
    fetch_full = fetch.cycles(array.pes)
    m1 = min(m, max(array.rows + array.cols, fetch_full) + 1)
    k1, n1 = _truncate(k, array.rows), _truncate(n, array.cols)
    note = f"scaled-down shape {m1}x{k1}x{n1} (same array and tile edges)"
    if _cost(array, m1, k1, n1, fetch) <= VERIFY_BUDGET:
        return VerifyPlan(array, m1, k1, n1, fetch, note)
    s = 2
    while True:
        small = SystolicArray(max(1, array.rows // s), max(1, array.cols // s), array.shadow)
        rate = fetch.hbm_words_per_cycle
        small_fetch = WeightFetch(None if rate is None else rate / s, fetch.buffers)
        m2 = max(1, m1 // s)
        k2, n2 = _shrink(k1, array.rows, small.rows, s), _shrink(n1, array.cols, small.cols, s)
        tiny = small.pes == 1 and m2 == 1
        if tiny or _cost(small, m2, k2, n2, small_fetch) <= VERIFY_BUDGET:
            note = (f"similar problem scaled by 1/{s}: {m2}x{k2}x{n2} on {small.rows}x{small.cols}"
                    + ("" if rate is None else f" at {rate / s:g} HBM words/cycle"))
            return VerifyPlan(small, m2, k2, n2, small_fetch, note)
        s *= 2


def run_plan(plan: VerifyPlan, seed: int = 0) -> tuple[bool, str]:
    """Cycle model on random integer matrices: cycles == closed form, C == numpy, ws traffic."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, size=(plan.m, plan.k), dtype=np.int64)
    b = rng.integers(-9, 10, size=(plan.k, plan.n), dtype=np.int64)
    schedule = stream_schedule(plan.array, plan.m, plan.k, plan.n, plan.fetch)
    try:
        result = simulate_systolic(plan.array, a, b, schedule, plan.fetch)
    except SystolicTimingError as exc:
        return False, f"cycle model rejects the closed-form schedule: {exc}"
    if result.cycles != schedule.cycles:
        return False, f"cycle model takes {result.cycles} cycles, closed form {schedule.cycles}"
    if not np.array_equal(result.c, a @ b):
        return False, "cycle model's product differs from numpy's"
    expected = traffic(plan.array, plan.m, plan.k, plan.n, "ws")
    if result.traffic != expected:
        return False, f"cycle model moved {result.traffic.total} buffer words, formula {expected.total}"
    return True, f"{schedule.cycles} cycles and C == numpy"


def verify_dataflow(array: SystolicArray, shape: Shape, dataflow: str, fetch: WeightFetch, seed: int = 0) -> Verdict:
    """Check one dataflow's closed form against the cycle model (os on the role-swapped shape).
    Only ws on the full shape ran the design itself; os reruns the ws model on the swapped shape."""
    plan = verify_plan(array, *timed_shape(shape.m, shape.k, shape.n, dataflow), fetch)
    ok, detail = run_plan(plan, seed)
    swapped = " (timed as the M<->K role-swapped run)" if dataflow == "os" else ""
    level = EXACT if plan.note == "full shape" and dataflow == "ws" else SCALED
    return Verdict(ok, level, f"{dataflow}{swapped}, {plan.note}: {detail}")


# --- the family ---------------------------------------------------------------------------


def _check_budget(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class SystolicFamily(Family):
    """Array shape, dataflow, shadow registers, weight buffers and HBM rate for one GEMM."""

    name = "systolic"
    description = "an R x C systolic array (ws or os) under a PE budget, timed by the closed form"
    oracle = "systolic"
    measures = ("cycles", "words_per_mac", "pes")
    default_objectives = ("cycles", "words_per_mac")

    def __init__(self, pe_budget: int, max_hbm_words: int) -> None:
        self.pe_budget = _check_budget("pe_budget", pe_budget)
        self.max_hbm_words = _check_budget("max_hbm_words", max_hbm_words)

    def params(self, shape: Shape, T: int) -> tuple[Param, ...]:
        side = IntRange(1, self.pe_budget, log=self.pe_budget > 1)
        return (
            Param("rows", side, "array rows (PEs per column): the K extent of a weight tile"),
            Param("cols", side, "array columns: the N extent of a tile"),
            Param("dataflow", Choice(DATAFLOWS), "ws: weights stay in the PEs; os: results do"),
            Param("shadow", Choice((True, False)), "a second register per PE: tiles run back to back"),
            Param("weight_buffers", Choice((1, 2)), "on-chip buffers the HBM fetch fills in turn"),
            Param("hbm_words", IntRange(1, self.max_hbm_words, log=self.max_hbm_words > 1), "HBM words per cycle"),
        )

    def violation(self, point: Point, shape: Shape, machine: Machine) -> float:
        pes = int(point["rows"]) * int(point["cols"])
        return max(0, pes - self.pe_budget) / self.pe_budget

    def evaluate(self, point: Point, shape: Shape, machine: Machine) -> Metrics:
        design = systolic_point(point)
        run = dataflow_run(design.array, shape.m, shape.k, shape.n, design.dataflow, design.fetch)
        return {
            "cycles": run.cycles,
            "words_per_mac": run.words_per_mac,
            "mac_utilization": run.mac_utilization,
            "tiles": run.tiles,
            "pes": design.array.pes,
            "macs": run.traffic.macs,
            "buffer_words": run.traffic.total,
        }

    def verify(self, point: Point, shape: Shape, machine: Machine) -> Verdict:
        design = systolic_point(point)
        return verify_dataflow(design.array, shape, design.dataflow, design.fetch)

    def describe(self, point: Point, shape: Shape, machine: Machine, per_char: int | None = None) -> str:
        design = systolic_point(point)
        run = dataflow_run(design.array, shape.m, shape.k, shape.n, design.dataflow, design.fetch)
        a = design.array
        t = run.traffic
        return (
            f"{a.rows}x{a.cols} array ({a.pes} PEs), {design.dataflow}, "
            f"{'shadow registers' if a.shadow else 'no shadow registers'}, {design.fetch.buffers} weight "
            f"buffer(s), {design.fetch.hbm_words_per_cycle} HBM words/cycle\n"
            f"{shape}: {run.tiles} tiles, {run.cycles} cycles, {run.mac_utilization:.0%} of MAC slots busy, "
            f"{run.words_per_mac:.4g} buffer words/MAC (A {t.a_reads}, B {t.b_reads}, partial sums "
            f"{t.psum_writes} + {t.psum_readbacks}, C {t.c_writes})"
        )

    def seed_points(self, shape: Shape, machine: Machine) -> list[Point]:
        side = math.isqrt(self.pe_budget)
        sides = sorted({side, 1 << (side.bit_length() - 1), max(1, side // 2)}, reverse=True)
        return [
            {"rows": s, "cols": s, "dataflow": d, "shadow": True, "weight_buffers": 2, "hbm_words": self.max_hbm_words}
            for s in sides for d in DATAFLOWS
        ]


def systolic_family(pe_budget: int, max_hbm_words: int) -> SystolicFamily:
    """The family the tuner builds for `--target systolic --pe-budget P --max-hbm-words W`."""
    return SystolicFamily(pe_budget, max_hbm_words)


# In the registry so that a recorded point can be rebuilt by its family's name (describing,
# verifying and exporting a point do not depend on the budgets); a run builds its own family
# with --pe-budget and --max-hbm-words. These are those options' defaults.
SPACE = Space("systolic", "an R x C systolic array for one GEMM (tune --target systolic)", (systolic_family(4096, 64),))
