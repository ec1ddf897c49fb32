"""GA-1 programs as text: one instruction per line, in the vocabulary of the chapter's listing
(`ga.py`): the instruction's name, then its operands in the listing's tuple order.

    load SLOT TENSOR TI TJ      DMA: DRAM tile (ti, tj) of TENSOR -> slot
    store SLOT TENSOR TI TJ     DMA: slot -> DRAM tile
    zero SLOT                   vector unit: slot := 0
    mxu C A B                   matrix unit: slot C += slot A @ slot B
    vop FUNC DST A B|-          elementwise (B is - for relu and neg)
    exp DST A / vscale DST A K / rowred FUNC DST A / bcastcol DST A / masklen SLOT ROWS COLS
    sfu FUNC DST A / transpose DST A     the extensions beyond the chapter (docs/vector.md)

`#` starts a comment; blank lines are skipped. `from_text(to_text(p))` rebuilds `p` exactly,
and each line is the listing's tuple `(name, operand, ...)` written out."""

from __future__ import annotations

import re

from simcore.ga1.program import OPCODES, Program, ProgramBuilder, ProgramError, instruction_tuple
from simcore.shape import parse_int, quoted

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _operand(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if isinstance(value, str) and not _NAME.match(text):
        raise ProgramError(f"tensor name {text!r} cannot be written as text")
    return text


TEXT_CHUNK = 1 << 14  # instructions turned into text at a time: the program is never held as tuples


def to_text(program: Program) -> str:
    """One line per instruction: `load 0 A 3 1`, `mxu 2 0 1`, ..."""
    parts = []
    for at in range(0, len(program), TEXT_CHUNK):
        rows = program.code[at : at + TEXT_CHUNK].tolist()
        consts = program.consts[at : at + TEXT_CHUNK].tolist()
        parts.append(
            "".join(
                " ".join(_operand(x) for x in instruction_tuple(row, program.tensors, k)) + "\n"
                for row, k in zip(rows, consts)
            )
        )
    return "".join(parts)


def instruction(line: str) -> tuple[object, ...]:
    """One line's tuple in the listing's form, e.g. ('load', 0, 'A', 3, 1)."""
    words = line.split()
    name = words[0]
    if name not in OPCODES:
        raise ProgramError(f"unknown instruction {quoted(name)}")
    operands: list[object] = []
    for index, word in enumerate(words[1:], start=1):
        if word == "-":
            operands.append(None)
        elif name == "vscale" and index == 3:
            operands.append(float(word))
        elif re.fullmatch(r"-?[0-9]+", word, re.ASCII):
            operands.append(parse_int(word, f"operand {index}"))
        else:
            operands.append(word)
    return (name, *operands)


def tuples(text: str) -> list[tuple[object, ...]]:
    """The instructions of a text program as the listing's tuples (for its `Sim.run`); a
    malformed line is a ProgramError naming its line number."""
    builder = ProgramBuilder()  # checks each instruction's operands as the program would
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            found.append(instruction(line))
            builder.add_tuple(found[-1])
        except (ProgramError, ValueError) as exc:
            raise ProgramError(f"line {number}: {exc}: {quoted(raw.strip())}") from None
    return found


def from_text(text: str) -> Program:
    """The program a text holds."""
    return Program.from_tuples(tuples(text))
