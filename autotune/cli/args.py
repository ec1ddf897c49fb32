"""Argument types shared by the commands: shapes, slot lists, machine overrides."""
from __future__ import annotations

import argparse
from pathlib import Path

from simcore.ga1.machine import Machine, MachineError, machine_from, parse_overrides
from simcore.shape import Shape, ShapeError, parse_shape

from autotune.errors import UsageError


def shape_arg(text: str) -> Shape:
    try:
        return parse_shape(text)
    except ShapeError as exc:
        raise UsageError(str(exc)) from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def slots_list(text: str) -> list[int]:
    """'64' or '16,32,64'."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"slots must be integers, got {text!r}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"slots must be positive integers, got {text!r}")
    return values


def add_shape(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--shape", required=required, metavar="MxKxN",
                        help="product shape: A is M x K, B is K x N (for example 128x128x128)")


DEFAULT_SLOTS = 64


def add_machine(parser: argparse.ArgumentParser, slots: bool = True) -> None:
    if slots:
        parser.add_argument("--slots", type=positive_int, default=None,
                            help=f"scratchpad tile slots (default {DEFAULT_SLOTS}; the same as --machine slots=N)")
    parser.add_argument("--machine", default="", metavar="KEY=VALUE[,KEY=VALUE...]",
                        help="override GA-1 parameters by their chapter names: T, slots, dma_setup, "
                             "dma_words_per_cycle, mxu_cycles, mxu_fill, vpu_lanes, sfu_lanes; or mxu_array=RxC to derive "
                             "mxu_cycles and mxu_fill from a systolic array")


def add_results(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=Path("results"), metavar="DIR",
                        help="the results folder (default ./results)")


def add_json(parser: argparse.ArgumentParser, what: str = "one JSON object per row instead of the table") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what}")


def build_machine(overrides_text: str, slots: int | None) -> Machine:
    """The machine of --machine and --slots: either may give the slot count (default 64);
    giving both with different values is the only conflict."""
    try:
        overrides = parse_overrides(overrides_text)
        given = overrides.get("slots")
        if slots is not None and given is not None and given != slots:
            raise UsageError(f"--slots {slots} and --machine slots={given} disagree: give the slot count once")
        return machine_from(overrides, slots if slots is not None else given if given is not None else DEFAULT_SLOTS)  # type: ignore[arg-type]
    except MachineError as exc:
        raise UsageError(str(exc)) from None
