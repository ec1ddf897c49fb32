"""An independent check of a timed program (`reference.Timeline`): every rule of the timing is
checked again from the machine's raw parameters, without the link, the engines or their
helpers, as the GA-1 hazard replay checks a trace: the link's requests, and every array tile
against the tile before it, whatever its block (`audit_tiles`). Returns the violations found
(none: the timeline obeys the rules)."""

from __future__ import annotations

import math
from fractions import Fraction

from simcore.systolic.blocked.audit_tiles import audit_tiles
from simcore.systolic.blocked.reference import Op, Timeline
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign

WORDS_PER_ELEMENT = {
    "load-a": "word",
    "load-b": "word",
    "c-back": "acc",
    "c-partial": "acc",
    "c-final": "out",
}


def _expected_cycles(machine: SystolicMachine, op: Op) -> int:
    bits = {"word": machine.word_bits, "acc": machine.accumulator_bits, "out": machine.output_bits}
    words = Fraction(op.elements * bits[WORDS_PER_ELEMENT[op.kind]], machine.word_bits)
    dram = machine.memory.dram
    operand = "c" if op.kind.startswith("c-") else op.kind[-1]
    store = next((s for s in machine.memory.stores if operand in s.holds), None)
    port = machine.memory.accumulator if store is None else store.buffer
    assert port is not None
    width = port.read_width if op.kind in ("c-partial", "c-final") else port.write_width
    held = (
        Fraction(1)
        if store is None or operand != "c"
        else Fraction(machine.accumulator_bits, machine.word_bits)
    )
    rate = (
        min(dram.words_per_cycle, width * words / op.elements / held)
        if op.elements
        else dram.words_per_cycle
    )
    return dram.setup + math.ceil(words / rate)


def audit(
    machine: SystolicMachine, design: SystolicDesign, timeline: Timeline, lanes: int = 1
) -> list[str]:
    """The violations of the timing rules in the timeline (`lanes`: of a batch's)."""
    problems: list[str] = []
    ops = timeline.ops
    latency = machine.memory.dram.latency
    link_end = end = 0
    for n, op in enumerate(ops):
        if op.kind == "compute":
            end = max(end, op.end)
            continue
        expected = _expected_cycles(machine, op)
        if op.end - op.start != expected:
            problems.append(
                f"op {n} {op.kind}: {op.end - op.start} cycles on the link, expected {expected}"
            )
        if op.start < link_end:
            problems.append(
                f"op {n} {op.kind}: starts at {op.start} while the link is busy until {link_end}"
            )
        if op.ready != op.end + latency:
            problems.append(
                f"op {n} {op.kind}: in place at {op.ready}, expected {op.end + latency}"
            )
        link_end = op.end
        for d in op.after:
            needed = ops[d].end + (0 if ops[d].kind == "compute" else latency)
            if op.start < needed:
                problems.append(
                    f"op {n} {op.kind}: starts at {op.start} before op {d}'s data at {needed}"
                )
        for d in op.slot_after:
            if op.start < ops[d].end:
                problems.append(
                    f"op {n} {op.kind}: takes a slot at {op.start} before op {d} frees it at {ops[d].end}"
                )
        end = max(end, op.end + latency)
    problems += _computes(ops)
    problems += audit_tiles(machine, design, ops, lanes)
    if timeline.cycles != end:
        problems.append(f"the run ends at {timeline.cycles}, its last event at {end}")
    return problems


def _computes(ops: tuple[Op, ...]) -> list[str]:
    """Each step waits for the loads issued since the previous step; a drain waits for the last
    step of its lane before it (the block's last)."""
    problems = []
    pending: list[int] = []
    last: dict[int, int] = {}  # lane -> its last step
    for n, op in enumerate(ops):
        if op.kind in ("c-partial", "c-final") and op.lane in last:
            last_compute = last[op.lane]
            if op.start < ops[last_compute].end:
                problems.append(
                    f"op {n}: drains C at {op.start} before its last step ends at {ops[last_compute].end}"
                )
        if op.kind in ("load-a", "load-b", "c-back"):
            pending.append(n)
        elif op.kind == "compute":
            if sorted(op.after) != pending:
                problems.append(
                    f"op {n}: waits for {sorted(op.after)}, the loads before it are {pending}"
                )
            pending, last[op.lane] = [], n
    return problems
