"""The run's settings, each declared once: its name (the plan's, the API's keyword), its flag,
the kind of its value, its default and its help. The command line builds its options from these
declarations (autotune.cli.args.add_settings) and names the flag of a setting an error names
(`flag_of`); the Python API checks its keywords by the same kinds (`check`), so one setting means
the same, and is refused for the same reasons, in both.

A help text names other settings as `{name}`: the command line writes their flags there."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from autotune.errors import PlanError, SettingTypeError, SettingValueError, Text, ref
from autotune.search.sampling import DEFAULT_SAMPLER
from simcore.shape import parse_int, quoted

_INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)

DEFAULT_TRIALS = 1000  # one product
SHORT_TRIALS = 40  # per GEMM of a workload, per co-design, per machine of `sweep --tuned`
MAX_SEED = 2**32 - 1  # the samplers' (numpy's) seed range
MAX_CP_SAT_SEED = 2**31 - 1  # CP-SAT's random_seed is a 32-bit signed integer
# Worker processes on one machine: beyond a few per core they only contend for it (and a
# mistyped count would spawn processes without end).
MAX_WORKERS = min(256, 4 * (os.cpu_count() or 1))
MAX_COUNT = 1e18  # far past any limit that could finish; keeps a count an exact integer
MAX_BYTES = float(1 << 50)


def strict_int(text: str) -> int:
    """An integer in ASCII digits (Python's int() also takes other scripts' digits and '1_000'),
    of at most MOST_DIGITS digits (past 4,300 int() fails with a message about Python)."""
    if not _INTEGER.fullmatch(text.strip()):
        raise ValueError(f"expected an integer, got {quoted(text)}")
    return parse_int(text, "the number")


def strict_float(text: str) -> float:
    """A finite number in ASCII digits (float() also takes 'nan', 'inf', other scripts' digits)."""
    if not _NUMBER.fullmatch(text.strip()):
        raise ValueError(f"expected a finite number, got {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


@dataclass(frozen=True)
class Kind:
    """What a setting's value is: `read` turns a flag's text into it, `check` refuses a value
    (ValueError, the reason); both by one rule."""

    read: Callable[[str], Any] = str
    check: Callable[[Any], None] = lambda value: None

    def __call__(self, text: str) -> Any:
        value = self.read(text)
        self.check(value)
        return value


def integer(
    low: int | None = None, high: int | None = None, named: str = "", between: bool = False
) -> Kind:
    """Whole numbers within [low, high] (`between`: a range, its refusal names both ends)."""

    def check(value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an integer, got {value!r}")
        if between and not low <= value <= high:  # type: ignore[operator]
            raise ValueError(f"must be between {low} and {high} ({named or high}), got {value}")
        if low is not None and value < low:
            bound = "must be at least 1" if low == 1 else f"must not be below {low}"
            raise ValueError(f"{'must not be negative' if low == 0 else bound}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"must be at most {high}{f' ({named})' if named else ''}, got {value}")

    return Kind(strict_int, check)


def _positive_number(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a positive number, got {value}")


def _count(text: str) -> int:
    number = strict_float(text)
    if number > MAX_COUNT:
        raise ValueError(f"at most {MAX_COUNT:.0e}, got {text!r}")
    return int(number)


def _bytes(text: str) -> int:
    """'8G', '512M', '2000000000'."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    raw = text.strip().upper().removesuffix("B")
    scale = units.get(raw[-1:], 1)
    try:
        value = strict_float(raw[:-1] if raw[-1:] in units else raw) * scale
    except ValueError:
        raise ValueError(f"expected a size like 8G or 512M, got {text!r}") from None
    if not math.isfinite(value) or value > MAX_BYTES:
        raise ValueError(f"the memory limit must be at most 1 PB, got {text!r}")
    if value <= 0:
        raise ValueError(f"the memory limit must be positive, got {text!r}")
    return int(value)


TEXT = Kind()
PATH = Kind(Path)
POSITIVE = integer(1)
NOT_NEGATIVE = integer(0)
POSITIVE_NUMBER = Kind(strict_float, _positive_number)
# A trial takes a millisecond at the least: more than this would run for days and fill a
# journal of a hundred gigabytes, so it is refused before the first.
MAX_TRIALS = 100_000_000
TRIALS = integer(1, MAX_TRIALS, "about a day at a millisecond a trial")
SEED = integer(0, MAX_SEED, "2**32 - 1", between=True)
CP_SAT_SEED = integer(0, MAX_CP_SAT_SEED, "2**31 - 1", between=True)
WORKERS = integer(1, MAX_WORKERS, "4 per CPU, at most 256")
COUNT = Kind(_count, integer(1).check)
BYTES = Kind(_bytes, integer(1).check)
FLAG = Kind(bool)  # a switch: its flag takes no value


@dataclass(frozen=True)
class Setting:
    name: str  # the plan's field or the API's keyword
    flag: str
    help: str | Callable[[], str]  # names other settings as {name}; a callable is read late
    kind: Kind = TEXT
    default: Any = None
    metavar: str | None = None
    choices: Callable[[], Sequence[str]] | None = None
    repeated: bool = False  # the flag may be given several times: a list of values
    extra: dict[str, Any] = field(default_factory=dict)  # what a command adds (dest, ...)

    def text(self) -> str:
        return self.help() if callable(self.help) else self.help

    def but(self, **changes: Any) -> Setting:
        """This setting as one command takes it (another help, default or kind)."""
        return replace(self, **changes)


def _setting(*found: Setting) -> dict[str, Setting]:
    return {s.name: s for s in found}


def _workload_help() -> str:
    from workloads.formats import described

    return (
        f"{described()}, or a bundled network's name (workloads/networks/; `autotune gemms FILE` "
        "lists its GEMMs): tune each, or co-design with {search_machine}"
    )


def _sampler_help() -> str:
    from autotune.search.sampling import described

    return described()


def _samplers() -> Sequence[str]:
    from autotune.search.sampling import names

    return names()


def _oracle_help() -> str:
    from autotune import oracles

    return (
        f"the cost model: {', '.join(oracles.names())} (default {oracles.DEFAULT_ORACLE}; any "
        "package registered in the entry-point group autotune.oracles)"
    )


def _objectives_help() -> str:
    """Every installed oracle's objectives, from their measures (autotune.oracles.measures)."""
    from autotune import oracles
    from autotune.oracles.measures import describe, objectives

    parts, defaults, maximised, fixed = [], [], [], []
    for name in oracles.names():
        try:
            oracle = oracles.get(name)
        except PlanError:
            continue
        parts.append(f"{name}: {describe(oracle.measures)}")
        if tuple(oracle.default_objectives) != ("cycles",):
            defaults.append(f"{name}: {','.join(oracle.default_objectives)}")
        declared = objectives(oracle.measures)
        maximised += [m.name + (f" ({m.why})" if m.why else "") for m in declared if m.maximized]
        alone = [m.name for m in declared if m.machine_only]
        if alone:
            fixed.append(f"{name}'s {', '.join(alone)}")
    return (
        "objectives, cycles first, e.g. cycles,energy,area (default cycles"
        + "".join(f"; {d}" for d in defaults)
        + "). "
        + "; ".join(parts)
        + (
            f". Maximised: {', '.join(dict.fromkeys(maximised))}, the others minimised"
            if maximised
            else ""
        )
        + "; several give a Pareto front"
        + (
            f". {'; '.join(fixed)} need {{search_machine}} (a fixed machine has one value of each)"
            if fixed
            else ""
        )
    )


def _trials_help() -> str:
    return (
        "the finished trials the study holds when the run ends, the seeded baseline included "
        f"(default {DEFAULT_TRIALS}; {{workload}}: per GEMM study, or machines with "
        f"{{search_machine}}, default {SHORT_TRIALS}): a rerun of a finished study reports it "
        "and runs nothing, an interrupted one finishes the rest; {more_trials} adds trials"
    )


SETTINGS: dict[str, Setting] = _setting(
    # --- what is tuned (the plan) ------------------------------------------------------------------
    Setting(
        "shape",
        "--shape",
        "product shape: A is M x K, B is K x N (for example 128x128x128)",
        metavar="MxKxN",
    ),
    Setting("workload", "--workload", _workload_help, metavar="FILE"),
    Setting(
        "input_shapes",
        "--input-shape",
        "an ONNX input's shape, NAME=1x3x224x224 (repeatable): needed for inputs with dynamic "
        "dimensions",
        metavar="NAME=1x3x224x224",
        repeated=True,
        default=[],
    ),
    Setting("oracle", "--oracle", _oracle_help, metavar="NAME"),
    Setting(
        "machine",
        "--machine",
        "the oracle's machine parameters. GA-1, by the chapter's names: T, slots, dma_setup, "
        "dma_words_per_cycle, mxu_cycles, mxu_fill, vpu_lanes, sfu_lanes; or mxu_array=RxC to "
        "derive mxu_cycles and mxu_fill from a systolic array. systolic: pe_budget, "
        "max_hbm_words",
        metavar="KEY=VALUE[,KEY=VALUE...]",
    ),
    Setting(
        "arch",
        "--arch",
        "a systolic machine with its memory system: a bundled architecture's name "
        "(python -m autotune archs lists them), an architecture file (TOML), or a SCALE-Sim "
        ".cfg file",
        metavar="NAME|FILE",
    ),
    Setting(
        "slots",
        "--slots",
        "GA-1 scratchpad tile slots (default 64; the same as {machine} slots=N)",
        POSITIVE,
    ),
    Setting(
        "max_hbm_words",
        "--max-hbm-words",
        "systolic: most memory words per cycle ({machine} max_hbm_words=N, default 64)",
        POSITIVE,
    ),
    Setting(
        "pe_budget",
        "--pe-budget",
        "systolic: most processing elements ({machine} "
        "pe_budget=N); co-design: most MACs per cycle (default 4096)",
        POSITIVE,
    ),
    Setting(
        "spaces",
        "--space",
        "search spaces to combine (default: the oracle's; ga1: chapter,delayed, where delayed "
        "is the general and strip orders with each store delay; ga1 also has general and "
        "strips without the delay; systolic: systolic)",
    ),
    Setting("objectives", "--objectives", _objectives_help, metavar="LIST"),
    Setting(
        "search_machine",
        "--search-machine",
        "also search slots, dma_setup, dma_words_per_cycle and mxu_cycles",
        FLAG,
        False,
    ),
    Setting(
        "machine_range",
        "--machine-range",
        "ranges for {search_machine}",
        default="",
        metavar="KEY=LOW:HIGH|KEY=A|B,...",
    ),
    Setting(
        "max_scratchpad_words",
        "--max-scratchpad-words",
        "scratchpad budget in words for {search_machine} (default: the base machine's)",
        POSITIVE,
    ),
    Setting(
        "max_dma_words_per_cycle",
        "--max-dma-words-per-cycle",
        "{workload} {search_machine}: most DMA words per cycle (a constraint)",
        POSITIVE,
    ),
    Setting(
        "technology",
        "--tech",
        "a technology table (TOML) to cost energy and area with, instead of the shipped 45 nm "
        "one (see docs/energy.md)",
        PATH,
        metavar="FILE",
    ),
    Setting(
        "area_budget",
        "--area-budget",
        "{search_machine} (or the systolic oracle): most area in mm2, graded before a machine "
        "is simulated",
        POSITIVE_NUMBER,
        metavar="MM2",
    ),
    Setting(
        "energy_budget",
        "--energy-budget",
        "{search_machine} (or the systolic oracle): most energy in pJ of the product (a "
        "workload: its weighted total), graded once the candidate has run",
        POSITIVE_NUMBER,
        metavar="PJ",
    ),
    Setting(
        "max_products",
        "--max-products",
        "most units of work (tile products) an evaluation simulates in full (default: the "
        "oracle's own, about 20 s of simulation): a larger shape is timed periodically, in "
        "milliseconds, and its schedules that never settle into a period are refused",
        COUNT,
        metavar="N",
    ),
    # --- how it is run (the options) ---------------------------------------------------------------
    Setting("trials", "--trials", _trials_help, TRIALS),
    Setting(
        "more_trials",
        "--more-trials",
        "run this many trials more than the study holds (instead of a {trials} target; a "
        "workload: on each GEMM study)",
        POSITIVE,
        metavar="N",
    ),
    Setting(
        "timeout", "--timeout", "stop starting new trials after this many seconds", POSITIVE_NUMBER
    ),
    Setting("sampler", "--sampler", _sampler_help, default=DEFAULT_SAMPLER, choices=_samplers),
    Setting(
        "seed",
        "--seed",
        "sampler seed, 0 to 2**32 - 1: the same seed gives the same study (default 0; one worker)",
        SEED,
        0,
    ),
    Setting(
        "allow_sampler_change",
        "--allow-sampler-change",
        "resume a study with another {sampler} or {seed} (each trial records its own)",
        FLAG,
        False,
    ),
    Setting(
        "all_trials",
        "--all-trials",
        "run every trial of the budget even once the best equals the proven lower bound (by "
        "default a study whose only objective is cycles stops there: it cannot improve)",
        FLAG,
        False,
    ),
    Setting("study", "--study", "study name (default derived from shape, machine and space)"),
    Setting(
        "storage",
        "--storage",
        "where the study lives: a journal file path, an RDB URL (sqlite:///file.db, "
        "postgresql://user@host/db) or :memory: (default: the journal "
        "results/<study>/study.journal, or the study.db of a study begun before it)",
    ),
    Setting(
        "results",
        "--results",
        "the results folder (default ./results)",
        PATH,
        Path("results"),
        metavar="DIR",
    ),
    Setting(
        "workers",
        "--workers",
        f"worker processes sharing the study on this machine (at most "
        f"{MAX_WORKERS}: 4 per CPU, at most 256)",
        WORKERS,
        1,
    ),
    Setting(
        "heartbeat",
        "--heartbeat",
        "RDB storage heartbeat; a trial silent for 2 x this is failed and retried (default "
        "5 s, grace 20 s; a journal needs none: a dead worker's trial is retried at once)",
        POSITIVE,
        metavar="SECONDS",
    ),
    Setting(
        "verify_top",
        "--verify-top",
        "entries re-run functionally and hazard-checked, besides every Pareto entry (default "
        "10; {workload}: each GEMM's winner; a co-design: the best machine)",
        NOT_NEGATIVE,
    ),
    Setting(
        "starts",
        "--enqueue",
        "start from the schedule(s) of FILE, written by `autotune export STUDY --format json`",
        PATH,
        metavar="FILE",
    ),
    Setting(
        "transfer",
        "--transfer",
        "also start from the best schedules of earlier studies on nearby shapes and machines "
        "(in {results}, or {storage}), scaled to this shape; each such trial records its "
        "origin",
        FLAG,
        False,
    ),
    Setting(
        "max_memory",
        "--max-memory",
        "refuse work whose peak memory, the process's own included, would pass this, e.g. 8G "
        "(default 1G)",
        BYTES,
        metavar="SIZE",
    ),
    # --- the other commands' -----------------------------------------------------------------------
    Setting("out", "--out", "the output file", PATH),
    Setting("force", "--force", "replace the {out} file if it exists", FLAG, False),
    Setting("reference", "--reference", "the reference record file", PATH),
    Setting("enqueue", "--enqueue", "a study to put the result into", metavar="STUDY"),
    Setting(
        "time_limit",
        "--time-limit",
        "stop after this many wall seconds",
        POSITIVE_NUMBER,
        metavar="SECONDS",
    ),
    Setting(
        "work_limit",
        "--work-limit",
        "stop after this much deterministic time",
        POSITIVE_NUMBER,
        metavar="UNITS",
    ),
    Setting(
        "proof_limit",
        "--proof-limit",
        "deterministic time per proof question",
        POSITIVE_NUMBER,
        metavar="UNITS",
    ),
    Setting(
        "search_nodes",
        "--search-nodes",
        "most states an exhaustive search visits",
        NOT_NEGATIVE,
        metavar="STATES",
    ),
)


def flag_of(name: str | None) -> str | None:
    """The flag of a setting an error names (None: no such setting)."""
    found = SETTINGS.get(name or "")
    return found.flag if found is not None else None


def help_of(setting: Setting) -> str:
    """The setting's help with the flags of the settings it names."""
    return setting.text().format_map({name: s.flag for name, s in SETTINGS.items()})


def check(name: str, value: Any) -> Any:
    """`value` of setting `name` as the API gives it: SettingTypeError (a TypeError) or
    SettingValueError (a ValueError), naming the setting, when its kind refuses it; None is
    always taken (the default)."""
    if value is None:
        return value
    try:
        SETTINGS[name].kind.check(value)
    except TypeError as exc:
        raise SettingTypeError(Text(ref(name), f" {exc}"), setting=name) from None
    except ValueError as exc:
        raise SettingValueError(Text(ref(name), f" {exc}"), setting=name) from None
    return value


__all__ = ["SETTINGS", "Kind", "Setting", "Text", "check", "flag_of", "help_of", "ref"]
