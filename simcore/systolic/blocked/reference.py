"""The reference engine: the block schedule as a program of operations, timed one by one.

The program walks the blocks in the loop order. Every step computes one block C[i,j] += A[i,k]
B[k,j] on the array. Before a step, in this order, the link is asked to:
  1. load the A block, if it differs from the previous step's;
  2. load the B block, likewise;
  3. when the C block differs from the previous step's: drain the previous C block (partial
     sums, at accumulator width, if its last k block is not the GEMM's last; else the outputs,
     at output width), then read back the new C block's partial sums if an earlier k block has
     already been added into it (its first k block is not 0);
and after the last step it drains the last C block. A block occupies a slot of its operand:
with single buffering the new block takes the one slot, with double buffering the slots
alternate. The timing rule:
  * the link serves requests one at a time in the order above; a request starts when the link
    is free and its slot is free, and its data is in place `latency` cycles after the link has
    moved it (`Link.occupancy`);
  * an A or B slot is free once the last step reading its previous block has finished; a C slot
    is free once the drain of its previous block has left it;
  * a step starts when the previous step has finished and its three blocks are in place (a new
    C block without partial sums to read back needs only its slot) and takes the array's time
    for the block (`block_cycles`);
  * the run ends when the last step has finished and the last write is complete.
Stall cycles are the cycles the array is not computing a block: the run's cycles minus the sum
of the blocks' times.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import BlockSchedule, block_cycles, check_design, transfer
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign


@dataclass
class Op:
    """One operation: a transfer on the link or a step on the array, with its times."""

    kind: str  # load-a, load-b, c-back, c-partial, c-final, compute
    block: tuple[int, int]
    elements: int
    words: Fraction = Fraction(0)
    after: list[int] = field(default_factory=list)  # ops whose data must be in place
    slot_after: list[int] = field(default_factory=list)  # ops that free this op's slot
    duration: int = 0
    start: int = 0
    end: int = 0  # link: occupancy end; compute: last cycle + 1
    ready: int = 0  # link: data in place (end + latency); compute: end
    slot: int = 0
    dims: tuple[int, int, int] = (0, 0, 0)  # a step's block, bm x bk x bn


@dataclass
class Slots:
    """An operand's slots: the block in use, how many blocks have come in, and for each slot
    the op that frees it (the last step reading its block, or the drain moving it out)."""

    count: int
    current: tuple[int, int] | None = None
    elements: int = 0
    runs: int = 0
    freed_by: dict[int, int] = field(default_factory=dict)

    def take(self, block: tuple[int, int], elements: int) -> tuple[int, list[int]]:
        """The slot the next block goes to, and the op it must wait for."""
        slot = self.runs % self.count
        self.runs += 1
        self.current, self.elements = block, elements
        freed = self.freed_by.get(slot)
        return slot, ([] if freed is None else [freed])

    @property
    def slot(self) -> int:
        return (self.runs - 1) % self.count


def steps(schedule: BlockSchedule, shape: Shape) -> list[tuple[int, int, int]]:
    """Block indices (i, k, j) of every step, in loop order."""
    counts = dict(zip("mkn", schedule.grid(shape)))
    loops = [range(counts[d]) for d in schedule.order]
    out = []
    for index in itertools.product(*loops):
        where = dict(zip(schedule.order, index))
        out.append((where["m"], where["k"], where["n"]))
    return out


def _extent(index: int, block: int, size: int) -> int:
    return min(block, size - index * block)


class Program:
    """The operations in issue order, with their dependencies and durations."""

    def __init__(self, machine: SystolicMachine) -> None:
        self.machine = machine
        self.ops: list[Op] = []

    def emit(self, op: Op, what: str | None = None) -> int:
        if what is not None:  # a transfer: its words and its cycles on the link
            op.words, rate = transfer(self.machine, what, op.elements)
            op.duration = self.machine.memory.dram.occupancy(op.words, rate)
        self.ops.append(op)
        return len(self.ops) - 1

    def drain(self, c: Slots, last_compute: int, final: bool) -> None:
        """Drain the C block in use once the last step adding into it has finished."""
        what = "c-final" if final else "c-partial"
        assert c.current is not None
        op = Op(what, c.current, c.elements, after=[last_compute], slot=c.slot)
        c.freed_by[c.slot] = self.emit(op, what)


def build_program(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> list[Op]:
    s = schedule.clipped(shape)
    kb = s.grid(shape)[1]
    program = Program(machine)
    slots = {x: Slots(n) for x, n in zip("abc", s.buffering)}
    last_compute, last_k = -1, 0
    for i, k, j in steps(s, shape):
        bm, bk, bn = _extent(i, s.bm, shape.m), _extent(k, s.bk, shape.k), _extent(j, s.bn, shape.n)
        data: list[int] = []
        slot_wait: list[int] = []
        for operand, block, elements in (("a", (i, k), bm * bk), ("b", (k, j), bk * bn)):
            if slots[operand].current != block:
                slot, free = slots[operand].take(block, elements)
                op = Op(f"load-{operand}", block, elements, slot_after=free, slot=slot)
                data.append(program.emit(op, operand))
        c = slots["c"]
        if c.current != (i, j):
            if c.current is not None:
                program.drain(c, last_compute, last_k == kb - 1)
            slot, free = c.take((i, j), bm * bn)
            if k > 0:  # partial sums of earlier k blocks come back
                op = Op("c-back", (i, j), bm * bn, slot_after=free, slot=slot)
                data.append(program.emit(op, "c-back"))
            else:
                slot_wait.extend(free)
        duration = block_cycles(machine, design, bm, bk, bn)
        compute = Op(
            "compute",
            (i, j),
            bm * bk * bn,
            after=data,
            slot_after=slot_wait,
            duration=duration,
            dims=(bm, bk, bn),
        )
        last_compute, last_k = program.emit(compute), k
        for operand in "ab":
            slots[operand].freed_by[slots[operand].slot] = last_compute
    program.drain(slots["c"], last_compute, last_k == kb - 1)
    return program.ops


@dataclass(frozen=True)
class Timeline:
    """The timed program, the run's cycles, the array's busy cycles and the stall cycles."""

    ops: tuple[Op, ...]
    cycles: int
    compute_cycles: int

    @property
    def stall_cycles(self) -> int:
        return self.cycles - self.compute_cycles


def run_reference(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> Timeline:
    """Time the program one operation at a time (see the module docstring)."""
    check_design(machine, design)
    ops = build_program(machine, design, schedule, shape)
    latency = machine.memory.dram.latency
    link_free = array_free = 0
    end = 0
    for op in ops:
        data = max((ops[n].ready for n in op.after), default=0)
        slot = max((_slot_free(ops[n]) for n in op.slot_after), default=0)
        if op.kind == "compute":
            op.start = max(array_free, data, slot)
            op.end = op.ready = op.start + op.duration
            array_free = op.end
        else:
            op.start = max(link_free, data, slot)
            op.end = op.start + op.duration
            op.ready = op.end + latency
            link_free = op.end
        end = max(end, op.ready)
    busy = sum(op.duration for op in ops if op.kind == "compute")
    return Timeline(tuple(ops), end, busy)


def _slot_free(op: Op) -> int:
    """A slot is free when the step that last read it has finished, or the drain that moved it
    out has left the link."""
    return op.end


def reference_dram(timeline: Timeline) -> dict[str, int]:
    """DRAM elements and requests of the timed program, counted op by op."""
    out = dict.fromkeys(("a_reads", "b_reads", "c_reads", "c_partial_writes", "c_final_writes"), 0)
    requests = dict.fromkeys(("a", "b", "c_read", "c_write"), 0)
    names = {
        "load-a": ("a_reads", "a"),
        "load-b": ("b_reads", "b"),
        "c-back": ("c_reads", "c_read"),
        "c-partial": ("c_partial_writes", "c_write"),
        "c-final": ("c_final_writes", "c_write"),
    }
    for op in timeline.ops:
        if op.kind in names:
            field_name, request = names[op.kind]
            out[field_name] += op.elements
            requests[request] += 1
    out.update({f"{k}_requests": v for k, v in requests.items()})
    return out
