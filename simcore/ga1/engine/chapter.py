"""The chapter's hand-written families, emitted in chunks by compiled kernels: the same rows,
in the same order, as simcore/ga1/schedules.py's `blocked` and `kouter` (the reference).

Each kernel resumes at its position and emits until the chunk is nearly full: blocked's unit of
work is a block's opening (zeros and the first loads), one k step, or its stores; kouter's is one
(k, i, j) product with its transfers.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import callee
from simcore.ga1.engine.rows import COMMON, DONE, assemble, emit, room
from simcore.ga1.program import LOAD, MXU, NONE, STORE, TENSOR_A, TENSOR_B, TENSOR_C, ZERO

MT, KT, NT, BI, BJ, BUFFERS, BY_COLUMNS, NEXT, UNIT, HEADROOM, STOP = range(COMMON, COMMON + 11)
HEADER = COMMON + 11
NO_STOP = 1 << 62  # STOP: where a run stops (a block's unit, or a product), for the periodic timing


def blocked_state(
    tiles: tuple[int, int, int], bi: int, bj: int, buffers: int, by_columns: bool, chunk_rows: int
) -> np.ndarray:
    # a unit of work: a block's zeros and first loads, a k step, or its stores
    room_needed = 2 * bi * bj + 2 * buffers * (bi + bj) + 8
    fields = {
        MT: tiles[0],
        KT: tiles[1],
        NT: tiles[2],
        BI: bi,
        BJ: bj,
        BUFFERS: buffers,
        BY_COLUMNS: int(by_columns),
        HEADROOM: room_needed,
        STOP: NO_STOP,
    }
    return assemble(HEADER, fields, [], max(chunk_rows, 2 * room_needed))


def kouter_state(tiles: tuple[int, int, int], buffers: int, chunk_rows: int) -> np.ndarray:
    fields = {
        MT: tiles[0],
        KT: tiles[1],
        NT: tiles[2],
        BUFFERS: buffers,
        HEADROOM: 5,
        STOP: NO_STOP,
    }
    return assemble(HEADER, fields, [], max(chunk_rows, 10))


@callee
def _operand_base(st: np.ndarray, k: int) -> int:
    return st[BI] * st[BJ] + (k % st[BUFFERS]) * (st[BI] + st[BJ])


@callee
def _loads(st: np.ndarray, I: int, J: int, h: int, w: int, k: int) -> None:
    base = _operand_base(st, k)
    for x in range(h):
        emit(st, LOAD, base + x, NONE, NONE, TENSOR_A, I + x, k)
    for y in range(w):
        emit(st, LOAD, base + st[BI] + y, NONE, NONE, TENSOR_B, k, J + y)


@callee
def _block_unit(st: np.ndarray, I: int, J: int, unit: int) -> None:
    """Unit 0 opens the block, unit 1 + k is step k, unit KT + 1 stores the block."""
    kt, bj, buffers = st[KT], st[BJ], st[BUFFERS]
    h, w = min(st[BI], st[MT] - I), min(bj, st[NT] - J)
    if unit == 0:
        for x in range(h):
            for y in range(w):
                emit(st, ZERO, x * bj + y, NONE, NONE, NONE, NONE, NONE)
        for k in range(min(buffers - 1, kt)):
            _loads(st, I, J, h, w, k)
    elif unit <= kt:
        k = unit - 1
        if k + buffers - 1 < kt:
            _loads(st, I, J, h, w, k + buffers - 1)
        base = _operand_base(st, k)
        for x in range(h):
            for y in range(w):
                emit(st, MXU, x * bj + y, base + x, base + st[BI] + y, NONE, NONE, NONE)
    else:
        for x in range(h):
            for y in range(w):
                emit(st, STORE, x * bj + y, NONE, NONE, TENSOR_C, I + x, J + y)


@callee
def run_blocked(st: np.ndarray) -> None:
    """Emit blocks (corners row-major, or column-major with BY_COLUMNS) into the chunk."""
    across = (st[MT] + st[BI] - 1) // st[BI]
    along = (st[NT] + st[BJ] - 1) // st[BJ]
    while st[NEXT] < across * along:
        if not room(st, st[HEADROOM]) or st[NEXT] * (st[KT] + 2) + st[UNIT] >= st[STOP]:
            return
        b = st[NEXT]
        if st[BY_COLUMNS] == 1:
            I, J = (b % across) * st[BI], (b // across) * st[BJ]
        else:
            I, J = (b // along) * st[BI], (b % along) * st[BJ]
        _block_unit(st, I, J, st[UNIT])
        st[UNIT] += 1
        if st[UNIT] > st[KT] + 1:
            st[NEXT], st[UNIT] = b + 1, 0
    st[DONE] = 1


@callee
def run_kouter(st: np.ndarray) -> None:
    """The (k, i, j) order: load the partial C tile (or zero it), load A and B, multiply, store."""
    mt, nt, buffers = st[MT], st[NT], st[BUFFERS]
    while st[NEXT] < mt * st[KT] * nt:
        if not room(st, st[HEADROOM]) or st[NEXT] >= st[STOP]:
            return
        g = st[NEXT]
        k, i, j = g // (mt * nt), (g // nt) % mt, g % nt
        group = g % buffers
        c, a, b = 3 * group, 3 * group + 1, 3 * group + 2
        if k == 0:
            emit(st, ZERO, c, NONE, NONE, NONE, NONE, NONE)
        else:
            emit(st, LOAD, c, NONE, NONE, TENSOR_C, i, j)
        emit(st, LOAD, a, NONE, NONE, TENSOR_A, i, k)
        emit(st, LOAD, b, NONE, NONE, TENSOR_B, k, j)
        emit(st, MXU, c, a, b, NONE, NONE, NONE)
        emit(st, STORE, c, NONE, NONE, TENSOR_C, i, j)
        st[NEXT] = g + 1
    st[DONE] = 1
