"""A lower bound over the schedules the search can express: the least, over every candidate of
`enumerate.candidates`, of a bound that holds for that candidate alone.

For one schedule s (one GEMM, one lane), the reference engine's rules force a chain of events:

* Head. The first step loads A's first block, then B's (the link serves in issue order and
  starts at cycle 0), so B's block is in place at dA + dB + latency, where dX is the link's
  occupancy for that block (the program's own `transfer` and `Link.occupancy`). The first
  blocks are never edge blocks: they are bm x bk and bk x bn of the clipped schedule. The first
  tile's stream waits for its streamed blocks and, ws and is, for its stationary load: the
  fetch starts (fs) after its block is in, the load no earlier than fs and fetch - kt cycles
  after it, the stream kt cycles after the load (S_0 >= fs + max(kt, fetch)). So S_0 >= ws:
  dA + dB + latency + max(kt, fetch); is: max(dA + dB, dA + max(kt, fetch)) + latency; os:
  dA + dB + latency.
* Streams. Every tile's stream starts no earlier than the previous one's window ends
  (S_j+1 >= S_j + Ls'_j), over every tile of every step on the one array.
* Last tile. The last step's block is the edge block in M, K and N (every loop ends on its last
  index), and its last tile (the last of `stream.block_tiles`) ends at
  S + Ls + rows + cols - 2 at the earliest (its span rows and columns: the fill and drain).
* Tail. After the last step the blocks of the last C tile drain to DRAM one request after the
  other; the run ends when the last is in place: the sum of their occupancies plus latency.

So cycles(s) >= head + (every window but the last) + the last tile's Ls + rows + cols - 2 +
tail. Each term is the schedule's own and exact, so no edge case of another schedule (a 1 x 1
last tile, a one-element first block) weakens it. Its bound is the largest of this chain, its
own link and array bound (`enumerate.own_bound`) and the machine's bound (`bounds.bound`).

The least of these over the candidates is a lower bound on the cycles of every candidate, and so
of the best schedule the search can return; it is no bound on schedules outside the candidates
(other block sides). Candidates with one `run_key` run alike, so one of each is enough.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.shape import Shape
from simcore.systolic.blocked.bounds import bound
from simcore.systolic.blocked.counts import block_parts
from simcore.systolic.blocked.enumerate import _windows, candidates, distinct, own_bound
from simcore.systolic.blocked.schedule import BlockSchedule, transfer
from simcore.systolic.blocked.stream import block_tiles
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign


def _occupancy(machine: SystolicMachine, what: str, elements: int) -> int:
    words, rate = transfer(machine, what, elements)
    return machine.memory.dram.occupancy(words, rate)


def _edge(size: int, block: int) -> int:
    return size - (-(-size // block) - 1) * block


def head_cycles(
    machine: SystolicMachine, design: SystolicDesign, s: BlockSchedule, shape: Shape
) -> int:
    """The earliest start of the first tile's stream (s clipped to the shape)."""
    latency = machine.memory.dram.latency
    first_a = _occupancy(machine, "a", s.bm * s.bk)
    first_b = _occupancy(machine, "b", s.bk * s.bn)
    kind = block_tiles(machine, design, s.bm, s.bk, s.bn)[0][1][0][0]
    load = max(kind[0], kind[6])  # S_0 >= load + kt >= fs + max(kt, fetch)
    if design.dataflow == "ws":
        return first_a + first_b + latency + load
    if design.dataflow == "is":
        return max(first_a + first_b, first_a + load) + latency
    return first_a + first_b + latency


def tail_cycles(machine: SystolicMachine, s: BlockSchedule, shape: Shape) -> int:
    """The drains of the last C tile after the last step, and the last one's latency."""
    span = s.span[2]
    extents = []
    for dim, block, size in (("m", s.bm, shape.m), ("n", s.bn, shape.n)):
        if s.level(dim) >= span:  # the tile reaches every block along this dimension
            extents.append(block_parts(size, block))
        else:
            extents.append([(_edge(size, block), 1)])
    drains = sum(
        cm * cn * _occupancy(machine, "c-final", em * en)
        for em, cm in extents[0]
        for en, cn in extents[1]
    )
    return drains + machine.memory.dram.latency


def chain_cycles(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> int:
    """Head, every stream window, the last tile's fill and drain, and the tail (see above)."""
    s = schedule.clipped(shape)
    m, k, n = shape.m, shape.k, shape.n
    windows = sum(
        cm * ck * cn * _windows(machine, design, bm, bk, bn)
        for bm, cm in block_parts(m, s.bm)
        for bk, ck in block_parts(k, s.bk)
        for bn, cn in block_parts(n, s.bn)
    )
    last_block = (_edge(m, s.bm), _edge(k, s.bk), _edge(n, s.bn))
    last_runs = block_tiles(machine, design, *last_block)
    rows, cols, _r, _c, length, window, _fetch = last_runs[-1][1][-1][0]
    last = length + rows + cols - 2 - window
    return head_cycles(machine, design, s, shape) + windows + last + tail_cycles(machine, s, shape)


def schedule_bound(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> int:
    """A lower bound on this schedule's cycles (one GEMM on one lane)."""
    return max(
        chain_cycles(machine, design, schedule, shape),
        own_bound(machine, design, schedule, shape),
        bound(machine, shape, design).cycles,
    )


@dataclass(frozen=True)
class SearchBound:
    cycles: int  # no candidate runs in fewer
    schedule: BlockSchedule  # a candidate whose own bound it is
    examined: int  # distinct candidates bounded


def search_bound(machine: SystolicMachine, design: SystolicDesign, shape: Shape) -> SearchBound:
    """The least schedule bound over one candidate of each run_key."""
    best: tuple[int, BlockSchedule] | None = None
    examined = 0
    for schedule in distinct(candidates(machine, shape), shape):
        examined += 1
        value = schedule_bound(machine, design, schedule, shape)
        if best is None or value < best[0]:
            best = (value, schedule)
    if best is None:
        raise ValueError(f"no block schedule fits the machine's buffers for {shape}")
    return SearchBound(best[0], best[1], examined)
