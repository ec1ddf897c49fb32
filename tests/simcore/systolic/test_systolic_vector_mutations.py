"""Mutation check of the systolic vector unit's timing: each mutant is a fresh copy of simcore
with one fault put into the recurrence, the chunk durations or the machine file's [vector] table
(a Rewrite of one function's syntax tree), and a fixed battery must catch it: the recurrence
against the cycle-level reference on seeded random cases, long runs where the periodic jumps
take over, and two runs worked by hand."""

from __future__ import annotations

import random
from fractions import Fraction
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

STREAM = "systolic.vector_stream"
MUTANTS: dict[str, tuple[Rewrite, ...]] = {
    "the vector unit does not wait for its previous chunk": (
        Rewrite(STREAM, "_recurrence", "max(done, ready.pop(i))", "ready.pop(i)"),
    ),
    "a store does not wait for its chunk's work": (
        Rewrite(STREAM, "_recurrence", "max(link, done)", "link"),
    ),
    "a load's data is in place without the latency": (
        Rewrite(
            STREAM,
            "_recurrence",
            "ready[i + buffers] = link + latency",
            "ready[i + buffers] = link",
        ),
    ),
    "the jump skips one period too many": (
        Rewrite(
            STREAM, "_recurrence", "(n - 1 - buffers - i) // period", "(n - buffers - i) // period"
        ),
    ),
    "the port share is not a limit": (Rewrite(STREAM, "chunk_of", "math.ceil(reads / port)", "0"),),
    "short rows are not packed side by side": (
        Rewrite(STREAM, "chunk_of", "max(1, unit.lanes // task.cols)", "1"),
    ),
    "the reduction trees cost nothing": (
        Rewrite(
            "systolic.vector_ops",
            "VectorTask.row_cycles",
            "class_cycles(work.row_ops, special) + work.reductions * tree",
            "class_cycles(work.row_ops, special)",
        ),
    ),
    "the machine file's port share is ignored": (
        Rewrite("systolic.machine_parse", "_vector", "share * width", "width"),
    ),
}
KINDS = [
    ("softmax", {"scaled": True, "causal": True}),
    ("layernorm", {}),
    ("rmsnorm", {}),
    ("gelu", {}),
    ("add", {}),
    ("bias", {}),
    ("reduce", {"fn": "max"}),
    ("gather", {}),
]


def _machine(copy: ModuleType, rng: random.Random) -> Any:
    data = {
        "name": "random",
        "array": {"rows": 2, "cols": 2, "dataflow": "ws", "clock": "1 GHz"},
        "buffers": {
            "s": {
                "holds": ["a", "b", "c"],
                "capacity": f"{rng.randint(300, 3000)} words",
                "read_width": rng.choice([1, 2, 8]),
                "write_width": rng.choice([1, 2, 8]),
            }
        },
        "dram": {
            "bandwidth": rng.choice([1, 2, 1.5, 4]),
            "latency": rng.randint(0, 12),
            "setup": rng.randint(0, 3),
        },
        "vector": {
            "lanes": rng.choice([1, 2, 4, 16]),
            "special_cycles": rng.randint(1, 5),
            "port_share": rng.choice([1, 0.5, 0.25]),
        },
    }
    return copy.systolic.machine_parse.parse_machine(data)


def battery(copy: ModuleType) -> list[str]:
    """What the checks say of a copy: a list of failures (empty: all pass)."""
    ops, stream = copy.systolic.vector_ops, copy.systolic.vector_stream
    reference = copy.systolic.vector_reference.reference_cycles
    rng, failures = random.Random(3), []
    for _ in range(60):
        machine = _machine(copy, rng)
        kind, options = rng.choice(KINDS)
        task = ops.VectorTask(
            kind, rng.randint(1, 3), rng.randint(1, 30), rng.randint(1, 24), **options
        )
        for plan in stream.plans(machine, task)[:3]:
            small = stream.VectorPlan(
                max(1, plan.chunk_rows // rng.choice([1, 4, 100])), plan.buffers
            )
            fast = stream.vector_run(machine, task, small).cycles
            slow = reference(machine, task, small)
            if fast != slow:
                failures.append(f"{task} {small}: recurrence {fast} != reference {slow}")
    return failures + _by_hand(copy)


def _by_hand(copy: ModuleType) -> list[str]:
    """Relu, 8 rows of 8 on 4 lanes, a link of 4 words a cycle: load 16, work 16, store 16;
    a softmax row of 8 with a latency of 5: 2 + 5 + (2 x 11 + 4) + 2 + 5. And tpuv4i's unit:
    1024 lanes, half of VMEM's 1024 words a cycle."""
    stream, ops = copy.systolic.vector_stream, copy.systolic.vector_ops
    data = copy.systolic.archs.arch_dict("gemmini")
    data["dram"] = {"bandwidth": "4 words/cycle", "latency": 0}
    data["vector"] = {"lanes": 4, "special_cycles": 4, "port_share": 1}
    machine = copy.systolic.machine_parse.parse_machine(data)
    relu = stream.vector_run(machine, ops.VectorTask("relu", 1, 8, 8), stream.VectorPlan(8, 1))
    data["dram"]["latency"] = 5
    machine = copy.systolic.machine_parse.parse_machine(data)
    row = ops.VectorTask("softmax", 1, 1, 8)
    softmax = stream.vector_run(machine, row, stream.VectorPlan(1, 1))
    tpu = copy.systolic.machine_parse.parse_machine(copy.systolic.archs.arch_dict("tpuv4i"))
    found = (relu.cycles, softmax.cycles, tpu.vector_unit.lanes, tpu.vector_unit.port)
    want = (48, 2 + 5 + 26 + 2 + 5, 1024, Fraction(512))
    return [] if found == want else [f"worked cases: {found}, expected {want}"]


def test_the_battery_passes_on_the_real_code() -> None:
    assert battery(load_simcore_copy()) == []


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught(name: str) -> None:
    assert battery(load_simcore_copy(MUTANTS[name])), f"mutant not caught: {name}"
