"""A strict command line: every option at most once, integers and numbers in ASCII digits.

argparse keeps the last of a repeated option and drops the others without a word, and Python's
int() and float() take digits of every script ('١٢٨'), underscores, 'nan' and 'inf'. Every parser
of the command line is made strict here, once (`strict`), so each `type=int` is ASCII-only."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

from simcore.shape import parse_int, quoted

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def strict_int(text: str) -> int:
    """An integer in ASCII digits (Python's int() also takes other scripts' digits and '1_000')."""
    if not _INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected an integer, got {quoted(text)}")
    try:  # at most MOST_DIGITS digits: int() of thousands fails with a message about Python
        return parse_int(text, "the number")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def strict_float(text: str) -> float:
    """A finite number in ASCII digits (float() also takes 'nan', 'inf', other scripts' digits)."""
    if not _NUMBER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {quoted(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {quoted(text)}")
    return value


class StoreOnce(argparse._StoreAction):
    """An option given twice is refused: argparse would keep the last value and drop the first
    without a word."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given = namespace.__dict__.setdefault("_given_once", {})
        if option_string is not None and self.dest in given:
            raise argparse.ArgumentError(
                self, f"given twice ({given[self.dest]!r} and {values!r}): give it once"
            )
        given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


def strict(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make `parser` strict: every option at most once, no empty values, integers and numbers in
    ASCII digits."""
    convert = parser._get_value

    def get_value(action: argparse.Action, text: str) -> Any:
        # An empty value is a mistake (--study "" would name no study, --results "" the working
        # folder), except where the default itself is empty.
        if (
            isinstance(text, str)
            and not text.strip()
            and action.default != ""
            and action.nargs not in (argparse.PARSER, argparse.REMAINDER)
        ):  # a command's own arguments
            raise argparse.ArgumentError(action, "is empty: give a value, or leave the option out")
        return convert(action, text)

    parser._get_value = get_value  # type: ignore[method-assign,assignment]
    parser.register("action", None, StoreOnce)
    parser.register("action", "store", StoreOnce)
    parser.register("type", int, strict_int)
    parser.register("type", float, strict_float)
    return parser
