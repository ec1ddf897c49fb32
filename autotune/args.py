"""Argument types shared by the commands: shapes, slot lists, machine overrides."""
from __future__ import annotations

import argparse

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


def add_machine(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machine", default="", metavar="KEY=VALUE[,KEY=VALUE...]",
                        help="override GA-1 parameters by their chapter names: T, slots, dma_setup, "
                             "dma_words_per_cycle, mxu_cycles, mxu_fill, vpu_lanes, sfu_lanes; or mxu_array=RxC to derive "
                             "mxu_cycles and mxu_fill from a systolic array")


def build_machine(overrides_text: str, slots: int | None) -> Machine:
    try:
        overrides = parse_overrides(overrides_text)
        if slots is not None and "slots" in overrides:
            raise UsageError("give the slot count with --slots or with --machine slots=, not both")
        return machine_from(overrides, slots)
    except MachineError as exc:
        raise UsageError(str(exc)) from None
