"""GA-1 programs in a compact form: one row of small integers per instruction.

The chapter writes a program as a list of tuples such as ("load", slot, "A", ti, tj). That stays
the readable input and output format (`Program.from_tuples`, `Program.to_tuples`), but the
timing core walks a (n, 8) integer array so that no Python object per instruction is needed.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

# Opcodes, in the order the chapter lists them, then the two extensions beyond the chapter (sfu:
# a special function on the exp path, transpose: a tile transposed by the vector unit; see
# docs/vector.md).
LOAD, STORE, ZERO, MXU, VOP, EXP, VSCALE, ROWRED, BCASTCOL, MASKLEN, SFU, TRANSPOSE = range(12)
OPCODE_NAMES: tuple[str, ...] = (
    "load",
    "store",
    "zero",
    "mxu",
    "vop",
    "exp",
    "vscale",
    "rowred",
    "bcastcol",
    "masklen",
    "sfu",
    "transpose",
)
CHAPTER_OPCODES = frozenset(range(MASKLEN + 1))
EXTENSION_OPCODES = frozenset({SFU, TRANSPOSE})
OPCODES: dict[str, int] = {name: code for code, name in enumerate(OPCODE_NAMES)}
VOP_FUNCS: tuple[str, ...] = ("add", "sub", "mul", "div", "max", "relu", "neg")
UNARY_VOPS = frozenset({"relu", "neg"})
ROWRED_FUNCS: tuple[str, ...] = ("sum", "max")
SFU_FUNCS: tuple[str, ...] = ("rsqrt", "erf")

# Columns of a program row. Unused fields are -1.
#   OP   opcode            SUB  vop/rowred/sfu function index
#   S0   destination slot  S1, S2  source slots
#   TENSOR  index into Program.tensors     X, Y  tile coordinates (masklen: rows, cols)
OP, SUB, S0, S1, S2, TENSOR, X, Y = range(8)
WIDTH = 8
NONE = -1
# The TENSOR field of a matrix product's programs: indices into MATMUL_TENSORS.
MATMUL_TENSORS: tuple[str, ...] = ("A", "B", "C")
TENSOR_A, TENSOR_B, TENSOR_C = range(3)


class ProgramError(ValueError):
    """A program is malformed: an unknown opcode, a bad operand or a slot out of range."""


@dataclass(frozen=True, eq=False)
class Program:
    """An immutable GA-1 program: `code` rows, vscale constants, and the DRAM tensor names."""

    code: np.ndarray
    tensors: tuple[str, ...] = MATMUL_TENSORS
    consts: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        code = np.ascontiguousarray(self.code, dtype=np.int64).reshape(-1, WIDTH)
        code.setflags(write=False)
        object.__setattr__(self, "code", code)
        consts = np.asarray(self.consts, dtype=np.float64)
        if consts.shape[0] != code.shape[0]:
            consts = np.zeros(code.shape[0]) if consts.size == 0 else consts
        if consts.shape[0] != code.shape[0]:
            raise ProgramError("consts must have one entry per instruction")
        consts.setflags(write=False)
        object.__setattr__(self, "consts", consts)

    def __len__(self) -> int:
        return int(self.code.shape[0])

    @staticmethod
    def from_rows(
        rows: list[tuple[int, ...]],
        tensors: tuple[str, ...] = MATMUL_TENSORS,
        consts: np.ndarray | None = None,
    ) -> Program:
        """Build from row tuples a generator already holds; the tuples double as `rows`, so the
        timing loop does not convert the array back."""
        code = np.fromiter(
            itertools.chain.from_iterable(rows), dtype=np.int64, count=WIDTH * len(rows)
        ).reshape(-1, WIDTH)
        program = Program(
            code=code, tensors=tensors, consts=np.zeros(0) if consts is None else consts
        )
        program.__dict__["rows"] = rows
        return program

    @functools.cached_property
    def rows(self) -> Sequence[Sequence[int]]:
        """The code as plain Python lists: what the timing loop iterates fastest."""
        rows: Sequence[Sequence[int]] = self.code.tolist()
        return rows

    def opcode_counts(self) -> dict[str, int]:
        counts = (
            np.bincount(self.code[:, OP], minlength=len(OPCODE_NAMES))
            if len(self)
            else np.zeros(len(OPCODE_NAMES), int)
        )
        return {name: int(counts[i]) for i, name in enumerate(OPCODE_NAMES)}

    def max_slot(self) -> int:
        """The largest slot index used, or -1 for an empty program."""
        if not len(self):
            return -1
        return int(self.code[:, S0 : S2 + 1].max())

    @staticmethod
    def from_tuples(instructions: Iterable[Sequence[object]]) -> Program:
        builder = ProgramBuilder()
        for ins in instructions:
            builder.add_tuple(ins)
        return builder.build()

    def to_tuples(self) -> list[tuple[object, ...]]:
        return [
            instruction_tuple(row, self.tensors, float(k))
            for row, k in zip(self.rows, self.consts.tolist())
        ]


def instruction_tuple(
    row: Sequence[int], tensors: Sequence[str], const: float = 0.0
) -> tuple[object, ...]:
    """The chapter's tuple form of one program row."""
    op, sub, s0, s1, s2, t, x, y = row
    name = OPCODE_NAMES[op]
    if op in (LOAD, STORE):
        return (name, s0, tensors[t], x, y)
    if op == ZERO:
        return (name, s0)
    if op == MXU:
        return (name, s0, s1, s2)
    if op == VOP:
        return (name, VOP_FUNCS[sub], s0, s1, None if s2 == NONE else s2)
    if op in (EXP, BCASTCOL, TRANSPOSE):
        return (name, s0, s1)
    if op == VSCALE:
        return (name, s0, s1, const)
    if op == ROWRED:
        return (name, ROWRED_FUNCS[sub], s0, s1)
    if op == SFU:
        return (name, SFU_FUNCS[sub], s0, s1)
    return (name, s0, x, y)  # masklen


class ProgramBuilder:
    """Appends instructions and builds a `Program`. Generators use it instead of tuples."""

    def __init__(self, tensors: Sequence[str] = MATMUL_TENSORS) -> None:
        self._tensors: list[str] = list(tensors)
        self._tensor_index: dict[str, int] = {name: i for i, name in enumerate(self._tensors)}
        self._rows: list[tuple[int, ...]] = []
        self._consts: dict[int, float] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def tensor(self, name: str) -> int:
        index = self._tensor_index.get(name)
        if index is None:
            index = self._tensor_index[name] = len(self._tensors)
            self._tensors.append(name)
        return index

    def load(self, slot: int, tensor: str, ti: int, tj: int) -> None:
        self._rows.append((LOAD, NONE, slot, NONE, NONE, self.tensor(tensor), ti, tj))

    def store(self, slot: int, tensor: str, ti: int, tj: int) -> None:
        self._rows.append((STORE, NONE, slot, NONE, NONE, self.tensor(tensor), ti, tj))

    def zero(self, slot: int) -> None:
        self._rows.append((ZERO, NONE, slot, NONE, NONE, NONE, NONE, NONE))

    def mxu(self, c: int, a: int, b: int) -> None:
        self._rows.append((MXU, NONE, c, a, b, NONE, NONE, NONE))

    def add_tuple(self, ins: Sequence[object]) -> None:
        if not ins or not isinstance(ins[0], str) or ins[0] not in OPCODES:
            raise ProgramError(f"unknown instruction {ins!r}")
        op = OPCODES[ins[0]]
        try:
            self._rows.append(self._row(op, ins))
        except (TypeError, ValueError, IndexError) as exc:
            raise ProgramError(f"malformed instruction {ins!r}: {exc}") from None
        if op == VSCALE:
            self._consts[len(self._rows) - 1] = float(ins[3])  # type: ignore[arg-type]  # ("vscale", dst, a, k)

    def _row(self, op: int, ins: Sequence[object]) -> tuple[int, ...]:
        def slot(value: object) -> int:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"slot {value!r} is not an integer")
            if value < 0:  # -1 is the "unused" marker: check_slots could not tell it from a slot
                raise ValueError(f"slot {value} is negative")
            return int(value)

        if op in (LOAD, STORE):
            _, s, name, ti, tj = ins
            return (op, NONE, slot(s), NONE, NONE, self.tensor(str(name)), int(ti), int(tj))  # type: ignore[call-overload]
        if op == ZERO:
            _, s = ins
            return (op, NONE, slot(s), NONE, NONE, NONE, NONE, NONE)
        if op == MXU:
            _, c, a, b = ins
            return (op, NONE, slot(c), slot(a), slot(b), NONE, NONE, NONE)
        if op == VOP:
            _, func, d, a, b = ins
            if func not in VOP_FUNCS:
                raise ValueError(f"unknown vector op {func!r}")
            second = NONE if b is None else slot(b)
            if second == NONE and func not in UNARY_VOPS:
                raise ValueError(f"vector op {func!r} needs two operands")
            return (op, VOP_FUNCS.index(str(func)), slot(d), slot(a), second, NONE, NONE, NONE)
        if op in (EXP, BCASTCOL, TRANSPOSE):
            _, d, a = ins
            return (op, NONE, slot(d), slot(a), NONE, NONE, NONE, NONE)
        if op == VSCALE:
            _, d, a, _k = ins
            return (op, NONE, slot(d), slot(a), NONE, NONE, NONE, NONE)
        if op == ROWRED:
            _, func, d, a = ins
            if func not in ROWRED_FUNCS:
                raise ValueError(f"unknown reduction {func!r}")
            return (op, ROWRED_FUNCS.index(str(func)), slot(d), slot(a), NONE, NONE, NONE, NONE)
        if op == SFU:
            _, func, d, a = ins
            if func not in SFU_FUNCS:
                raise ValueError(f"unknown special function {func!r}")
            return (op, SFU_FUNCS.index(str(func)), slot(d), slot(a), NONE, NONE, NONE, NONE)
        _, s, r, c = ins  # masklen
        return (op, NONE, slot(s), NONE, NONE, NONE, int(r), int(c))  # type: ignore[call-overload]

    def build(self) -> Program:
        consts = np.zeros(len(self._rows))
        for index, value in self._consts.items():
            consts[index] = value
        return Program.from_rows(list(self._rows), tuple(self._tensors), consts)
