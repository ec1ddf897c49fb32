"""Reduced shapes: a schedule's smallest stand-in that exercises every kind of block it has, for a
verification of schedules too large to run in full ("verified-reduced").

A schedule at scale repeats a few kinds of blocks many times. Its reduced shape keeps its family,
parameters and machine, and is the smallest shape (in tile products) with:
  * the same edges: each side's last tile as partial as the full shape's (m, k and n modulo T);
  * the same kinds of blocks: every block's height and width, its k direction, whether it is a
    band's or a line's first or last, its band's direction and the next band's and block's sizes,
    so that every combination that occurs in the full schedule occurs in the reduced one and no
    other (general blocks, strips: also each strip's width, band lengths and direction; the
    chapter's blocked: each block's size);
  * the same k steps: the tail, the plain steps before and after step TAIL (where a block walking
    k the other way has its tail), three of them at least, or all of them where there are fewer
    (blocked: every step's buffer and whether it loads ahead; k outermost: every plane's, row's and
    product's buffer).
The general family's rotating window keeps its rows as blocks, its window and ramp, two windows
per band at least, and the number of k steps modulo the window. Verifying the reduced schedule
(functional result and hazard replay) checks every kind of block the full one runs, not the full
program: the label says so.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simcore.ga1.estimate import verified_in_full
from simcore.ga1.generator.order import GeneralParams
from simcore.ga1.generator.strips import StripParams, block_height, strip_width_runs
from simcore.ga1.machine import Machine
from simcore.ga1.verify import Verification
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.ga1.engine import Generator

Kinds = frozenset[tuple[object, ...]]
Runs = list[tuple[int, int]]  # bands as runs of (length, how many), in order


def _runs(total: int, size: int, partition: str) -> Runs:
    """simcore.ga1.generator.order.bands as runs of equal lengths, without listing the bands (the
    longest first; a shape of 65536 tiles a side has thousands)."""
    size = min(size, total)
    count = -(-total // size)
    if partition == "uniform":
        last = total - (count - 1) * size
        runs = [(size, count - 1), (last, 1)] if last != size else [(size, count)]
    else:
        base, extra = divmod(total, count)
        runs = [(base + 1, extra), (base, count - extra)]
    return [(length, many) for length, many in runs if many > 0]


def _with_edges(shape: Shape, T: int, tiles: tuple[int, int, int]) -> Shape:
    """The shape of `tiles` tiles whose last tile on each side is as partial as `shape`'s."""
    full = shape.tiles(T)
    sides = (shape.m, shape.k, shape.n)
    return Shape(*(t * T - (f * T - side) for t, f, side in zip(tiles, full, sides)))


def _line_descriptors(runs: Runs) -> dict[tuple[int, bool, bool, int], set[int]]:
    """Per kind of band (its length, first, last, the next one's length): the parities of its
    places. A run's bands share a kind but for the line's first and last band and the run's last
    (whose next band is the next run's), so each run is cut into at most five pieces."""
    total = sum(many for _length, many in runs)
    out: dict[tuple[int, bool, bool, int], set[int]] = {}
    start = 0
    for j, (length, many) in enumerate(runs):
        after = runs[j + 1][0] if j + 1 < len(runs) else 0
        end = start + many
        for low, high, next_length in ((start, end - 1, length), (end - 1, end, after)):
            # places low .. high - 1 (the run's all but last, then its last); the line's ends alone
            cuts = sorted({low, high} | {c for c in (1, total - 1) if low < c < high})
            for a, b in itertools.pairwise(cuts):
                last = b == total
                key = (length, a == 0, last, 0 if last else next_length)
                out.setdefault(key, set()).update({a % 2} if b - a == 1 else {0, 1})
        start += many
    return out


def _block_kinds(rows: Runs, cols: Runs, serpentine: bool, alternate: bool) -> Kinds:
    """Every (row band kind, its direction, column band kind, k direction) of a blocked order."""
    n_cb = sum(many for _length, many in cols)
    found = set()
    for row, row_parities in _line_descriptors(rows).items():
        for col, col_parities in _line_descriptors(cols).items():
            for r in row_parities:
                reversed_ = serpentine and r == 1
                for c in col_parities:
                    # the block's place in its band, mod 2
                    place = ((n_cb - 1) % 2) ^ c if reversed_ else c
                    down = alternate and (r * n_cb + place) % 2 == 1
                    found.add((row, reversed_, col, down))
    return frozenset(found)


def _smallest(limit: int, fits: Callable[[int], bool], count: int = 1) -> list[int]:
    """The `count` smallest values in 1..limit that fit."""
    found = []
    for value in range(1, limit + 1):
        if fits(value):
            found.append(value)
            if len(found) == count:
                break
    return found


def _pairs(rows: Iterable[int], cols: Iterable[int]) -> list[tuple[int, int]]:
    return sorted(((r, c) for r in rows for c in cols), key=lambda pair: (pair[0] * pair[1], pair))


def _steps(kt: int, tail: int) -> int:
    """K steps that keep the tail, the plain steps before and after step `tail`, three at least."""
    plain = kt - tail
    return tail + min(plain, tail + 3)


def _modular(total: int, period: int, least: int) -> int:
    """The smallest count of at least `least` that is `total` modulo `period` (or `total`)."""
    if total <= least + period:
        return total
    return least + (total - least) % period


def _frames(
    rows: Callable[[int], Runs],
    cols: Callable[[int], Runs],
    limits: tuple[int, int],
    fits: Callable[[Runs, Runs], bool],
) -> tuple[int, int] | None:
    """The smallest frame (rows x columns of tiles, by area) whose bands fit, trying the smallest
    sides whose bands alone have the full frame's kinds first."""
    want_rows = set(_line_descriptors(rows(limits[0])))
    want_cols = set(_line_descriptors(cols(limits[1])))
    row_sides = _smallest(limits[0], lambda m: set(_line_descriptors(rows(m))) == want_rows, 24)
    col_sides = _smallest(limits[1], lambda n: set(_line_descriptors(cols(n))) == want_cols, 24)
    return next(((m, n) for m, n in _pairs(row_sides, col_sides) if fits(rows(m), cols(n))), None)


def reduced_general(shape: Shape, machine: Machine, params: GeneralParams) -> Shape:
    """The general family's reduced shape (see the module's note)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    flip = params.block_order == "col"
    fm, fn = (Nt, Mt) if flip else (Mt, Nt)
    fbi, fbj = (params.bj, params.bi) if flip else (params.bi, params.bj)
    if params.structure == "rotate":
        return _reduced_rotate(shape, machine, params, (fm, fn, fbi, fbj), flip)
    alternate = params.k_direction == "alternate"

    def rows(m: int) -> Runs:
        return _runs(m, fbi, params.partition)

    def cols(n: int) -> Runs:
        return _runs(n, fbj, params.partition)

    want = _block_kinds(rows(fm), cols(fn), params.serpentine, alternate)

    def same_kinds(r: Runs, c: Runs) -> bool:
        return _block_kinds(r, c, params.serpentine, alternate) == want

    frame = _frames(rows, cols, (fm, fn), same_kinds)
    fm, fn = frame if frame is not None else (fm, fn)
    tail = min(params.tail, Kt)
    kt = Kt if tail == Kt else _steps(Kt, tail)
    return _with_edges(shape, machine.T, (fn, kt, fm) if flip else (fm, kt, fn))


def _reduced_rotate(
    shape: Shape,
    machine: Machine,
    params: GeneralParams,
    frame: tuple[int, int, int, int],
    flip: bool,
) -> Shape:
    _Mt, Kt, _Nt = shape.tiles(machine.T)
    fm, fn, fbi, fbj = frame
    window = min(fbj, fn)

    def kinds(m: int) -> set[tuple[object, ...]]:
        return {
            (key, params.serpentine and parity == 1)
            for key, parities in _line_descriptors(_runs(m, fbi, params.partition)).items()
            for parity in parities
        }

    want = kinds(fm)
    m = next(iter(_smallest(fm, lambda m: kinds(m) == want)), fm)
    n = fn if window < fbj else min(fn, 2 * window + 1)
    kt = _modular(Kt, window, 2 * window)
    return _with_edges(shape, machine.T, (n, kt, m) if flip else (m, kt, n))


def _strip_kinds(long: int, cut: int, slots: int, params: StripParams) -> tuple[Kinds, Kinds]:
    """(kinds of strips, kinds of blocks) of a strip schedule's frame of long x cut tiles.

    Strips of one width come in a run; within it a strip's kind depends on its place modulo 2
    (its direction, and its first block's place, which steps by the run's bands per strip) but
    for the run's first and last: those and two more of each run hold every kind."""
    _cost, runs = strip_width_runs(long, cut, slots, params.reserve)
    if params.strip_order == "wide":
        runs = runs[::-1]
    total = sum(count for _w, count in runs)
    strips, blocks = set(), set()
    index = first_block = 0
    for r, (w, count) in enumerate(runs):
        heights = _runs(long, block_height(w, slots, params.reserve, long), params.partition)
        lengths = tuple(length for length, _many in heights)
        per_strip = sum(many for _length, many in heights)
        after = runs[r + 1][0] if r + 1 < len(runs) else 0
        for j in sorted({0, 1, 2, count - 2, count - 1} & set(range(count))):
            place, first = index + j, first_block + j * per_strip
            reversed_ = (place + int(params.first_reverse)) % 2 == 1
            last = place == total - 1
            next_width = 0 if last else (w if j < count - 1 else after)
            strips.add((w, lengths, reversed_, first % 2, place == 0, last, next_width))
            for key, parities in _line_descriptors(heights[::-1] if reversed_ else heights).items():
                for v in parities:
                    blocks.add((key, w, (first + v) % 2))
        index, first_block = index + count, first_block + count * per_strip
    return frozenset(strips), frozenset(blocks)


def reduced_strips(shape: Shape, machine: Machine, params: StripParams) -> Shape:
    """The strip family's reduced shape (see the module's note)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    flip = params.axis == "row"
    long, cut = (Nt, Mt) if flip else (Mt, Nt)
    want = _strip_kinds(long, cut, machine.slots, params)
    widths = sorted({int(kind[0]) for kind in want[0]})  # type: ignore[call-overload]

    def bands_of(lg: int) -> list[tuple[object, ...]]:
        found: list[tuple[object, ...]] = []
        for w in widths:
            runs = _runs(lg, block_height(w, machine.slots, params.reserve, lg), params.partition)
            count = sum(many for _length, many in runs)
            found.append((frozenset(_line_descriptors(runs)), count % 2))
        return found

    # every width's blocks must cut the strip as in the full frame (and as many modulo 2, which
    # sets the next strip's first k direction): the lengths that do, first
    full_bands = bands_of(long)
    # the blocks' kinds hold the parity of their place in the whole order, which the strips
    # before them set: a dozen lengths and a few dozen strips find them all, smallest first
    longs = _smallest(long, lambda lg: bands_of(lg) == full_bands, 12)
    cuts = range(1, min(cut, 8 * sum(widths) + 8) + 1)
    frame = next(
        (
            (lg, ct)
            for lg, ct in _pairs(longs, cuts)
            if _strip_kinds(lg, ct, machine.slots, params) == want
        ),
        (long, cut),
    )
    kt = _steps(Kt, min(params.tail, Kt - 1))
    tiles = (frame[1], kt, frame[0]) if flip else (frame[0], kt, frame[1])
    return _with_edges(shape, machine.T, tiles)


def reduced_blocked(
    shape: Shape, machine: Machine, bi: int, bj: int, buffers: int, order: str = "row"
) -> Shape:
    """The chapter's blocked family's reduced shape: its blocks of bi x bj and the edge ones, and
    every step's buffer (the visiting order does not change which blocks there are)."""
    Mt, Kt, Nt = shape.tiles(machine.T)

    def rows(m: int) -> Runs:
        return _runs(m, bi, "uniform")

    def cols(n: int) -> Runs:
        return _runs(n, bj, "uniform")

    frame = _frames(rows, cols, (Mt, Nt), lambda r, c: True) or (Mt, Nt)
    return _with_edges(shape, machine.T, (frame[0], _modular(Kt, buffers, 2 * buffers), frame[1]))


def reduced_kouter(shape: Shape, machine: Machine, buffers: int) -> Shape:
    """The k-outermost family's reduced shape: every plane's, row's and product's buffer."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    tiles = (
        _modular(Mt, buffers, buffers),
        _modular(Kt, buffers, buffers + 1),
        _modular(Nt, buffers, buffers),
    )
    return _with_edges(shape, machine.T, tiles)


def reduced_generator(generator: Generator) -> Generator:
    """The same schedule (family, parameters, machine) on its reduced shape, for verify()."""
    from simcore.ga1 import engine

    shape, machine = generator.shape, generator.machine
    if isinstance(generator, engine.General):
        params = generator.params
        return engine.General(reduced_general(shape, machine, params), machine, params)
    if isinstance(generator, engine.Strips):
        strips = generator.params
        return engine.Strips(reduced_strips(shape, machine, strips), machine, strips)
    if isinstance(generator, engine.Blocked):
        block = (generator.bi, generator.bj, generator.buffers, generator.order)
        return engine.Blocked(reduced_blocked(shape, machine, *block), machine, *block)
    if isinstance(generator, engine.KOuter):
        buffers = generator.buffers
        return engine.KOuter(reduced_kouter(shape, machine, buffers), machine, buffers)
    raise TypeError(f"no reduced shape for {type(generator).__name__} (its program is built whole)")


@dataclass(frozen=True)
class ScaledVerification:
    """A verification at any size: of the whole program (`reduced` None), of the same schedule on
    its reduced shape, or none (`verification` None) when even that is too large to run."""

    verification: Verification | None
    reduced: Shape | None

    def describe(self) -> str:
        if self.verification is None:
            return f"timed only: its reduced shape {self.reduced} is too large to run"
        if self.reduced is None:
            return self.verification.describe()
        return f"verified-reduced on {self.reduced}: {self.verification.describe()}"


def verify_at_scale(generator: Generator, seed: int = 1) -> ScaledVerification:
    """The whole program run and replayed while its products and matrices stay small
    (simcore.ga1.estimate.verified_in_full: seconds, and operands of at most a few hundred MB);
    past either, the same schedule on its reduced shape, if that is small."""
    if verified_in_full(generator.shape, generator.machine):
        return ScaledVerification(generator.verify(seed), None)
    small = reduced_generator(generator)
    if not verified_in_full(small.shape, small.machine):
        return ScaledVerification(None, small.shape)
    return ScaledVerification(small.verify(seed), small.shape)
