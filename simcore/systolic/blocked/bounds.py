"""Lower bounds that no schedule on the machine beats, per GEMM C = A B (A is M x K, B K x N).

Every operand starts in DRAM and every output ends there, so the array cannot start before a
first request has come in (head = setup + ceil(1 / bandwidth) + latency) and the run cannot end
before the last step's outputs have gone out (tail = setup + ceil(output words / bandwidth) +
latency).

* Compute: a PE does at most one multiply-accumulate a cycle: head + ceil(MKN / (R C)) + tail.
* Array (for a design: its dataflow and its r x c mapping; r' = min(r, K), c' = min(c, N)).
  A tile holds at most r x c of the stationary matrix, and no two points of a grid of points r
  rows and c columns apart fall in one tile, so every stream item (ws: each of the M rows of A)
  passes through at least ceil(K / r') ceil(N / c') tiles, and tiles stream one after the
  other (S_j+1 >= S_j + Ls_j): M ceil(K / r') ceil(N / c') cycles of streams. The tiles that
  meet one of ceil(N / c') columns c apart hold all K of its rows, and a tile's load starts
  kt >= k cycles after the previous one's (L_j+1 >= S_j >= L_j + kt_j): K ceil(N / c') cycles
  of loads, and the last tile still streams (+1). is exchanges M and N; os streams K items
  through each of the ceil(M / r) ceil(N / c) tiles over a grid point. Without a design, the
  least over the dataflows on the whole array. The unblocked GEMM's own time is no bound:
  smaller tiles fill and drain faster.
* Ports (for a design): a tile's stream window is at least the cycles each store port needs for
  the tile's words, and windows follow one another, so every port needs at least its words over
  its width; by the same grid points, ws streams M K ceil(N / c') elements of A, reads every
  weight once (KN) and writes M N ceil(K / r') sums (at their width in a buffer); is the same
  with A and B exchanged (M for N); os reads M K ceil(N / c) of A, K N ceil(M / r) of B and
  writes MN sums.
* Compulsory traffic: every element of A and B comes in at least once and every output leaves
  once: MK + KN + MN elements.
* Traffic for an on-chip capacity of S elements (red-blue pebbling): Smith, Lowery, Langou and
  van de Geijn (A Tight I/O Lower Bound for Matrix Multiplication, 2019) prove that computing
  C := AB + C by the classical algorithm (every product a b computed once, no algebraic tricks)
  with a fast memory of S elements moves at least 2MNK / sqrt(S) - 2S elements between slow and
  fast memory. A run here computes C := AB, reading no initial C; reading it on first use would
  add at most MN transfers, so the run moves at least 2MNK / sqrt(S) - 2S - MN elements. S counts
  every place an element can be held on chip: the capacity of every buffer in elements (a
  partial sum takes at least one word), the accumulator store's entries and four registers per
  PE (stationary, shadow, forwarding and partial sum).
* The link moves one request at a time at most its bandwidth, each element at least
  min(1, accumulator_bits, output_bits / word_bits) words (A and B and the outputs exactly at
  their widths for the compulsory part), each request pays its set-up (at least one each of
  A, B and C), and the run ends after its last write's latency:
  cycles >= 3 setup + ceil(words / bandwidth) + latency.
The bound is the largest of the compute, array, ports and link bounds.

A batch of G independent GEMMs on L lanes (`schedule.Batch`; the design is a lane's) keeps head
and tail once: the first request still precedes every product and the last outputs still
follow the last. Compute counts G M K N products on all the machine's PEs. The array term holds
for each lane's G / L GEMMs, whose tiles follow one another on its array under the same
recurrence. Each lane has 1 / L of every store port, so its windows need its words over W / L:
the lane with G / L GEMMs needs at least G times one GEMM's words over W. The traffic is G
times one GEMM's: restricted to one GEMM's elements, the batch's moves are a run of that GEMM
with the same on-chip capacity, so each GEMM's compulsory and pebbling bounds hold separately;
and each GEMM needs its own three requests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import SINGLE, Batch
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import DATAFLOWS, Mapping, SystolicDesign

REGISTERS_PER_PE = 4


@dataclass(frozen=True)
class Bound:
    compute_cycles: int
    array_cycles: int  # the design's streams and loads (compute's when no design is given)
    port_cycles: int  # the design's store ports (head and tail only when no design is given)
    capacity_elements: int  # S
    compulsory_elements: int
    pebbling_elements: int  # the red-blue pebbling bound for S (may be below compulsory)
    link_words: Fraction  # words the link moves at least
    link_cycles: int

    @property
    def traffic_elements(self) -> int:
        return max(self.compulsory_elements, self.pebbling_elements)

    @property
    def cycles(self) -> int:
        return max(self.compute_cycles, self.array_cycles, self.port_cycles, self.link_cycles)

    @property
    def bound_by(self) -> str:
        """The term that sets the bound: compute, array, ports or memory."""
        terms = (
            (self.link_cycles, "memory"),
            (self.port_cycles, "ports"),
            (self.array_cycles, "array"),
            (self.compute_cycles, "compute"),
        )
        return max(terms, key=lambda t: t[0])[1]


def on_chip_elements(machine: SystolicMachine) -> int:
    memory = machine.memory
    total = sum(store.capacity for store in memory.stores)
    if memory.accumulator is not None:
        total += memory.accumulator.capacity
    return total + REGISTERS_PER_PE * machine.array.pes


def ends(machine: SystolicMachine) -> int:
    """head + tail: the first request in before any product, the last outputs out after."""
    link = machine.memory.dram
    head = link.setup + math.ceil(1 / link.words_per_cycle) + link.latency
    tail = link.setup + math.ceil(machine.output_words / link.words_per_cycle) + link.latency
    return head + tail


def _folds(dim: int, side: int) -> int:
    """ceil(dim / min(side, dim)): the fewest tiles of at most `side` that cover `dim`."""
    return -(-dim // min(side, dim))


def array_streams(dataflow: str, mapping: Mapping, shape: Shape, rounds: int = 1) -> int:
    """The least cycles of the design's tile streams and loads (see the module docstring), for
    `rounds` GEMMs one after the other on the array."""
    m, k, n = shape.m, shape.k, shape.n
    r, c = mapping.rows, mapping.cols
    if dataflow == "os":
        return rounds * k * _folds(m, r) * _folds(n, c)
    cols = n if dataflow == "ws" else m
    streams = rounds * (m if dataflow == "ws" else n) * _folds(k, r) * _folds(cols, c)
    loads = rounds * k * _folds(cols, c) + 1
    return max(streams, loads)


def port_words(dataflow: str, mapping: Mapping, shape: Shape) -> dict[str, tuple[int, int]]:
    """Per operand, the fewest (reads, writes) of its store by the array, in elements."""
    m, k, n = shape.m, shape.k, shape.n
    r, c = mapping.rows, mapping.cols
    if dataflow == "os":
        return {"a": (m * k * _folds(n, c), 0), "b": (k * n * _folds(m, r), 0), "c": (0, m * n)}
    sums = m * n * _folds(k, r)
    if dataflow == "ws":
        return {"a": (m * k * _folds(n, c), 0), "b": (k * n, 0), "c": (0, sums)}
    return {"b": (k * n * _folds(m, c), 0), "a": (k * m, 0), "c": (0, sums)}


def ports(
    machine: SystolicMachine, dataflow: str, mapping: Mapping, shape: Shape, runs: int = 1
) -> int:
    """The busiest store port's cycles for the fewest words the array moves through it (for
    `runs` GEMMs, whatever arrays they run on: the stores are shared)."""
    memory = machine.memory
    wide = Fraction(1) if memory.store_of("c") is None else machine.accumulator_words
    reads: dict[str, Fraction] = {}
    writes: dict[str, Fraction] = {}
    widths = {}
    for operand, (r, w) in port_words(dataflow, mapping, shape).items():
        store = memory.store_of(operand)
        buffer = memory.accumulator if store is None else store.buffer
        assert buffer is not None
        key = "accumulator" if store is None else store.name
        widths[key] = buffer
        scale = wide if operand == "c" else Fraction(1)
        reads[key] = reads.get(key, Fraction(0)) + r * scale * runs
        writes[key] = writes.get(key, Fraction(0)) + w * scale * runs
    return max(
        max(widths[x].read_cycles(reads[x]), widths[x].write_cycles(writes[x])) for x in widths
    )


def bound(
    machine: SystolicMachine,
    shape: Shape,
    design: SystolicDesign | None = None,
    batch: Batch = SINGLE,
) -> Bound:
    """The bound of one GEMM, or of a batch of independent ones (the design is then a lane's)."""
    m, k, n = shape.m, shape.k, shape.n
    runs = batch.runs
    edges = ends(machine)
    compute = edges + -(-shape.macs * runs // machine.array.pes)
    if design is None:
        if batch != SINGLE:
            raise ValueError("a batch's bound needs its lanes' design")
        whole = Mapping(machine.array.rows, machine.array.cols)
        array = edges + min(array_streams(d, whole, shape) for d in DATAFLOWS)
        port = edges + min(ports(machine, d, whole, shape) for d in DATAFLOWS)
    else:
        array = edges + array_streams(design.dataflow, design.used, shape, batch.rounds)
        port = edges + ports(machine, design.dataflow, design.used, shape, runs)
    s = on_chip_elements(machine)
    compulsory = m * k + k * n + m * n
    pebbling = max(0, math.floor(2 * shape.macs / math.sqrt(s) - 2 * s - m * n))
    out_words = machine.output_words
    least = min(Fraction(1), machine.accumulator_words, out_words)
    words = runs * max(m * k + k * n + m * n * out_words, pebbling * least)
    link = machine.memory.dram
    link_cycles = 3 * runs * link.setup + math.ceil(words / link.words_per_cycle) + link.latency
    return Bound(compute, array, port, s, runs * compulsory, runs * pebbling, words, link_cycles)
