"""The systolic command's `--arch`: a bundled machine, a machine file (TOML) or a SCALE-Sim .cfg
file, read with one-line errors; and the array flags that a machine with its memory replaces."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.cli.errors import UsageError
from autotune.cli.systolic_mapping import assumptions_of
from autotune.cli.workloads import check_input_shape

if TYPE_CHECKING:
    from simcore.energy import Technology
    from simcore.systolic.machine import SystolicMachine
    from simcore.systolic.scalesim_config import ScalesimConfig

# Flags that set the array on its own, with their defaults: an arch gives them.
ARRAY_FLAGS: tuple[tuple[str, str, Any], ...] = (
    ("array", "--array", None),
    ("hbm_words", "--hbm-words", None),
    ("buffers", "--buffers", "2"),
    ("mapping", "--mapping", None),
    ("order", "--order", None),
    ("check", "--check", False),
)
# What a SCALE-Sim configuration fixes besides: its assumptions are SCALE-Sim's own.
SCALESIM_FLAGS: tuple[tuple[str, str, Any], ...] = (
    ("shadow", "--shadow", None),
    ("edges", "--edges", None),
    ("drain", "--drain", None),
    ("folds", "--folds", None),
    ("tech", "--tech", None),
    ("machine", "--machine", None),
    ("tokens", "--tokens", None),
    ("layers", "--layers", None),
    ("evaluations", "--evaluations", None),
)


def is_scalesim_config(arch: str) -> bool:
    return Path(arch).suffix.lower() == ".cfg"


def refuse_flags(
    args: argparse.Namespace, flags: tuple[tuple[str, str, Any], ...], why: str
) -> None:
    for attr, flag, default in flags:
        if getattr(args, attr) != default:
            raise UsageError(f"{flag} does not apply with --arch {args.arch}: {why}")


def load_machine(arch: str, changes: str | None = None) -> SystolicMachine:
    """A bundled machine or a machine file with --machine's dotted KEY=VALUE changes; ArchError
    as one line."""
    from autotune.oracles.systolic_memory.machine import machine_items
    from simcore.systolic.archs import load_arch
    from simcore.systolic.machine import ArchError

    try:
        return load_arch(arch, machine_items(changes or ""))
    except ArchError as exc:
        text = str(exc).splitlines()[0].removeprefix(f"arch {arch}: ")
        given = " with --machine" if changes else ""
        raise UsageError(f"--arch {arch}{given}: {text}") from None


def load_scalesim_config(arch: str) -> ScalesimConfig:
    """A SCALE-Sim 3.0 .cfg file that its memory model reproduces; one line otherwise."""
    from simcore.systolic.scalesim_config import ScalesimConfigError, read_scalesim_config

    try:
        config = read_scalesim_config(arch)
    except ScalesimConfigError as exc:
        raise UsageError(f"--arch {arch}: {str(exc).splitlines()[0]}") from None
    why = config.memory_unsupported()
    if why is not None:
        raise UsageError(f"--arch {arch}: SCALE-Sim's memory model: {why}")
    return config


def technology(path: Path | None) -> Technology:
    """--tech FILE, or the shipped table; a bad table is one line naming the key."""
    from simcore.energy import TechnologyError, load_technology

    try:
        return load_technology(path)
    except TechnologyError as exc:
        raise UsageError(f"--tech {path}: {str(exc).splitlines()[0]}") from None


def run_arch(args: argparse.Namespace) -> int:
    """--arch: a machine with its memory system, or SCALE-Sim's configuration."""
    refuse_flags(args, ARRAY_FLAGS, "the machine gives the array and its memory")
    if args.shape is None and args.workload is None:
        raise UsageError("give --shape MxKxN (one GEMM) or --workload FILE (its GEMMs)")
    if args.shape is not None and args.workload is not None:
        raise UsageError("give --shape MxKxN (one GEMM) or --workload FILE, not both")
    check_input_shape(args.input_shape, args.workload)
    if is_scalesim_config(args.arch):
        if args.assume != "scalesim":
            raise UsageError(
                f"--arch {args.arch} is a SCALE-Sim configuration: give --assume scalesim"
            )
        refuse_flags(args, SCALESIM_FLAGS, "SCALE-Sim's configuration fixes the run")
        config = load_scalesim_config(args.arch)
        if args.dataflow not in ("all", config.dataflow):
            raise UsageError(f"--dataflow {args.dataflow}: {args.arch} runs {config.dataflow}")
        from autotune.cli.commands.systolic_scalesim import run_scalesim

        return run_scalesim(args, config)
    from autotune.cli.commands.systolic_memory import run_shape, run_workload

    for flag, value in (("--tokens", args.tokens), ("--layers", args.layers)):
        if value is not None and args.workload is None:
            raise UsageError(f"{flag} counts the runs of a --workload, not one --shape")
    args.assume = args.assume or "default"
    machine = load_machine(args.arch, args.machine)
    if args.workload is not None:
        return run_workload(args, machine, assumptions_of(args))
    return run_shape(args, machine, assumptions_of(args))
