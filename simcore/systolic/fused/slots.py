"""Where a fused schedule's blocks live, and what each operation costs on the machine.

A slot holds one block. Its role says which store holds it: an operand block of A or B ('a',
'b': the buffer holding that operand, in operand words), a block of sums ('c': the accumulator
store in accumulator words, or the buffer holding c at accumulator_bits / word_bits words an
element). A fused group's intermediate, activated, is an A operand of the next product ('a').
Feasibility is arithmetic on the slots, before any timing: every store must hold the slots it
has; `over` lists each store over its capacity with the words over.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import transfer
from simcore.systolic.blocked.stream import block_tiles, stream_params
from simcore.systolic.closed_form import cycles as array_cycles
from simcore.systolic.fused.ops import ARRAY, LINK, VECTOR, ArrayWork, Op
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign, traffic
from simcore.systolic.vector_unit import VectorUnit


def store_key(machine: SystolicMachine, role: str) -> str:
    store = machine.memory.store_of(role)
    return "accumulator" if store is None else f"buffers.{store.name}"


def capacities(machine: SystolicMachine) -> dict[str, int]:
    found = {f"buffers.{s.name}": s.capacity for s in machine.memory.stores}
    if machine.memory.accumulator is not None:
        found["accumulator"] = machine.memory.accumulator.capacity
    return found


@dataclass(frozen=True)
class Over:
    """One store over its capacity: words needed beyond it."""

    store: str
    words: Fraction
    capacity: int

    def describe(self) -> str:
        need = self.words + self.capacity
        return f"{self.store}: {float(self.words):.6g} words over its {self.capacity} (needs {float(need):.6g})"


class Slots:
    """The slots of a schedule, each with its store and its words."""

    def __init__(self, machine: SystolicMachine) -> None:
        self.machine = machine
        self.stores: list[str] = []
        self.words: list[Fraction] = []
        self.wide: list[Fraction] = []  # a slot's words an element
        self.names: dict[str, tuple[int, int]] = {}

    def take(self, name: str, role: str, elements: int, count: int = 1) -> int:
        key = store_key(self.machine, role)
        wide = Fraction(
            self.machine.accumulator_words if role == "c" and key != "accumulator" else 1
        )
        first = len(self.stores)
        for _ in range(count):
            self.stores.append(key)
            self.words.append(Fraction(elements) * wide)
            self.wide.append(wide)
        self.names[name] = (first, count)
        return first

    def __len__(self) -> int:
        return len(self.stores)

    def need(self) -> dict[str, Fraction]:
        found = dict.fromkeys(capacities(self.machine), Fraction(0))
        for key, words in zip(self.stores, self.words):
            found[key] += words
        return found

    def over(self) -> tuple[Over, ...]:
        caps = capacities(self.machine)
        return tuple(
            Over(key, need - caps[key], caps[key])
            for key, need in self.need().items()
            if need > caps[key]
        )


@lru_cache(maxsize=4096)
def block_time(machine: SystolicMachine, design: SystolicDesign, m: int, k: int, n: int) -> int:
    """The array's time for one block: its sub-GEMM by the array's closed form, stretched where a
    store cannot deliver the block's reads or take its writes at its width (the array empties
    between blocks)."""
    time = array_cycles(design, Shape(m, k, n))
    t = traffic(design.used, m, k, n, design.dataflow)
    memory = machine.memory
    c_wide = 1 if memory.store_of("c") is None else machine.accumulator_words
    demands = (
        ("a", t.a_reads, 0),
        ("b", t.b_reads, 0),
        ("c", t.psum_readbacks * c_wide, (t.psum_writes + t.c_writes) * c_wide),
    )
    reads: dict[str, Fraction] = {}
    writes: dict[str, Fraction] = {}
    for role, read, write in demands:
        key = store_key(machine, role)
        reads[key] = reads.get(key, Fraction(0)) + read
        writes[key] = writes.get(key, Fraction(0)) + write
    ports = {f"buffers.{s.name}": s.buffer for s in memory.stores}
    if memory.accumulator is not None:
        ports["accumulator"] = memory.accumulator
    for key, words in reads.items():
        time = max(time, ports[key].read_cycles(words))
    for key, words in writes.items():
        time = max(time, ports[key].write_cycles(words))
    return time


class Costs:
    """Operations with their durations on one machine, design and vector unit."""

    def __init__(
        self, machine: SystolicMachine, design: SystolicDesign, vector: VectorUnit
    ) -> None:
        self.machine, self.design, self.vector = machine, design, vector
        self.latency = machine.memory.dram.latency

    def link(
        self,
        kind: str,
        what: str,
        slot: int,
        tensor: str,
        rows: tuple[int, int],
        cols: tuple[int, int],
    ) -> Op:
        """A transfer of a block: 'load' (what: 'a' or 'b', into its slot), 'back' (partial
        sums read back), 'drain' (outputs) or 'spill' (partial sums written)."""
        elements = (rows[1] - rows[0]) * (cols[1] - cols[0])
        words, rate = transfer(self.machine, what, elements)
        duration = self.machine.memory.dram.occupancy(words, rate)
        into = kind in ("load", "back")
        reads, writes = ((), (slot,)) if into else ((slot,), ())
        return Op(
            LINK,
            kind,
            duration,
            reads,
            writes,
            self.latency,
            tensor,
            rows,
            cols,
            words,
            elements,
            what,
        )

    def compute(self, a: int, b: int, c: int, fresh: bool, m: int, k: int, n: int) -> Op:
        """C (+)= A B on the array; a fresh C block is only written. Its duration is the block's
        time alone (the array's work it counts); the engines time its tiles in the stream."""
        duration = block_time(self.machine, self.design, m, k, n)
        reads = (a, b) if fresh else (a, b, c)
        held = {"ws": 1, "is": 0}.get(self.design.dataflow, -1)
        work = ArrayWork(
            block_tiles(self.machine, self.design, m, k, n), stream_params(self.design), held
        )
        return Op(
            ARRAY,
            "compute",
            duration,
            reads,
            (c,),
            0,
            "",
            (0, m),
            (k, n),
            elements=m * k * n,
            work=work,
        )

    def elementwise(
        self,
        steps: tuple[str, ...],
        source: int,
        into: int,
        extra: tuple[int, ...],
        rows: int,
        cols: int,
        source_role: str,
        into_role: str,
    ) -> Op:
        """The vector unit's steps on a block: reads it (and a bias or residual block), writes
        the result (in place, or as an operand block of the next product)."""
        elements = rows * cols
        acc = self.machine.accumulator_words
        read = Fraction(elements) * (acc if source_role == "c" else 1)
        write = Fraction(elements) * (acc if into_role == "c" else 1)
        duration = self.vector.cycles(steps, elements, read, write)
        return Op(
            VECTOR,
            "vector",
            duration,
            (source, *extra),
            (into,),
            0,
            "+".join(steps),
            (0, rows),
            (0, cols),
            elements=elements,
        )
