"""A network's operations on GA-1 (the `Operations` capability): products by the chapter's best
hand-written schedule (a batched product's or a grouped convolution's products one after
another), the rest as vector programs (simcore.ga1.vector).

Each vector operation's schedule is found by enumerating its whole domain
(`simcore.ga1.vector.all_params`: buffers x order x group x reduction, at most 60 points, each
timed exactly from its compact tree), not by an Optuna study: the domain is small enough that
enumeration finds the best schedule outright. Points that need more slots than the machine has
are skipped. Results are cached per distinct operation and machine, so a block repeated over
layers, or the same shape in several places, is timed once.

How each kind maps (`vector_op`):

| kind | GA-1 program | how exact |
|---|---|---|
| softmax, layernorm, rmsnorm, relu, gelu, silu, scale, add, mul, bias, transpose | the vector op of that kind | exact |
| add with fn Sub | `add` | stand-in: `vop sub` costs what `vop add` costs |
| reduce sum / max | `rowsum` / `rowmax` | exact (a mean's final 1/n scale of one column is not counted) |
| reduce min | `rowmax` | stand-in: a row minimum costs what a row maximum costs |
| pool max / average | `rowmax` / `rowsum` of the windows (outputs x window) | stand-in: the windows read as rows |
| elementwise Tanh | `tanh` | exact |
| elementwise Clip | `clip` (ReLU6) | stand-in: any bounds timed as ReLU6's 0 and 6 |
| gather, copy, concat, kv_append | `copy` of an (n / c) x c matrix, c = gcd(n, 512) | stand-in: a row gather moves what a copy of its rows moves |
| views, shape | none | free: no word moves |
| elementwise (other functions), other | none | untimed |
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from autotune.errors import OracleError
from autotune.oracles.operations import OperationTime, is_free
from simcore.ga1.machine import Machine
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.ga1.vector import VectorOp
    from workloads.graph import Operation

SAME = frozenset({"softmax", "layernorm", "rmsnorm", "relu", "silu", "scale", "add", "mul", "bias"})
COPIED = frozenset({"gather", "copy", "concat", "kv_append"})
ROW_REDUCTIONS = {"sum": "rowsum", "mean": "rowsum", "max": "rowmax"}
COPY_WIDTH = 512
POOLS = {"MaxPool": "rowmax", "GlobalMaxPool": "rowmax"}
POOLS.update(AveragePool="rowsum", GlobalAveragePool="rowsum")
FUNCTIONS = {"Tanh": ("tanh", "exact"), "Clip": ("clip", "stand-in: timed as ReLU6 (0, 6)")}
# A copy's program does not settle into a period the timing can jump, so it is timed in full:
# about 1 us of CPU per row over its whole domain (4,194,304 rows: 3.8 s). Past this many rows
# (about half a minute) it is refused before it is timed.
MOST_COPY_ROWS = 1 << 25


def vector_op(op: Operation) -> tuple[VectorOp, str] | None:
    """The vector operation that times `op` and how exact it is; None when none does."""
    from simcore.ga1.vector import VectorOp

    dims = op.dims
    if op.kind in SAME or op.kind == "gelu":
        batch, rows, cols = dims
        options: dict[str, object] = {}
        if op.kind == "softmax":
            options = {
                "scale": float(op.option("scale", 1.0)),  # type: ignore[arg-type]
                "causal": bool(op.option("causal", False)),
                "causal_offset": int(op.option("causal_offset", 0)),  # type: ignore[call-overload]
            }
        if op.kind == "gelu":
            options = {"gelu": str(op.option("form", "tanh"))}
        method = (
            "stand-in: vop sub costs what vop add costs" if op.option("fn") == "Sub" else "exact"
        )
        return VectorOp(op.kind, rows, cols, batch, **options), method  # type: ignore[arg-type]
    if op.kind == "transpose":
        batch, rows, cols = dims
        return VectorOp("transpose", rows, cols, batch), "exact"
    if op.kind == "reduce" and op.option("fn") in ROW_REDUCTIONS:
        batch, rows, cols = dims
        return VectorOp(ROW_REDUCTIONS[str(op.option("fn"))], rows, cols, batch), "exact"
    if op.kind == "reduce" and op.option("fn") == "min":
        batch, rows, cols = dims
        return VectorOp("rowmax", rows, cols, batch), "stand-in: rowmax costs what a min costs"
    if op.kind == "pool" and op.option("fn") in POOLS:
        batch, rows, cols = dims
        vop = VectorOp(POOLS[str(op.option("fn"))], rows, cols, batch)
        return vop, "stand-in: the windows read as rows"
    if op.kind == "elementwise" and op.option("fn") in FUNCTIONS:
        batch, rows, cols = dims
        kind, method = FUNCTIONS[str(op.option("fn"))]
        return VectorOp(kind, rows, cols, batch), method
    if op.kind in COPIED:
        n = op.elements
        width = math.gcd(n, COPY_WIDTH)
        return VectorOp("copy", n // width, width), f"stand-in: a copy of {n // width}x{width}"
    return None


def supports(op: Operation) -> bool:
    return op.family == "product" or is_free(op) or vector_op(op) is not None


def time_operation(op: Operation, machine: Machine, technology: object = None) -> OperationTime:
    """One run of `op` on `machine` (module doc)."""
    if op.kind == "kv_read":
        return OperationTime(0, 0.0, 0, "view", "free: the attention products load the cache")
    if is_free(op):
        return OperationTime(0, 0.0, 0, "view", "free: no word moves")
    if op.family == "product":
        m, k, n = op.dims[-3:]
        one = _product(Shape(m, k, n), machine, technology)
        runs = 1 if op.kind == "gemm" else op.dims[0]  # heads or groups, one after another
        energy = None if one.energy_pj is None else runs * one.energy_pj
        bound = None if one.bound_cycles is None else runs * one.bound_cycles
        return OperationTime(
            runs * one.cycles, energy, runs * one.dram_words, one.schedule, "exact", bound
        )
    found = vector_op(op)
    if found is None:
        raise OracleError(f"GA-1 cannot time {op.kind} operation {op.name!r} ({op.source})")
    vop, method = found
    if vop.kind == "copy" and vop.rows * vop.batch > MOST_COPY_ROWS:
        raise OracleError(
            f"GA-1 times {op.kind} operation {op.name!r} as a copy of {vop.rows:,} rows of "
            f"{vop.cols} words, each simulated (about {vop.rows * vop.batch / 1e6:.3g} s of CPU); "
            f"the limit is {MOST_COPY_ROWS:,} rows"
        )
    best = _vector(vop, machine, technology)
    return OperationTime(best.cycles, best.energy_pj, best.dram_words, best.schedule, method)


@functools.lru_cache(maxsize=4096)
def _product(shape: Shape, machine: Machine, technology: object) -> OperationTime:
    from simcore.energy import default_technology, ga1_cost_of_timing
    from simcore.ga1.engine import chapter_generator
    from simcore.ga1.lower_bounds import lower_bound
    from simcore.ga1.schedules import chapter_sweep

    best: tuple[int, Any, str] | None = None
    for schedule in chapter_sweep():
        if schedule.slots_needed(shape, machine) > machine.slots:
            continue
        timing = chapter_generator(schedule, shape, machine).timing()
        if best is None or timing.cycles < best[0]:
            best = (timing.cycles, timing, schedule.label(shape, machine))
    if best is None:
        raise OracleError(f"no chapter schedule of GEMM {shape} fits {machine.slots} slots")
    cycles, timing, label = best
    tech = technology if technology is not None else default_technology()
    cost = ga1_cost_of_timing(machine, timing, tech)  # type: ignore[arg-type]
    words = timing.tiles_moved * machine.T**2  # type: ignore[attr-defined]
    bound = lower_bound(shape, machine)
    return OperationTime(cycles, cost.energy_pj, words, f"chapter: {label}", "exact", bound)


@functools.lru_cache(maxsize=4096)
def _vector(vop: VectorOp, machine: Machine, technology: object) -> OperationTime:
    from simcore.ga1.schedules import ScheduleError
    from simcore.ga1.vector import all_params, param_domains, vector_program

    best: tuple[int, OperationTime] | None = None
    for params in all_params(vop):
        try:
            program = vector_program(vop, machine, params)
            timing = program.timing()
        except ScheduleError:
            continue  # more slots than the machine has
        if best is not None and timing.cycles >= best[0]:
            continue
        cost = program.cost(technology, timing)  # type: ignore[arg-type]
        label = ", ".join(f"{d.name}={getattr(params, d.name)}" for d in param_domains(vop))
        words = timing.tiles_moved * machine.T**2
        best = (timing.cycles, OperationTime(timing.cycles, cost.energy_pj, words, label))
    if best is None:
        raise OracleError(
            f"no schedule of {vop.describe()} fits {machine.slots} slots", setting="machine"
        )
    return best[1]
