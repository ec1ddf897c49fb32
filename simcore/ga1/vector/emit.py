"""Emitting a vector program: flat (every instruction, with its tile coordinates and constants)
or as a timing tree (runs of identical iterations kept once, with a count).

A tree is a tuple of nodes: a `Chunk` of program rows, or a `Repeat` of a body `count` times.
The timing of an instruction depends on its opcode, function and slots only, never on the
tensor, the tile coordinates or a vscale constant; a tree's expansion therefore times exactly
as the flat program does when the two agree on those fields (`timing_fields`). A builder calls
`loop` over iterations whose instructions repeat with a known period; in a tree the first
period is emitted once and repeated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Hashable, Iterator, Union

import numpy as np

from simcore.ga1.program import (
    EXP,
    MASKLEN,
    MXU,
    NONE,
    OPCODES,
    ROWRED,
    ROWRED_FUNCS,
    SFU,
    SFU_FUNCS,
    TRANSPOSE,
    VOP,
    VOP_FUNCS,
    VSCALE,
    WIDTH,
    ZERO,
    Program,
)

LOAD, STORE, BCASTCOL = OPCODES["load"], OPCODES["store"], OPCODES["bcastcol"]
TIMING_COLUMNS = slice(0, 5)  # opcode, function, slots: what the timing rule reads
MIN_REPEATS = 3  # fewer repetitions than this are emitted in full


@dataclass(frozen=True, eq=False)
class Chunk:
    rows: np.ndarray  # (n, WIDTH) int64


@dataclass(frozen=True, eq=False)
class Repeat:
    count: int
    body: tuple[Node, ...]


Node = Union[Chunk, Repeat]
Tree = tuple[Node, ...]


class Emitter:
    """Appends instructions; `compress` builds a timing tree instead of a flat program."""

    def __init__(self, compress: bool = False) -> None:
        self.compress = compress
        self.tensors: list[str] = []
        self._index: dict[str, int] = {}
        self._rows: list[tuple[int, ...]] = []
        self._consts: list[float] = []
        self._levels: list[list[Node]] = [[]]
        self._kept: dict[Hashable, tuple[Node, ...]] = {}

    # ---- instructions
    def _add(self, row: tuple[int, ...], const: float = 0.0) -> None:
        self._rows.append(row)
        if not self.compress:
            self._consts.append(const)

    def _tensor(self, name: str) -> int:
        if self.compress:
            return 0
        index = self._index.get(name)
        if index is None:
            index = self._index[name] = len(self.tensors)
            self.tensors.append(name)
        return index

    def load(self, slot: int, tensor: str, ti: int, tj: int) -> None:
        self._add((LOAD, NONE, slot, NONE, NONE, self._tensor(tensor), ti, tj))

    def store(self, slot: int, tensor: str, ti: int, tj: int) -> None:
        self._add((STORE, NONE, slot, NONE, NONE, self._tensor(tensor), ti, tj))

    def zero(self, slot: int) -> None:
        self._add((ZERO, NONE, slot, NONE, NONE, NONE, NONE, NONE))

    def mxu(self, c: int, a: int, b: int) -> None:
        """The matrix unit: c += a @ b (fused programs)."""
        self._add((MXU, NONE, c, a, b, NONE, NONE, NONE))

    def vop(self, func: str, dst: int, a: int, b: int | None = None) -> None:
        second = NONE if b is None else b
        self._add((VOP, VOP_FUNCS.index(func), dst, a, second, NONE, NONE, NONE))

    def exp(self, dst: int, a: int) -> None:
        self._add((EXP, NONE, dst, a, NONE, NONE, NONE, NONE))

    def vscale(self, dst: int, a: int, k: float) -> None:
        self._add((VSCALE, NONE, dst, a, NONE, NONE, NONE, NONE), float(k))

    def rowred(self, func: str, dst: int, a: int) -> None:
        self._add((ROWRED, ROWRED_FUNCS.index(func), dst, a, NONE, NONE, NONE, NONE))

    def bcastcol(self, dst: int, a: int) -> None:
        self._add((BCASTCOL, NONE, dst, a, NONE, NONE, NONE, NONE))

    def masklen(self, slot: int, rows: int, cols: int) -> None:
        self._add((MASKLEN, NONE, slot, NONE, NONE, NONE, rows, cols))

    def sfu(self, func: str, dst: int, a: int) -> None:
        self._add((SFU, SFU_FUNCS.index(func), dst, a, NONE, NONE, NONE, NONE))

    def transpose(self, dst: int, a: int) -> None:
        self._add((TRANSPOSE, NONE, dst, a, NONE, NONE, NONE, NONE))

    def copy(self, dst: int, a: int) -> None:
        """dst := a, exactly (max(x, x) is x, nan included)."""
        self.vop("max", dst, a, a)

    # ---- structure
    def _flush(self) -> None:
        if self._rows:
            rows = np.array(self._rows, dtype=np.int64).reshape(-1, WIDTH)
            self._levels[-1].append(Chunk(rows))
            self._rows = []

    def loop(self, start: int, stop: int, period: int, body: Callable[[int], None]) -> None:
        """body(i) for i in start..stop-1. The caller guarantees that body(i) and body(i + period)
        emit the same opcodes, functions and slots; a tree keeps one period, repeated."""
        count = stop - start
        repeats = count // period if period > 0 else 0
        if not self.compress or repeats < MIN_REPEATS:
            for i in range(start, stop):
                body(i)
            return
        self._flush()
        self._levels.append([])
        for i in range(start, start + period):
            body(i)
        self._flush()
        unit = tuple(self._levels.pop())
        self._levels[-1].append(Repeat(repeats, unit))
        for i in range(start + repeats * period, stop):
            body(i)

    def reuse(self, key: Hashable, body: Callable[[], None]) -> None:
        """body(); in a tree, a body already emitted under the same key is not emitted again but
        shared (the caller guarantees equal keys emit the same opcodes, functions and slots)."""
        if not self.compress:
            body()
            return
        kept = self._kept.get(key)
        if kept is None:
            self._flush()
            self._levels.append([])
            body()
            self._flush()
            kept = self._kept[key] = tuple(self._levels.pop())
        self._flush()
        self._levels[-1].extend(kept)

    def program(self) -> Program:
        assert not self.compress, "a timing tree has no program"
        code = np.array(self._rows, dtype=np.int64).reshape(-1, WIDTH)
        return Program(code=code, tensors=tuple(self.tensors), consts=np.array(self._consts))

    def tree(self) -> Tree:
        assert self.compress, "a flat program is not a tree"
        self._flush()
        return tuple(self._levels[0])


def expand(tree: Tree) -> Iterator[np.ndarray]:
    """The tree's chunks in program order, every repetition."""
    for node in tree:
        if isinstance(node, Chunk):
            yield node.rows
        else:
            for _ in range(node.count):
                yield from expand(node.body)


def timing_fields(code: np.ndarray) -> np.ndarray:
    """The columns the timing rule reads (masklen's counts and load coordinates excluded)."""
    return np.ascontiguousarray(code[:, TIMING_COLUMNS])


def tree_rows(tree: Tree) -> int:
    """Instructions a tree stands for."""
    total = 0
    for node in tree:
        total += (
            node.rows.shape[0] if isinstance(node, Chunk) else node.count * tree_rows(node.body)
        )
    return total


def tree_size(tree: Tree) -> int:
    """Rows a tree holds in memory."""
    return sum(n.rows.shape[0] if isinstance(n, Chunk) else tree_size(n.body) for n in tree)
