"""Functional mode: the arithmetic of a GA-1 program, in program order, with numpy.

Timing never depends on values, so this runs apart from the timing rule: the result of a
schedule is what its instructions say, whatever their timing.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from simcore.ga1.machine import Machine
from simcore.ga1.program import (
    BCASTCOL,
    EXP,
    LOAD,
    MASKLEN,
    MXU,
    NONE,
    OP,
    ROWRED,
    SFU,
    SFU_FUNCS,
    STORE,
    TENSOR,
    TRANSPOSE,
    VOP,
    VOP_FUNCS,
    VSCALE,
    ZERO,
    Program,
    ProgramError,
)


def _divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # The chapter's division: x / 0 is +inf, -inf or nan by the sign of x (never by the sign of 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(y != 0, y, 1.0)
        by_sign = np.where(x > 0, np.inf, np.where(x < 0, -np.inf, np.nan))
        return np.where(y != 0, x / safe, by_sign)


_VOPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": _divide,
    # Python's max(x, y) as the chapter writes it: x unless y > x (a nan second operand loses).
    "max": lambda x, y: np.where(y > x, y, x),
    "relu": lambda x, _y: np.maximum(x, 0.0),
    "neg": lambda x, _y: -x,
}


def _rsqrt(x: np.ndarray) -> np.ndarray:
    # IEEE's rSqrt: +inf at +0, -inf at -0, nan below zero, 0 at +inf.
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(x)


_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERF(x), dtype=np.float64)


_SFUS: dict[str, Callable[[np.ndarray], np.ndarray]] = {"rsqrt": _rsqrt, "erf": _erf}


def _row_max(source: np.ndarray) -> np.ndarray:
    # Python's max(row): left to right, a later value wins only if strictly greater (np.max would
    # let any nan win).
    best = source[:, 0].copy()
    for j in range(1, source.shape[1]):
        best = np.where(source[:, j] > best, source[:, j], best)
    return best


def execute(
    machine: Machine, program: Program, dram: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Run the program's arithmetic on copies of the DRAM tensors and return them, updated."""
    T = machine.T
    memory = {name: np.array(value, dtype=np.float64, copy=True) for name, value in dram.items()}
    for name in program.tensors:
        if name not in memory and _names_used(program, name):
            raise ProgramError(f"program uses tensor {name!r}, which is not in DRAM")
    spad = np.zeros((machine.slots, T, T))
    tensors = program.tensors
    consts = program.consts
    for index, (op, sub, s0, s1, s2, t, x, y) in enumerate(program.rows):
        if op == MXU:
            spad[s0] = spad[s0] + spad[s1] @ spad[s2]
        elif op == LOAD:
            matrix = memory[tensors[t]]
            tile = np.zeros((T, T))
            block = matrix[x * T : (x + 1) * T, y * T : (y + 1) * T]  # the part inside the tensor
            tile[: block.shape[0], : block.shape[1]] = block
            spad[s0] = tile
        elif op == STORE:
            matrix = memory[tensors[t]]
            block = matrix[x * T : (x + 1) * T, y * T : (y + 1) * T]
            block[...] = spad[s0][: block.shape[0], : block.shape[1]]
        elif op == ZERO:
            spad[s0] = 0.0
        elif op == VOP:
            second = spad[s2] if s2 != NONE else np.zeros((T, T))
            spad[s0] = _VOPS[VOP_FUNCS[sub]](spad[s1], second)
        elif op == EXP:
            with np.errstate(over="ignore"):
                spad[s0] = np.exp(spad[s1])
        elif op == VSCALE:
            spad[s0] = spad[s1] * consts[index]
        elif op == ROWRED:
            source = spad[s1]
            reduced = source.sum(axis=1) if sub == 0 else _row_max(source)
            spad[s0] = np.repeat(reduced[:, None], T, axis=1)
        elif op == BCASTCOL:
            spad[s0] = np.repeat(spad[s1][:, :1], T, axis=1)
        elif op == SFU:
            spad[s0] = _SFUS[SFU_FUNCS[sub]](spad[s1])
        elif op == TRANSPOSE:
            spad[s0] = spad[s1].T.copy()
        elif op == MASKLEN:
            masked = np.zeros((T, T))
            rows, cols = (
                max(x, 0),
                max(y, 0),
            )  # negative counts keep nothing (not slices from the end)
            masked[:rows, :cols] = spad[s0][:rows, :cols]
            spad[s0] = masked
        else:
            raise ProgramError(f"unknown opcode {op}")
    return memory


def _names_used(program: Program, name: str) -> bool:
    index = program.tensors.index(name)
    code = program.code
    return bool(
        np.any((code[:, TENSOR] == index) & ((code[:, OP] == LOAD) | (code[:, OP] == STORE)))
    )
