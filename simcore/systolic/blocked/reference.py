"""The reference engine: the block schedule as a program of operations, timed one by one.

The program walks the blocks in the loop order. Every step computes one block C[i,j] += A[i,k]
B[k,j] on the array. An operand's tile (one block, or the blocks its span reaches: see
`schedule`) is replaced when a loop outside its span moves it on. Before a step, in this order,
the link is asked to:
  1. load the A block, if it is not in A's tile yet (a new tile starts empty);
  2. load the B block, likewise;
  3. when C's tile is replaced: drain every block of the previous tile (partial sums, at
     accumulator width, if their last k block is not the GEMM's last; else the outputs, at
     output width), then, for a C block not in its tile yet, read its partial sums back if an
     earlier k block has already been added into it (its k block is not 0);
and after the last step it drains the last C tile. A tile occupies a slot of its operand: with
single buffering the new tile takes the one slot, with double buffering the slots alternate.
The timing rule:
  * the link serves requests one at a time in the order above; a request starts when the link
    is free and its slot is free, and its data is in place `latency` cycles after the link has
    moved it (`Link.occupancy`);
  * an A or B slot is free once the last step reading its previous tile has finished; a C slot
    is free once the last drain of its previous tile has left it;
  * a step's tiles follow the previous step's tiles on the array (`stream`: the array's own
    recurrence across blocks); each tile's stationary fetch waits for its operand's block, its
    stream for the streamed blocks and its C block (a new C block without partial sums to read
    back needs only its slot); the step is finished when its last tile is;
  * the run ends when the last step has finished and the last write is complete.
Stall cycles are the cycles memory adds: the run's cycles minus those of the same tile stream
with every DRAM transfer instant (`compute_cycles`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import (
    INDEXED_BY,
    SINGLE,
    Batch,
    BlockSchedule,
    check_design,
    transfer,
)
from simcore.systolic.blocked.stream import (
    STATIONARY,
    TileKind,
    block_tile_list,
    gate,
    initial_state,
    stream_params,
    tile_step,
)
from simcore.systolic.closed_form import NEG
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
    duration: int = 0  # link: cycles of occupancy
    start: int = 0  # compute: its first tile's first event
    end: int = 0  # link: occupancy end; compute: the latest tile end so far (the step is done)
    ready: int = 0  # link: data in place (end + latency); compute: end
    slot: int = 0
    dims: tuple[int, int, int] = (0, 0, 0)  # a step's block, bm x bk x bn
    tile: int = 0  # a transfer's tile of its operand (a step's: of C), numbered as they come in
    k: int = 0  # a step's k block
    kinds: list[TileKind] = field(default_factory=list)  # a step's array tiles
    tiles: list[tuple[Any, ...]] = field(default_factory=list)  # their timings (`stream.tile_step`)
    lane: int = 0  # a step's lane of arrays


@dataclass
class Tiles:
    """An operand's on-chip tiles: the one in use (named by the indices of its loops outside the
    span), the blocks of it already in, how many tiles have come in, and for each slot the op
    that frees it (the last step reading its tile, or the last drain moving it out)."""

    count: int
    instance: tuple[int, ...] | None = None
    loaded: dict[tuple[int, int], int] = field(default_factory=dict)  # block -> elements
    runs: int = 0
    freed_by: dict[int, int] = field(default_factory=dict)
    wait: list[int] = field(default_factory=list)

    def enter(self, instance: tuple[int, ...]) -> None:
        """A new tile takes the next slot; its blocks wait for that slot to be free."""
        slot = self.runs % self.count
        self.runs += 1
        self.instance, self.loaded = instance, {}
        freed = self.freed_by.get(slot)
        self.wait = [] if freed is None else [freed]

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

    def __init__(self, machine: SystolicMachine, lanes: int = 1) -> None:
        self.machine = machine
        self.lane_machine = machine.port_share(lanes)  # the store ports a lane's array has
        self.ops: list[Op] = []

    def emit(self, op: Op, what: str | None = None) -> int:
        if what is not None:  # a transfer: its words and its cycles on the link
            op.words, rate = transfer(self.machine, what, op.elements)
            op.duration = self.machine.memory.dram.occupancy(op.words, rate)
        self.ops.append(op)
        return len(self.ops) - 1

    def drain(self, c: Tiles, last_compute: int, final: bool) -> None:
        """Drain every block of the C tile in use once its last step has finished."""
        what = "c-final" if final else "c-partial"
        for block, elements in c.loaded.items():
            op = Op(what, block, elements, after=[last_compute], slot=c.slot, tile=c.runs - 1)
            op.lane = self.ops[last_compute].lane
            c.freed_by[c.slot] = self.emit(op, what)


def _instance(
    schedule: BlockSchedule, operand: str, index: dict[str, int], run: int
) -> tuple[int, ...]:
    """The run and the indices of the operand's loops outside its span: they name its tile."""
    span = schedule.span["abc".index(operand)]
    return (run,) + tuple(index[d] for d in INDEXED_BY[operand] if schedule.level(d) < span)


@dataclass
class Lane:
    """A lane's tiles of a, b and c, its last step and that step's k block."""

    tiles: dict[str, Tiles]
    last_compute: int = -1
    last_k: int = 0


def build_program(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    batch: Batch = SINGLE,
) -> list[Op]:
    """The operations of every run: round by round, step by step, lane by lane."""
    s = schedule.clipped(shape)
    kb = s.grid(shape)[1]
    program = Program(machine, batch.lanes)
    lanes = [Lane({x: Tiles(n) for x, n in zip("abc", s.buffering)}) for _ in range(batch.lanes)]
    for run in range(batch.rounds):
        for i, k, j in steps(s, shape):
            for number, lane in enumerate(lanes):
                _emit_step(program, design, s, shape, (run, i, k, j), lane, number)
    for lane in lanes:
        program.drain(lane.tiles["c"], lane.last_compute, lane.last_k == kb - 1)
    return program.ops


def _emit_step(
    program: Program,
    design: SystolicDesign,
    s: BlockSchedule,
    shape: Shape,
    where: tuple[int, int, int, int],
    lane: Lane,
    number: int,
) -> None:
    """A step's transfers (see the module docstring) and its compute on the lane."""
    run, i, k, j = where
    kb = s.grid(shape)[1]
    tiles = lane.tiles
    index = {"m": i, "k": k, "n": j}
    bm, bk, bn = _extent(i, s.bm, shape.m), _extent(k, s.bk, shape.k), _extent(j, s.bn, shape.n)
    data: list[int] = []
    slot_wait: list[int] = []
    for operand, block, elements in (("a", (i, k), bm * bk), ("b", (k, j), bk * bn)):
        t = tiles[operand]
        instance = _instance(s, operand, index, run)
        if t.instance != instance:
            t.enter(instance)
        if block not in t.loaded:
            t.loaded[block] = elements
            op = Op(
                f"load-{operand}", block, elements, slot_after=t.wait, slot=t.slot, tile=t.runs - 1
            )
            data.append(program.emit(op, operand))
    c = tiles["c"]
    instance = _instance(s, "c", index, run)
    if c.instance != instance:
        if c.instance is not None:
            program.drain(c, lane.last_compute, lane.last_k == kb - 1)
        c.enter(instance)
    if (i, j) not in c.loaded:
        c.loaded[(i, j)] = bm * bn
        if k > 0:  # partial sums of earlier k blocks come back
            op = Op("c-back", (i, j), bm * bn, slot_after=c.wait, slot=c.slot, tile=c.runs - 1)
            data.append(program.emit(op, "c-back"))
        else:
            slot_wait.extend(c.wait)
    compute = Op(
        "compute",
        (i, j),
        bm * bk * bn,
        after=data,
        slot_after=slot_wait,
        dims=(bm, bk, bn),
        slot=c.slot,
        tile=c.runs - 1,
        k=k,
        kinds=block_tile_list(program.lane_machine, design, bm, bk, bn),
        lane=number,
    )
    lane.last_compute, lane.last_k = program.emit(compute), k
    for operand in "ab":
        tiles[operand].freed_by[tiles[operand].slot] = lane.last_compute


@dataclass(frozen=True)
class Timeline:
    """The timed program, the run's cycles, the cycles of the same tile stream with every DRAM
    transfer instant (`compute_cycles`) and the stall cycles (the difference)."""

    ops: tuple[Op, ...]
    cycles: int
    compute_cycles: int

    @property
    def stall_cycles(self) -> int:
        return self.cycles - self.compute_cycles


def _operand(op: Op) -> str:
    return "c" if op.kind.startswith("c-") else op.kind[-1]


def time_step(
    op: Op, ops: list[Op], design: SystolicDesign, state: tuple[Any, ...], dram: bool = True
) -> tuple[Any, ...]:
    """Time a step's tiles after the previous step's: each tile's stationary fetch waits for its
    operand's block, its stream for the streamed blocks and its C block (without DRAM: never)."""
    p = stream_params(design)
    held = STATIONARY[design.dataflow]
    fetch_ready = stream_ready = NEG
    if dram:
        for n in op.after:
            if _operand(ops[n]) == held:
                fetch_ready = max(fetch_ready, ops[n].ready)
            else:
                stream_ready = max(stream_ready, ops[n].ready)
        for n in op.slot_after:
            stream_ready = max(stream_ready, _slot_free(ops[n]))
    op.tiles = []
    for kind in op.kinds:
        state = gate(state, fetch_ready, stream_ready, p)
        state, timing = tile_step(state, kind, p)
        op.tiles.append(timing)
    op.start = int(op.tiles[0][0])
    op.end = op.ready = int(state[-1])
    return state


def run_reference(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    batch: Batch = SINGLE,
) -> Timeline:
    """Time the program one operation at a time (see the module docstring); each lane's steps
    follow one another on its own array."""
    check_design(machine, design, batch.lanes)
    ops = build_program(machine, design, schedule, shape, batch)
    latency = machine.memory.dram.latency
    link_free = end = 0
    states = [initial_state(design)] * batch.lanes
    for op in ops:
        if op.kind == "compute":
            states[op.lane] = time_step(op, ops, design, states[op.lane])
        else:
            data = max((ops[n].ready for n in op.after), default=0)
            slot = max((_slot_free(ops[n]) for n in op.slot_after), default=0)
            op.start = max(link_free, data, slot)
            op.end = op.start + op.duration
            op.ready = op.end + latency
            link_free = op.end
        end = max(end, op.ready)
    return Timeline(tuple(ops), end, ideal_cycles(ops, design, batch.lanes))


def ideal_cycles(ops: list[Op], design: SystolicDesign, lanes: int = 1) -> int:
    """The same steps' tiles with every DRAM transfer instant: the arrays' own time."""
    states = [initial_state(design)] * lanes
    copies = [Op(op.kind, op.block, op.elements, kinds=op.kinds, lane=op.lane) for op in ops]
    for op in copies:
        if op.kind == "compute":
            states[op.lane] = time_step(op, copies, design, states[op.lane], dram=False)
    return int(max(state[-1] for state in states))


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
