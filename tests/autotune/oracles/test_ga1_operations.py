"""GA-1's Operations capability: each graph kind mapped to its vector program, the best schedule
found by enumerating the operation's whole domain, products by the chapter's best schedule;
and which oracle times what (a third-party oracle: products only)."""

from __future__ import annotations

import pytest

from autotune.oracles import get
from autotune.oracles.ga1.operations import time_operation, vector_op
from autotune.oracles.operations import Operations, timed_by
from simcore.ga1.machine import Machine
from simcore.ga1.schedules import ScheduleError
from simcore.ga1.vector import VectorOp, all_params, vector_program
from workloads.graph import Operation

MACHINE = Machine(slots=16)


def test_kinds_map_to_vector_programs() -> None:
    softmax = Operation(
        "s",
        "softmax",
        (2, 24, 40),
        options=(("scale", 0.5), ("causal", True), ("causal_offset", 3)),
    )
    vop, method = vector_op(softmax)  # type: ignore[misc]
    assert vop == VectorOp("softmax", 24, 40, 2, scale=0.5, causal=True, causal_offset=3)
    assert method == "exact"
    gelu = vector_op(Operation("g", "gelu", (1, 8, 8), options=(("form", "erf"),)))
    assert gelu is not None and gelu[0].gelu == "erf"
    sub = vector_op(Operation("d", "add", (1, 8, 8), options=(("fn", "Sub"),)))
    assert sub is not None and sub[1].startswith("stand-in")
    copy = vector_op(Operation("k", "kv_append", (4096,)))
    assert copy is not None and (copy[0].rows, copy[0].cols) == (8, 512)
    low = vector_op(Operation("m", "reduce", (1, 8, 8), options=(("fn", "min"),)))
    assert low is not None and low[0].kind == "rowmax" and low[1].startswith("stand-in")
    assert vector_op(Operation("p", "pool", (1, 8, 9))) is None  # a pool of no known function
    pool = vector_op(Operation("p", "pool", (1, 8, 9), options=(("fn", "AveragePool"),)))
    assert pool is not None and (pool[0].kind, pool[0].rows, pool[0].cols) == ("rowsum", 8, 9)
    tanh = vector_op(Operation("t", "elementwise", (1, 8, 8), options=(("fn", "Tanh"),)))
    assert tanh is not None and tanh == (VectorOp("tanh", 8, 8), "exact")
    clip = vector_op(Operation("c", "elementwise", (1, 8, 8), options=(("fn", "Clip"),)))
    assert clip is not None and clip[0].kind == "clip"
    sine = Operation("s", "elementwise", (1, 8, 8), options=(("fn", "Sin"),))
    assert vector_op(sine) is None


@pytest.mark.parametrize(
    "op",
    [
        Operation("s", "softmax", (2, 20, 36), options=(("scale", 0.125),)),
        Operation("l", "layernorm", (1, 24, 40)),
        Operation("r", "rmsnorm", (1, 17, 33)),
        Operation("b", "bias", (1, 40, 24)),
    ],
)
def test_the_best_schedule_is_the_enumerated_minimum_and_verifies(op: Operation) -> None:
    found = time_operation(op, MACHINE)
    vop = vector_op(op)[0]  # type: ignore[index]
    timed = []
    for params in all_params(vop):
        try:
            timed.append((vector_program(vop, MACHINE, params).timing().cycles, params))
        except ScheduleError:
            continue
    best_cycles, best = min(timed, key=lambda item: item[0])
    assert found.cycles == best_cycles and found.energy_pj and found.energy_pj > 0
    assert vector_program(vop, MACHINE, best).verify(seed=3).ok  # numpy, hazards, engines


def test_batched_products_run_one_after_another() -> None:
    one = time_operation(Operation("g", "gemm", (16, 24, 32)), MACHINE)
    three = time_operation(Operation("b", "matmul", (3, 16, 24, 32)), MACHINE)
    assert three.cycles == 3 * one.cycles and three.dram_words == 3 * one.dram_words


def test_views_are_free() -> None:
    free = time_operation(Operation("v", "permute", (64,)), MACHINE)
    assert (free.cycles, free.dram_words) == (0, 0)


class _GemmsOnly:
    """A third-party oracle without the Operations capability."""

    def capability(self, kind: type) -> None:
        return None


def test_which_oracle_times_what() -> None:
    gemm = Operation("g", "conv", (2, 4, 4, 4))
    softmax = Operation("s", "softmax", (1, 4, 4))
    sine = Operation("t", "elementwise", (1, 4, 4), options=(("fn", "Sin"),))
    third = _GemmsOnly()
    assert timed_by(third, gemm) and not timed_by(third, softmax)  # type: ignore[arg-type]
    ga1 = get("ga1")
    assert ga1.capability(Operations) is not None
    assert timed_by(ga1, gemm) and timed_by(ga1, softmax) and not timed_by(ga1, sine)


def test_an_oracle_of_gemms_only_reports_with_a_tune_runs_products() -> None:
    from autotune.oracles.operations import OperationTime
    from autotune.results.network import summary, time_graph
    from workloads.network import load_graph

    graph = load_graph("gpt2", seq=16)
    tuned = {
        op.dims[-3:]: OperationTime(100, 1.0, 10, "tuned", "tuned, verified")
        for op in graph.operations
        if op.family == "product"
    }
    rows = time_graph(graph, _GemmsOnly(), None, tuned)  # type: ignore[arg-type]
    by_kind = {r.operation.kind: r for r in rows}
    assert by_kind["matmul"].time is not None and by_kind["matmul"].time.cycles == 12 * 100
    assert by_kind["permute"].time is not None and by_kind["permute"].time.cycles == 0
    assert by_kind["softmax"].time is None
    untimed = {u["kind"] for u in summary(graph, rows)["untimed"]}  # type: ignore[union-attr]
    assert untimed == {"softmax", "layernorm", "gelu", "bias", "add", "gather"}
