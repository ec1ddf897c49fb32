"""The workload arguments the commands share: `--input-shape` (an ONNX input's shape) and
loading a workload file with its warnings, every bad file one line (exit status 2)."""

from __future__ import annotations

import argparse
import re
import sys

from autotune.cli.errors import UsageError
from autotune.run.resolve import workload_source
from workloads import DynamicShapeError, Workload, WorkloadError, load_workload
from workloads.formats import described, installed

INPUT_SHAPE_HELP = (
    "an ONNX input's shape, NAME=1x3x224x224 (repeatable): needed for inputs with "
    "dynamic dimensions"
)
_INPUT_SHAPE = re.compile(r"^(?P<name>.+)=(?P<dims>[0-9]+(?:[xX][0-9]+)*)$")  # ASCII digits only


def workload_help(what: str = "") -> str:
    """What --workload takes, from the installed formats, then `what` the command does with it."""
    return f"{described()}, or a bundled network's name (workloads/networks/){what}"


def format_titles() -> str:
    """The installed formats' names, for a short help line: "TOML, CSV, ..."."""
    return ", ".join(f.title for f in installed())


def add_input_shape(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="NAME=1x3x224x224",
        help=INPUT_SHAPE_HELP,
    )


def parse_input_shapes(values: list[str]) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for text in values:
        match = _INPUT_SHAPE.match(text.strip())
        if not match:
            raise UsageError(f"--input-shape expects NAME=1x3x224x224, got {text!r}")
        dims = tuple(int(d) for d in re.split("[xX]", match["dims"]))
        if any(d < 1 for d in dims):
            raise UsageError(f"--input-shape {text!r}: every dimension must be at least 1")
        if match["name"] in shapes:
            raise UsageError(f"--input-shape gives input {match['name']!r} twice")
        shapes[match["name"]] = dims
    return shapes


def check_input_shape(input_shape: list[str], workload: str | None) -> None:
    """--input-shape sets an ONNX model's inputs: refused without a workload to apply it to."""
    if input_shape and workload is None:
        raise UsageError(
            f"--input-shape {input_shape[0]} applies to an ONNX model: give --workload MODEL.onnx"
        )


def load(path: str, input_shape: list[str]) -> Workload:
    """The workload, its warnings printed; a bad file is a UsageError (one line, exit 2)."""
    try:
        workload = load_workload(workload_source(path), parse_input_shapes(input_shape) or None)
    except DynamicShapeError as exc:
        example = "x".join(str(d or 1) for d in exc.dims) or "1x3x224x224"
        raise UsageError(f"{exc} (--input-shape {exc.input_name}={example})") from None
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None
    for warning in workload.warnings:
        print(f"autotune: warning: {warning}", file=sys.stderr)
    return workload
