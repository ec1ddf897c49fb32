"""The systolic command's array, mapping and assumption flags, read for one design and shape
(shared by its one-GEMM and workload forms)."""

from __future__ import annotations

import argparse

from autotune.cli.errors import UsageError
from simcore.shape import Shape
from simcore.systolic.model import ORDERS, PRESETS, Assumptions, Mapping, SystolicDesign
from simcore.systolic.tie import parse_array


def array_arg(text: str, what: str) -> tuple[int, int]:
    try:
        return parse_array(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None


def chosen_mapping(
    args: argparse.Namespace, design: SystolicDesign, shape: Shape
) -> tuple[Mapping, str]:
    """The mapping asked for, SCALE-Sim's (the whole array), or the best one."""
    rows = cols = None
    if args.mapping is not None:
        rows, cols = array_arg(args.mapping, "--mapping")
        if rows > design.array.rows or cols > design.array.cols:
            raise UsageError(f"--mapping {rows}x{cols} does not fit the {design.array} array")
    if args.mapping is None and args.assume == "scalesim":
        return Mapping(design.array.rows, design.array.cols, args.order or ORDERS[0]), "scalesim"
    if args.mapping is not None and args.order is not None:
        return Mapping(rows, cols, args.order), "given"  # type: ignore[arg-type]
    from simcore.systolic.mapping import best_mapping  # numpy: loaded when the command runs

    try:
        choice = best_mapping(design, shape, rows, cols, (args.order,) if args.order else ORDERS)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return choice.mapping, "best" if args.mapping is None else "best order"


def assumptions_of(args: argparse.Namespace) -> Assumptions:
    """The --assume preset with the flags that override it."""
    base = PRESETS[args.assume]
    return Assumptions(
        shadow=base.shadow if args.shadow is None else args.shadow == "on",
        edges=base.edges if args.edges is None else args.edges,
        drain=base.drain if args.drain is None else args.drain == "charged",
        folds=base.folds if args.folds is None else args.folds,
    )
