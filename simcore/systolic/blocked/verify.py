"""The verification of a block schedule: its program run on numbers.

The reference program (`reference.build_program`) is replayed with numpy: a load copies its
block from DRAM into its operand's slot (a new tile in a slot first empties it), a step
multiplies the A and B blocks it finds in the latest tile of each operand into the C block of
the latest C tile (a block that is not there is an error, not a reload), a read-back copies
partial sums from DRAM into the C slot, and a drain copies a C block out, as partial sums or as
outputs. The run is verified when every output was written once as final, the outputs equal
numpy's product, the timed program passes the audit (which checks every tile against the one
before it, across blocks), and the array's cycle model runs every block's tiles at the very
stream and load cycles the engine gave them (shifted to the block's first), without a hazard,
to numpy's product, with its last product no later than the engine's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.shape import Shape
from simcore.systolic.blocked.audit import audit
from simcore.systolic.blocked.reference import Op, build_program, run_reference
from simcore.systolic.blocked.schedule import BlockSchedule
from simcore.systolic.cycle import SystolicTimingError, simulate_systolic
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign


class ReplayError(RuntimeError):
    """A step found a block that is not on chip, or an output was not written exactly once."""


@dataclass(frozen=True)
class BlockVerdict:
    ok: bool
    detail: str


def _span(index: int, block: int) -> slice:
    return slice(index * block, (index + 1) * block)


def replay(ops: list[Op], schedule: BlockSchedule, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C computed by the program's data moves alone."""
    s = schedule
    m, n = a.shape[0], b.shape[1]
    dram_partial = np.zeros((m, n), dtype=a.dtype)
    out = np.zeros((m, n), dtype=a.dtype)
    written = np.zeros((m, n), dtype=np.int64)
    slots: dict[str, dict[int, tuple[int, dict[Any, Any]]]] = {"a": {}, "b": {}, "c": {}}
    latest: dict[str, int] = {}

    def place(operand: str, op: Op) -> dict[Any, Any]:
        tile, blocks = slots[operand].get(op.slot, (-1, {}))
        if tile != op.tile:
            tile, blocks = op.tile, {}
            slots[operand][op.slot] = (tile, blocks)
        latest[operand] = op.slot
        return blocks

    for op in ops:
        x, y = op.block
        if op.kind == "load-a":
            place("a", op)[op.block] = a[_span(x, s.bm), _span(y, s.bk)].copy()
        elif op.kind == "load-b":
            place("b", op)[op.block] = b[_span(x, s.bk), _span(y, s.bn)].copy()
        elif op.kind == "c-back":
            place("c", op)[op.block] = dram_partial[_span(x, s.bm), _span(y, s.bn)].copy()
        elif op.kind in ("c-partial", "c-final"):
            block = slots["c"][op.slot][1].pop(op.block)
            target = out if op.kind == "c-final" else dram_partial
            target[_span(x, s.bm), _span(y, s.bn)] = block
            if op.kind == "c-final":
                written[_span(x, s.bm), _span(y, s.bn)] += 1
        else:
            _step(op, slots, latest)
    if not (written == 1).all():
        raise ReplayError("an output was not written exactly once as final")
    return out


def _step(op: Op, slots: dict[Any, Any], latest: dict[str, int]) -> None:
    """C[i,j] += A[i,k] B[k,j] with the blocks on chip."""
    i, j = op.block
    a_block = slots["a"][latest["a"]][1].get((i, op.k))
    b_block = slots["b"][latest["b"]][1].get((op.k, j))
    if a_block is None or b_block is None:
        raise ReplayError(f"step ({i}, {op.k}, {j}) finds its A or B block not on chip")
    tile, blocks = slots["c"].get(op.slot, (-1, {}))
    if tile != op.tile:
        tile, blocks = op.tile, {}
        slots["c"][op.slot] = (tile, blocks)
    if (i, j) not in blocks:
        if op.k > 0:
            raise ReplayError(f"step ({i}, {op.k}, {j}) finds no partial sums of C ({i}, {j})")
        blocks[(i, j)] = np.zeros((a_block.shape[0], b_block.shape[1]), dtype=a_block.dtype)
    blocks[(i, j)] += a_block @ b_block


def verify_blocked(
    machine: SystolicMachine,
    design: SystolicDesign,
    schedule: BlockSchedule,
    shape: Shape,
    seed: int = 0,
) -> BlockVerdict:
    """Replay the program on random integers, audit its timeline, and run the array's cycle
    model on every distinct block shape (see the module docstring)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, size=(shape.m, shape.k)).astype(np.float64)
    b = rng.integers(-9, 10, size=(shape.k, shape.n)).astype(np.float64)
    s = schedule.clipped(shape)
    try:
        c = replay(build_program(machine, design, s, shape), s, a, b)
    except ReplayError as exc:
        return BlockVerdict(False, str(exc))
    if not np.array_equal(c, a @ b):
        return BlockVerdict(False, "the program's product differs from numpy's")
    timeline = run_reference(machine, design, s, shape)
    problems = audit(machine, design, timeline)
    if problems:
        return BlockVerdict(False, f"audit: {problems[0]}")
    runs = _blocks_on_the_array(design, timeline.ops, rng)
    if isinstance(runs, str):
        return BlockVerdict(False, runs)
    return BlockVerdict(
        True, f"C == numpy, audit clean, {runs} block timing(s) run on the array's cycle model"
    )


def _entries(design: SystolicDesign, op: Op) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """(shift, entries): a step's tile entries as the cycle model takes them, from 0."""
    if design.dataflow == "os":
        raw = [
            (t[0], t[0]) if t[1] is None or not design.assumptions.drain else (t[0], t[0], t[1])
            for t in op.tiles
        ]
    else:
        raw = [(t[2], t[3]) for t in op.tiles]
    shift = int(min(min(e) for e in raw))
    return shift, tuple(tuple(int(v) - shift for v in e) for e in raw)


def _blocks_on_the_array(
    design: SystolicDesign, ops: tuple[Op, ...], rng: np.random.Generator
) -> int | str:
    """Run each distinct (block, entries) on the cycle model; the count, or what went wrong."""
    seen: set[tuple[Any, ...]] = set()
    for op in ops:
        if op.kind != "compute":
            continue
        shift, entries = _entries(design, op)
        if (op.dims, entries) in seen:
            continue
        seen.add((op.dims, entries))
        block = Shape(*op.dims)
        x = rng.integers(-9, 10, size=(block.m, block.k)).astype(np.float64)
        y = rng.integers(-9, 10, size=(block.k, block.n)).astype(np.float64)
        try:
            run = simulate_systolic(design, x, y, entries)
        except SystolicTimingError as exc:
            return f"block {block}: the array's cycle model stops: {exc}"
        if not np.array_equal(run.c, x @ y):
            return f"block {block}: the array's cycle model computes another product"
        last = max(int(t[-1]) for t in op.tiles)
        if run.cycles + shift > last:
            return f"block {block}: the array's last product at {run.cycles + shift}, after {last}"
    return len(seen)
