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
tail. The same chain holds from any step j on: j's first tile streams no earlier than its last
data transfer (a load or partial sums read back) is in place, and that is no earlier than the
link's occupancy of every transfer issued up to it, plus latency; a walk of the program's issue
order (without timing) gives that occupancy exactly, and the largest over j counts (skipped for
schedules of many steps). Each term is the schedule's own and exact, so no edge case of another
schedule (a 1 x 1 last tile, a one-element first block) weakens it. Its bound is the largest of
these chains, its own link and array bound (`enumerate.own_bound`) and the machine's bound
(`bounds.bound`).

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
from simcore.systolic.blocked.reference import _instance, steps
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


def _emissions(
    machine: SystolicMachine, s: BlockSchedule, shape: Shape
) -> list[tuple[tuple[int, int, int], int]]:
    """Per step (its block, in loop order): the link's occupancy of every transfer issued up to
    and including the step's last data transfer (its loads and partial sums read back; without
    any, up to the previous step's), following the program's issue order."""
    occupancy: dict[tuple[str, int], int] = {}

    def busy(what: str, elements: int) -> int:
        if (what, elements) not in occupancy:
            occupancy[what, elements] = _occupancy(machine, what, elements)
        return occupancy[what, elements]

    kb = s.grid(shape)[1]
    instance: dict[str, tuple[int, ...] | None] = dict.fromkeys("abc")
    loaded: dict[str, dict[tuple[int, int], int]] = {x: {} for x in "abc"}
    total = data_through = 0
    last_k = 0
    out = []
    for i, k, j in steps(s, shape):
        index = {"m": i, "k": k, "n": j}
        dims = {"m": (i, s.bm, shape.m), "k": (k, s.bk, shape.k), "n": (j, s.bn, shape.n)}
        bm, bk, bn = (min(b, size - x * b) for x, b, size in dims.values())
        for operand, block, elements in (("a", (i, k), bm * bk), ("b", (k, j), bk * bn)):
            now = _instance(s, operand, index, 0)
            if instance[operand] != now:
                instance[operand], loaded[operand] = now, {}
            if block not in loaded[operand]:
                loaded[operand][block] = elements
                total += busy(operand, elements)
                data_through = total
        now = _instance(s, "c", index, 0)
        if instance["c"] != now:
            what = "c-final" if last_k == kb - 1 else "c-partial"
            total += sum(busy(what, e) for e in loaded["c"].values())
            instance["c"], loaded["c"] = now, {}
        if (i, j) not in loaded["c"]:
            loaded["c"][i, j] = bm * bn
            if k > 0:
                total += busy("c-back", bm * bn)
                data_through = total
        last_k = k
        out.append(((bm, bk, bn), data_through))
    return out


def data_chain_cycles(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    most_steps: int = 100_000,
) -> int:
    """The largest, over the steps j, of: the link's occupancy up to j's last data transfer,
    its latency, the windows of steps j to the last, the last tile's fill and drain and the tail
    (0 when the schedule has more than `most_steps` steps: the walk is skipped)."""
    s = schedule.clipped(shape)
    gm, gk, gn = s.grid(shape)
    if gm * gk * gn > most_steps:
        return 0
    per_step = _emissions(machine, s, shape)
    last_runs = block_tiles(machine, design, *per_step[-1][0])
    rows, cols, _r, _c, length, window, _fetch = last_runs[-1][1][-1][0]
    after = length + rows + cols - 2 - window + tail_cycles(machine, s, shape)
    latency = machine.memory.dram.latency
    best = 0
    for dims, through in reversed(per_step):
        after += _windows(machine, design, *dims)
        best = max(best, through + latency + after)
    return best


def _quick_bound(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> int:
    return max(
        chain_cycles(machine, design, schedule, shape),
        own_bound(machine, design, schedule, shape),
        bound(machine, shape, design).cycles,
    )


def schedule_bound(
    machine: SystolicMachine, design: SystolicDesign, schedule: BlockSchedule, shape: Shape
) -> int:
    """A lower bound on this schedule's cycles (one GEMM on one lane)."""
    return max(
        _quick_bound(machine, design, schedule, shape),
        data_chain_cycles(machine, design, schedule, shape),
    )


@dataclass(frozen=True)
class SearchBound:
    cycles: int  # no candidate runs in fewer
    schedule: BlockSchedule  # a candidate whose own bound it is
    examined: int  # distinct candidates bounded


def search_bound(machine: SystolicMachine, design: SystolicDesign, shape: Shape) -> SearchBound:
    """The least schedule bound over one candidate of each run_key: the walk of the program
    (`data_chain_cycles`) only for candidates whose other terms are below the least so far."""
    quick = sorted(
        (_quick_bound(machine, design, s, shape), n, s)
        for n, s in enumerate(distinct(candidates(machine, shape), shape))
    )
    if not quick:
        raise ValueError(f"no block schedule fits the machine's buffers for {shape}")
    best: tuple[int, BlockSchedule] | None = None
    for value, _n, schedule in quick:
        if best is not None and value >= best[0]:
            break
        value = max(value, data_chain_cycles(machine, design, schedule, shape))
        if best is None or value < best[0]:
            best = (value, schedule)
    assert best is not None
    return SearchBound(best[0], best[1], len(quick))
