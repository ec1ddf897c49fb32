"""A network's operations on a systolic machine with its memory (the `Operations` capability of
the systolic oracle with `arch=NAME|FILE`): products by a block schedule of the memory system,
the rest on the machine's vector unit (simcore.systolic.vector_stream).

A product's schedule is the fastest of the seed schedules and of the enumerative search's best
`PRODUCT_BUDGET` candidates in the order of their own bounds
(simcore.systolic.blocked.enumerate.fastest), timed by the fast engine; a batched product's or
a grouped convolution's products run one after another. A vector operation's plan (chunk rows,
buffering) is the fastest of all plans that fit (`vector_stream.plans`, at most 20). Results are
cached per distinct shape and machine, so repeated layers are timed once.

| kind | on the systolic machine |
|---|---|
| gemm, matmul, conv | block schedule on the array, its DRAM traffic through the link |
| softmax, layernorm, rmsnorm, gelu, silu, relu, scale, add, mul, bias, transpose | the vector unit |
| reduce (sum, mean, max, min), pool (max, average) | the vector unit: a row reduction |
| elementwise | the vector unit, by function (`simcore.systolic.vector_ops.FUNCTIONS`) |
| copy, concat, gather, kv_append | the link: loaded to the store and written back |
| kv_read | free here: the attention products load the cache (their DRAM traffic) |
| views, shape | free: no word moves |
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

from autotune.errors import OracleError
from autotune.oracles.operations import OperationTime, is_free
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.systolic.machine import SystolicMachine
    from simcore.systolic.vector_ops import VectorTask
    from workloads.graph import Operation

PRODUCT_BUDGET = 40
COPY_WIDTH = 1024


def vector_task(op: Operation) -> VectorTask | None:
    """The vector unit's task of `op`; None when it has none."""
    from simcore.systolic.vector_ops import COPIES, VectorTask, VectorTaskError

    if op.family == "product" or is_free(op):
        return None
    try:
        if op.kind in COPIES and len(op.dims) == 1:
            n = op.dims[0]
            width = math.gcd(n, COPY_WIDTH)
            return VectorTask(op.kind, 1, n // width, width)
        if len(op.dims) != 3:
            return None
        batch, rows, cols = op.dims
        return VectorTask(
            op.kind,
            batch,
            rows,
            cols,
            fn=str(op.option("fn", "")),
            scaled=float(op.option("scale", 1.0)) != 1.0,  # type: ignore[arg-type]
            causal=bool(op.option("causal", False)),
            form=str(op.option("form", "tanh")),
        )
    except VectorTaskError:
        return None


def supports(op: Operation) -> bool:
    return op.family == "product" or is_free(op) or vector_task(op) is not None


def time_operation(op: Operation, system: SystolicMachine, technology: Any) -> OperationTime:
    """One run of `op` on `system` (module doc)."""
    if op.kind == "kv_read":
        return OperationTime(0, 0.0, 0, "view", "free: the attention products load the cache")
    if is_free(op):
        return OperationTime(0, 0.0, 0, "view", "free: no word moves")
    if op.family == "product":
        one = _product(system, Shape(*op.dims[-3:]), technology)
        runs = 1 if op.kind == "gemm" else op.dims[0]
        return OperationTime(
            runs * one.cycles,
            None if one.energy_pj is None else runs * one.energy_pj,
            runs * one.dram_words,
            one.schedule,
            one.method,
            None if one.bound_cycles is None else runs * one.bound_cycles,
        )
    task = vector_task(op)
    if task is None:
        raise OracleError(f"the systolic machine cannot time {op.kind} operation {op.name!r}")
    return _vector(system, task, technology)


@functools.lru_cache(maxsize=4096)
def _product(system: SystolicMachine, shape: Shape, technology: Any) -> OperationTime:
    from autotune.oracles.systolic_memory.run import cost_of, machine_bound
    from search_spaces.systolic_blocked import design
    from simcore.systolic.blocked.enumerate import fastest
    from simcore.systolic.blocked.evaluate import evaluate
    from simcore.systolic.blocked.space import seed_schedules

    plan = design(system, {})
    best, _evaluated = fastest(system, plan, shape, PRODUCT_BUDGET)
    for seed in seed_schedules(system, shape):
        run = evaluate(system, plan, seed, shape, "fast")
        if run.cycles < best.cycles:
            best = run
    cost = cost_of(best, technology)
    words = best.counts.dram.link_words(system)
    s = best.schedule
    label = f"blocks {s.bm}x{s.bk}x{s.bn}, {s.order}, buffering {''.join(map(str, s.buffering))}"
    bound = machine_bound(system, shape)
    return OperationTime(best.cycles, cost.energy_pj, int(words), label, "exact", bound)


@functools.lru_cache(maxsize=4096)
def _vector(system: SystolicMachine, task: VectorTask, technology: Any) -> OperationTime:
    from simcore.energy.vector_systolic import vector_cost
    from simcore.systolic.vector_stream import VectorPlanError, best_run

    try:
        run = best_run(system, task)
    except VectorPlanError as exc:
        raise OracleError(str(exc)) from None
    cost = vector_cost(system, run, technology)
    where = "link" if task.work().dma else "vector unit"
    return OperationTime(
        run.cycles,
        cost.energy_pj,
        math.ceil(run.dram_words),
        f"{where}: {run.plan.label()}",
        "exact",
        run.bound,
    )
