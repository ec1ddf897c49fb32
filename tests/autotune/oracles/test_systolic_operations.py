"""A network's operations on the systolic oracle with an architecture: which task each kind
becomes, products by the memory system's block schedules, the rest on the vector unit, and the
refusal without an architecture."""

from __future__ import annotations

import pytest

from autotune.errors import OracleError
from autotune.oracles import get
from autotune.oracles.operations import Operations, timed_by
from autotune.oracles.systolic_memory.machine import arch_machine
from autotune.oracles.systolic_memory.operations import time_operation, vector_task
from simcore.energy import default_technology
from simcore.energy.vector_systolic import vector_cost
from simcore.systolic.vector_stream import best_run
from workloads.graph import Operation


def test_each_kind_becomes_its_task() -> None:
    softmax = Operation("s", "softmax", (2, 4, 8), options=(("scale", 0.5), ("causal", True)))
    task = vector_task(softmax)
    assert task is not None and task.scaled and task.causal and task.total_rows == 8
    append = vector_task(Operation("k", "kv_append", (4096,)))
    assert append is not None and (append.rows, append.cols) == (4, 1024) and append.work().dma
    clip = vector_task(Operation("c", "elementwise", (1, 4, 8), options=(("fn", "Clip"),)))
    assert clip is not None and dict(clip.work().lane_ops) == {"add": 2}
    unknown = Operation("u", "elementwise", (1, 4, 8), options=(("fn", "Bessel"),))
    assert vector_task(unknown) is None and vector_task(Operation("g", "gemm", (4, 4, 4))) is None
    oracle = get("systolic")
    assert oracle.capability(Operations) is not None
    assert timed_by(oracle, softmax) and not timed_by(oracle, unknown)


def test_operations_are_timed_on_the_architecture() -> None:
    machine = arch_machine("gemmini")
    tech = default_technology()
    gelu = Operation("g", "gelu", (1, 64, 96))
    found = time_operation(gelu, machine.system, tech)
    run = best_run(machine.system, vector_task(gelu))  # type: ignore[arg-type]
    assert found.cycles == run.cycles and found.bound_cycles == run.bound
    assert found.energy_pj == pytest.approx(vector_cost(machine.system, run, tech).energy_pj)
    one = time_operation(Operation("p", "gemm", (64, 32, 48)), machine.system, tech)
    heads = time_operation(Operation("h", "matmul", (3, 64, 32, 48)), machine.system, tech)
    assert heads.cycles == 3 * one.cycles and heads.dram_words == 3 * one.dram_words
    assert one.bound_cycles is not None and one.cycles >= one.bound_cycles
    cache = time_operation(Operation("c", "kv_read", (1024,)), machine.system, tech)
    assert cache.cycles == 0 and cache.method.startswith("free")


def test_a_budget_machine_is_refused() -> None:
    oracle = get("systolic")
    with pytest.raises(OracleError, match="arch=NAME"):
        oracle.time_operation(Operation("r", "relu", (1, 4, 4)), oracle.default_machine())  # type: ignore[attr-defined]
