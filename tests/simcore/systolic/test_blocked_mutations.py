"""Mutation check of the block-level timing: each mutant is a fresh copy of simcore with one
fault put into an engine, the link, the counts or the parser (a Rewrite of one function's syntax
tree), and a fixed battery must catch it: the fast engine against the reference engine and the
reference's counts against the loop-structure counts on seeded random cases, the audit of the
reference timeline, and two cases worked by hand."""

from __future__ import annotations

import random
from fractions import Fraction
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

MUTANTS: dict[str, tuple[Rewrite, ...]] = {
    "the reference engine forgets the link's latency": (
        Rewrite("systolic.blocked.reference", "run_reference", "op.end + latency", "op.end"),
    ),
    "the fast engine forgets the latency of loads": (
        Rewrite("systolic.blocked.fast", "_Engine.step", "lf + lat", "lf"),
    ),
    "the link forgets its set-up per request": (
        Rewrite("memory.link", "Link.occupancy", "self.setup + $x", "$x"),
    ),
    "the machine file's latency is dropped": (
        Rewrite(
            "systolic.machine_parse", "_dram", "Link(rate, latency, setup)", "Link(rate, 0, setup)"
        ),
    ),
    "the fast engine jumps before the state recurs": (
        Rewrite("systolic.blocked.fast", "_period", "_normal(before) == norm", "True"),
    ),
    "single buffering lends a second slot in the reference engine": (
        Rewrite(
            "systolic.blocked.reference", "Tiles.enter", "self.runs % self.count", "self.runs % 2"
        ),
    ),
    "a drain does not wait for its block's last step": (
        Rewrite(
            "systolic.blocked.reference",
            "Program.drain",
            "Op(what, block, elements, after=[last_compute], slot=c.slot, tile=$t)",
            "Op(what, block, elements, after=[], slot=c.slot, tile=$t)",
        ),
    ),
    "the fast engine loads a resident tile's blocks again on every pass": (
        Rewrite(
            "systolic.blocked.fast",
            "_Engine._changes",
            "return (new_tile, sweep)",
            "return (new_tile, True)",
        ),
    ),
    "counts forget that C revisits read partial sums back": (
        Rewrite("systolic.blocked.counts", "block_counts", "m * n * (visits - 1)", "0"),
    ),
    "the reference reads back partial sums of the first k block too": (
        Rewrite("systolic.blocked.reference", "_emit_step", "k > 0", "k >= 0"),
    ),
    "a block's tiles stream before their blocks are in place": (
        Rewrite(
            "systolic.blocked.stream",
            "stationary_tile",
            "max(t, load + kt, g)",
            "max(t, load + kt)",
        ),
        Rewrite("systolic.blocked.stream", "output_tile", "max($t, $r, g, 0)", "max($t, $r, 0)"),
    ),
    "the fast engine's blocks do not wait for their operands": (
        Rewrite(
            "systolic.blocked.fast", "_Engine.step", "gate(arr, fetch, streamed, self.p)", "arr"
        ),
    ),
    "each block restarts the array's recurrence (its tiles overlap the previous block's)": (
        Rewrite(
            "systolic.blocked.reference",
            "run_reference",
            "time_step(op, ops, design, states[op.lane])",
            "time_step(op, ops, design, initial_state(design))",
        ),
    ),
    "the lanes of a batch do not share the link in the fast engine": (
        Rewrite("systolic.blocked.fast", "_Engine.step_lanes", "lf = sub[0]", ""),
    ),
    "the reference engine runs every lane's steps on one array": (
        Rewrite(
            "systolic.blocked.reference",
            "run_reference",
            "states[op.lane] = time_step(op, ops, design, states[op.lane])",
            "states[0] = time_step(op, ops, design, states[0])",
        ),
    ),
    "each lane has the whole store ports": (
        Rewrite(
            "systolic.machine",
            "SystolicMachine.port_share.split",
            "Buffer(buffer.capacity, buffer.read_width / lanes, buffer.write_width / lanes)",
            "buffer",
        ),
    ),
    "the lanes' tiles are counted once in the stores": (
        Rewrite("systolic.blocked.schedule", "footprints", "$x * slots * copies", "$x * slots"),
    ),
    "the next block's tiles wait for the previous block to end (the array empties)": (
        Rewrite(
            "systolic.blocked.fast",
            "_Engine.step",
            "gate(arr, fetch, streamed, self.p)",
            "gate(arr, fetch, max(streamed, ce), self.p)",
        ),
    ),
}


def _machine_dict(rng: random.Random) -> dict[str, Any]:
    layouts = [
        ({"spad": ["a", "b"]}, True),
        ({"i": ["a"], "f": ["b"], "o": ["c"]}, False),
        ({"s": ["a", "b", "c"]}, False),
    ]
    holds, accumulator = rng.choice(layouts)

    def port(capacity: int) -> dict[str, Any]:
        return {
            "capacity": f"{capacity} words",
            "read_width": rng.choice([1, 2, 8]),
            "write_width": rng.choice([1, 2, 8]),
        }

    data: dict[str, Any] = {
        "name": "random",
        "array": {
            "rows": rng.randint(1, 3),
            "cols": rng.randint(1, 3),
            "dataflow": rng.choice(["ws", "os", "is"]),
            "clock": "1 GHz",
        },
        "words": {"accumulator_bits": rng.choice([8, 32])},
        "buffers": {
            name: {"holds": ops, **port(rng.randint(200, 600))} for name, ops in holds.items()
        },
        "dram": {
            "bandwidth": rng.choice([1, 2, 1.5]),
            "latency": rng.randint(1, 12),
            "setup": rng.randint(1, 3),
        },
    }
    if accumulator:
        data["accumulator"] = port(rng.randint(100, 300))
    return data


def battery(copy: ModuleType) -> list[str]:
    """What the checks say of a copy: a list of failures (empty: all pass)."""
    failures: list[str] = []
    Shape = copy.shape.Shape
    sy = copy.systolic
    blocked = copy.systolic.blocked
    parse = copy.systolic.machine_parse.parse_machine
    rng = random.Random(11)
    cases = 0
    while cases < 40:
        machine = parse(_machine_dict(rng))
        shape = Shape(rng.randint(1, 9), rng.randint(1, 9), rng.randint(1, 9))
        schedule = blocked.schedule.BlockSchedule(
            rng.randint(1, shape.m),
            rng.randint(1, shape.k),
            rng.randint(1, shape.n),
            rng.choice(blocked.schedule.LOOP_ORDERS),
            (rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)),
            (rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 3)),
        )
        if not blocked.schedule.feasibility(machine, schedule, shape).ok:
            continue
        cases += 1
        design = sy.model.SystolicDesign(machine.array, rng.choice(["ws", "os", "is"]))
        timeline = blocked.reference.run_reference(machine, design, schedule, shape)
        fast = blocked.fast.run_fast(machine, design, schedule, shape)
        if fast.cycles != timeline.cycles:
            failures.append(f"fast {fast.cycles} != reference {timeline.cycles}")
        counts = blocked.counts.block_counts(machine, design, schedule, shape)
        found = blocked.reference.reference_dram(timeline)
        if (found["c_reads"], found["a_reads"], found["b_reads"]) != (
            counts.dram.c_reads,
            counts.dram.a_reads,
            counts.dram.b_reads,
        ):
            failures.append(f"counts {counts.dram} != reference {found}")
        problems = blocked.audit.audit(machine, design, timeline)
        if problems:
            failures.append(problems[0])
    failures += _by_hand(copy)
    failures += _long_runs(copy)
    failures += _batches(copy)
    return failures


def _batches(copy: ModuleType) -> list[str]:
    """Batches over lanes: the engines agree, the audit is clean, the bound holds, and the
    lanes' tiles all count in the stores."""
    blocked, failures = copy.systolic.blocked, []
    rng = random.Random(3)
    cases = 0
    while cases < 25:
        data = _machine_dict(rng)
        data["array"].update(cols=rng.choice([2, 4]), arrays=2)
        machine = copy.systolic.machine_parse.parse_machine(data)
        lanes = rng.choice([1, 2])
        batch = blocked.schedule.Batch(lanes * rng.randint(1, 3), lanes)
        shape = copy.shape.Shape(rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6))
        schedule = blocked.schedule.BlockSchedule(
            rng.randint(1, shape.m),
            rng.randint(1, shape.k),
            rng.randint(1, shape.n),
            rng.choice(blocked.schedule.LOOP_ORDERS),
            (rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)),
            (rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 3)),
        )
        if not blocked.schedule.feasibility(machine, schedule, shape, lanes).ok:
            continue
        cases += 1
        array = machine.lane_array(lanes)
        design = copy.systolic.model.SystolicDesign(array, rng.choice(["ws", "os", "is"]))
        timeline = blocked.reference.run_reference(machine, design, schedule, shape, batch)
        fast = blocked.fast.run_fast(machine, design, schedule, shape, batch).cycles
        if fast != timeline.cycles:
            failures.append(f"batch: fast {fast} != reference {timeline.cycles}")
        problems = blocked.audit.audit(machine, design, timeline, lanes)
        if problems:
            failures.append(f"batch: {problems[0]}")
        least = blocked.bounds.bound(machine, shape, design, batch).cycles
        if timeline.cycles < least:
            failures.append(f"batch: {timeline.cycles} cycles under the bound {least}")
    failures += _two_lanes_need_two_tiles(copy)
    return failures


def _two_lanes_need_two_tiles(copy: ModuleType) -> list[str]:
    data = {
        "name": "pair",
        "array": {"rows": 2, "cols": 4, "arrays": 2, "dataflow": "ws", "clock": "1 GHz"},
        "buffers": {
            "s": {
                "holds": ["a", "b", "c"],
                "capacity": "40 words",
                "read_width": 8,
                "write_width": 8,
            }
        },
        "dram": {"bandwidth": "2 words/cycle"},
    }
    machine = copy.systolic.machine_parse.parse_machine(data)
    shape = copy.shape.Shape(2, 2, 2)  # 4 words each of A, B and C (8-bit sums)
    one = copy.systolic.blocked.schedule.BlockSchedule(2, 2, 2, "mnk", (1, 1, 1))
    fits = copy.systolic.blocked.schedule.feasibility
    if not fits(machine, one, shape, 1).ok or fits(machine, one, shape, 4).ok:
        return ["12 words fit 40 once but not four times"]
    return []


def _long_runs(copy: ModuleType) -> list[str]:
    """Grids of 10 blocks a side, where the fast engine jumps: it must still equal the reference."""
    blocked, failures = copy.systolic.blocked, []
    rng = random.Random(5)
    for order, span in (
        ("mnk", (3, 3, 3)),
        ("kmn", (3, 3, 3)),
        ("nmk", (0, 3, 3)),
        ("knm", (3, 3, 1)),
    ):
        data = _machine_dict(rng)
        data.pop("accumulator", None)
        data["buffers"] = {
            "s": {
                "holds": ["a", "b", "c"],
                "capacity": "4096 words",
                "read_width": 4,
                "write_width": 4,
            }
        }
        machine = copy.systolic.machine_parse.parse_machine(data)
        design = copy.systolic.model.SystolicDesign(machine.array, "ws")
        shape = copy.shape.Shape(40, 40, 40)
        schedule = blocked.schedule.BlockSchedule(4, 4, 4, order, (2, 2, 2), span)
        fast = blocked.fast.run_fast(machine, design, schedule, shape).cycles
        slow = blocked.reference.run_reference(machine, design, schedule, shape).cycles
        if fast != slow:
            failures.append(f"{order} {span}: fast {fast} != reference {slow}")
    return failures


def _by_hand(copy: ModuleType) -> list[str]:
    machine = copy.systolic.machine_parse.parse_machine(
        {
            "name": "tiny",
            "array": {"rows": 2, "cols": 2, "dataflow": "ws", "clock": "1 GHz"},
            "buffers": {
                "spad": {
                    "holds": ["a", "b"],
                    "capacity": "64 words",
                    "read_width": 8,
                    "write_width": 8,
                }
            },
            "accumulator": {"capacity": "64 B", "read_width": 8, "write_width": 8},
            "dram": {"bandwidth": "1 words/cycle", "latency": 3, "setup": 1},
        }
    )
    design = copy.systolic.model.SystolicDesign(machine.array, "ws")
    shape = copy.shape.Shape(2, 2, 2)
    compute = copy.systolic.closed_form.cycles(design, shape)
    schedule = copy.systolic.blocked.schedule.BlockSchedule(2, 2, 2, "mnk", (1, 1, 1))
    got = copy.systolic.blocked.evaluate(machine, design, schedule, shape).cycles
    if machine.memory.dram.words_per_cycle != Fraction(1) or got != 13 + compute + 5 + 3:
        return [f"worked case: {got} cycles, expected {13 + compute + 8}"]
    return []


def test_the_battery_passes_on_the_real_code() -> None:
    assert battery(load_simcore_copy()) == []


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught(name: str) -> None:
    assert battery(load_simcore_copy(MUTANTS[name])), f"mutant not caught: {name}"
