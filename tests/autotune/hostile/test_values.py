"""Strict inputs: whatever would be silently ignored, duplicated, defaulted or overflowed is
refused in one line that names the input; nothing is created."""

from __future__ import annotations

import pytest

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]
TUNE = [*SHAPE, "--trials", "2", "--study", "fresh"]


def case(*argv: str, named: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    return list(argv), named


REPEATED = [
    case(
        *TUNE,
        "--machine",
        "slots=32",
        "--machine",
        "slots=16",
        named=("--machine", "given twice", "slots=32"),
    ),
    case(
        *TUNE, "--machine", "slots=32", "--machine", "slots=32", named=("--machine", "given twice")
    ),
    case(*TUNE, "--trials", "5", named=("--trials", "given twice")),
    case(*TUNE, "--study", "other", named=("--study", "given twice")),
    case(*TUNE, "--shape", "32x32x32", named=("--shape", "given twice")),
    case(*TUNE, "--space", "general", named=("--space", "given twice")),
    case(*TUNE, "--seed", "1", "--seed", "2", named=("--seed", "given twice")),
    case(*TUNE, "--oracle", "ga1", "--oracle", "systolic", named=("--oracle", "given twice")),
    case(
        *TUNE,
        "--objectives",
        "cycles",
        "--objectives",
        "cycles,tiles_moved",
        named=("--objectives", "given twice"),
    ),
    case(*TUNE, "--results", "r1", "--results", "r2", named=("--results", "given twice")),
    case(
        "baseline",
        "--shape",
        "16x16x16",
        "--schedules",
        "1x1:1",
        "--schedules",
        "2x2:2",
        named=("--schedules", "given twice"),
    ),
    case("sweep", "--shape", "16x16x16", "--shape", "32x32x32", named=("--shape", "given twice")),
    case("leaderboard", "base", "--top", "1", "--top", "2", named=("--top", "given twice")),
    case("show", "base", "--rank", "1", "--rank", "2", named=("--rank", "given twice")),
    case(
        "export", "base", "--format", "json", "--format", "asm", named=("--format", "given twice")
    ),
    case("plot", "base", "--out", "p1", "--out", "p2", named=("--out", "given twice")),
    case(
        "studies",
        "--storage",
        "a.journal",
        "--storage",
        "b.journal",
        named=("--storage", "given twice"),
    ),
    case(
        "systolic",
        "--shape",
        "8x8x8",
        "--array",
        "4x4",
        "--array",
        "8x8",
        named=("--array", "given twice"),
    ),
]

EMPTY = [
    case(*SHAPE, "--trials", "2", "--study", "", named=("--study", "is empty")),
    case("--shape", "16x16x16", "--trials", "2", "--space", "", named=("--space", "is empty")),
    case(*TUNE, "--storage", "", named=("--storage", "is empty")),
    case(*TUNE, "--machine", "", named=("--machine", "is empty")),
    case(*TUNE, "--machine", ",,,", named=("--machine is empty",)),
    case("--shape", "16x16x16", "--trials", "2", "--space", ",,", named=("--space is empty",)),
    case(*TUNE, "--objectives", "", named=("--objectives", "is empty")),
    case(*TUNE, "--objectives", " , ", named=("--objectives is empty",)),
    case(*TUNE, "--results", "", named=("--results", "is empty")),
    case(*TUNE, "--enqueue", "", named=("--enqueue", "is empty")),
    case("--shape", "", named=("--shape", "is empty")),
    case("--workload", "", named=("--workload", "is empty")),
    case(
        "baseline",
        "--shape",
        "16x16x16",
        "--schedules",
        ",",
        named=("--schedules", "names no schedule"),
    ),
    case("sweep", "--schedules", ",", named=("--schedules", "names no schedule")),
    case("leaderboard", "", named=("PATH_OR_STUDY", "is empty")),
    case("export", "base", "--out", "", named=("--out", "is empty")),
]

NOT_ASCII = [
    case(*SHAPE, "--trials", "\uff15", "--study", "x", named=("--trials", "'\uff15'")),
    case(*TUNE, "--seed", "\u0663", named=("--seed", "'\u0663'")),
    case(*TUNE, "--workers", "\uff12", named=("--workers",)),
    case(*TUNE, "--top", "\u0661", named=("--top",)),
    case("--shape", "\uff132x32x32", named=("--shape", "malformed shape")),
    case("--shape", "32x\u06632x32", named=("--shape", "malformed shape")),
    case("--shape", "16\u00d716\u00d716", named=("--shape", "malformed shape")),
    case(*TUNE, "--machine", "slots=\uff16\uff14", named=("--machine", "slots needs an integer")),
    case(*TUNE, "--slots", "\uff16\uff14", named=("--slots",)),
    case(*TUNE, "--max-products", "\uff15", named=("--max-products",)),
    case(*TUNE, "--max-memory", "\uff15G", named=("--max-memory",)),
    case(*TUNE, "--heartbeat", "\uff15", named=("--heartbeat",)),
    case(*TUNE, "--timeout", "\uff15", named=("--timeout",)),
    case(
        *TUNE,
        "--search-machine",
        "--machine-range",
        "slots=\uff18:16",
        named=("--machine-range", "integer"),
    ),
    case("baseline", "--shape", "16x16x16", "--slots", "\uff16\uff14", named=("--slots",)),
    case("sweep", "--machine-grid", "dma_setup=\uff14", named=("--machine-grid", "integers")),
    case(
        "tile-model",
        "--shape",
        "8x8x8",
        "--tile",
        "\uff14x4x4",
        "--operand-bytes",
        "1",
        "--accumulator-bytes",
        "4",
        named=("malformed tile",),
    ),
    case(
        "systolic", "--shape", "8x8x8", "--array", "\uff18x8", named=("--array", "malformed array")
    ),
    case(
        "systolic",
        "--shape",
        "8x8x8",
        "--array",
        "8x8",
        "--hbm-words",
        "\uff15",
        named=("--hbm-words",),
    ),
    case(
        *TUNE,
        "--oracle",
        "systolic",
        "--machine",
        "pe_budget=\uff16\uff14",
        named=("--machine", "pe_budget"),
    ),
]

NOT_FINITE = [
    case(*TUNE, "--timeout", "nan", named=("--timeout", "finite")),
    case(*TUNE, "--timeout", "inf", named=("--timeout", "finite")),
    case(*TUNE, "--timeout", "-inf", named=("--timeout",)),
    case(*TUNE, "--trials", "1_0", named=("--trials", "'1_0'")),
    case(*TUNE, "--max-products", "inf", named=("--max-products",)),
    case(*TUNE, "--max-products", "1e400", named=("--max-products",)),
    case(*TUNE, "--max-products", "1e30", named=("--max-products", "at most")),
    case(*TUNE, "--max-memory", "1e400G", named=("--max-memory",)),
    case(*TUNE, "--max-memory", "nanG", named=("--max-memory",)),
    case(
        "systolic",
        "--shape",
        "8x8x8",
        "--array",
        "8x8",
        "--hbm-words",
        "inf",
        named=("--hbm-words",),
    ),
    case(
        "systolic",
        "--shape",
        "8x8x8",
        "--array",
        "8x8",
        "--hbm-words",
        "nan",
        named=("--hbm-words",),
    ),
]

IGNORED = [
    case(*TUNE, "--oracle", "systolic", "--slots", "32", named=("--slots 32", "systolic")),
    case(
        "--shape",
        "16x16x16",
        "--trials",
        "2",
        "--oracle",
        "systolic",
        "--machine",
        "slots=32",
        named=("--machine", "slots=32"),
    ),
    case(*TUNE, "--pe-budget", "64", named=("--pe-budget 64", "co-design")),
    case(*TUNE, "--max-hbm-words", "64", named=("--max-hbm-words 64", "ga1")),
    case(
        *TUNE,
        "--max-scratchpad-words",
        "4096",
        named=("--max-scratchpad-words", "--search-machine"),
    ),
    case(*TUNE, "--machine-range", "slots=8:16", named=("--machine-range", "--search-machine")),
    case(*TUNE, "--max-dma-words-per-cycle", "8", named=("--max-dma-words-per-cycle",)),
    case(
        "--workload",
        "w.csv",
        "--space",
        "chapter",
        "--trials",
        "2",
        "--search-machine",
        "--transfer",
        named=("--transfer", "co-design"),
    ),
    case("sweep", "--trials", "5", named=("--trials", "--tuned")),
    case("baseline", "--shape", "16x16x16", "--slots", "16,16", named=("--slots", "twice")),
    case("sweep", "--machine-grid", "slots=16,16", named=("--machine-grid", "twice")),
    case(
        "sweep",
        "--machine-grid",
        "slots=16",
        "--machine-grid",
        "slots=32",
        named=("--machine-grid", "slots twice"),
    ),
    case(
        "baseline",
        "--shape",
        "16x16x16",
        "--schedules",
        "1x1:1,1x1:1",
        named=("--schedules", "twice"),
    ),
    case(
        *TUNE,
        "--search-machine",
        "--machine-range",
        "slots=8:16,slots=16:32",
        named=("--machine-range", "twice"),
    ),
    case(*TUNE, "--machine", "dma_setup=4,dma_setup=8", named=("--machine", "dma_setup twice")),
    case(*TUNE, "--slots", "32", "--machine", "slots=16", named=("--slots 32", "disagree")),
]

OBJECTIVES = [
    case(*TUNE, "--objectives", "cycles,cycles", named=("--objectives", "twice")),
    case(*TUNE, "--objectives", "cycles, cycles", named=("--objectives", "twice")),
    case(*TUNE, "--objectives", "cycles,tiles_moved,tiles_moved", named=("--objectives", "twice")),
    case(*TUNE, "--objectives", "joules", named=("--objectives", "joules")),
    case(*TUNE, "--objectives", "tiles_moved", named=("--objectives", "first objective")),
    case(*TUNE, "--objectives", "Cycles", named=("--objectives", "Cycles")),
]

MALFORMED = [
    case("--shape", "12x12", named=("--shape", "'12x12'")),
    case("--shape", "axbxc", named=("--shape", "'axbxc'")),
    case("--shape", "0x8x8", named=("--shape", "must be positive")),
    case("--shape", "8x8x8x8", named=("--shape", "'8x8x8x8'")),
    case("--shape", "8 8 8", named=("--shape", "'8 8 8'")),
    case("--shape", "8x8x", named=("--shape", "'8x8x'")),
    case(*TUNE, "--machine", "foo=1", named=("--machine", "'foo'")),
    case(*TUNE, "--machine", "slots", named=("--machine", "KEY=VALUE")),
    case(*TUNE, "--machine", "slots=", named=("--machine", "slots")),
    case(*TUNE, "--machine", "slots=abc", named=("--machine", "'abc'")),
    case(*TUNE, "--machine", "slots=2", named=("--machine", "too small")),
    case(*TUNE, "--machine", "T=0", named=("--machine", "T")),
    case(*TUNE, "--machine", "mxu_array=0x4", named=("--machine", "mxu_array")),
    case(*TUNE, "--sampler", "anneal", named=("--sampler", "'anneal'")),
    case(*TUNE, "--oracle", "nosuch", named=("--oracle", "'nosuch'")),
    case(*TUNE, "--workers", "0", named=("--workers", "at least 1")),
    case(*TUNE, "--verify-top", "-1", named=("--verify-top",)),
    case(
        *TUNE, "--search-machine", "--machine-range", "slots=9:3", named=("--machine-range", "9..3")
    ),
    case(
        *TUNE,
        "--search-machine",
        "--machine-range",
        "bogus=1:2",
        named=("--machine-range", "bogus"),
    ),
    case("baseline", "--shape", "16x16x16", "--schedules", "9x", named=("--schedules",)),
    case("sweep", "--machine-grid", "nokey=1", named=("--machine-grid", "nokey")),
    case("sweep", "--machine-grid", "slots=", named=("--machine-grid", "no values")),
    case(
        "systolic",
        "--shape",
        "8x8x8",
        "--array",
        "8x8",
        "--buffers",
        "3",
        named=("--buffers", "'3'"),
    ),
    case(
        "tile-model",
        "--shape",
        "8x8x8",
        "--tile",
        "0x4x4",
        "--operand-bytes",
        "1",
        "--accumulator-bytes",
        "4",
        named=("tile_m",),
    ),
]

ALL = (
    [("repeated", c) for c in REPEATED]
    + [("empty", c) for c in EMPTY]
    + [("not-ascii", c) for c in NOT_ASCII]
    + [("not-finite", c) for c in NOT_FINITE]
    + [("ignored", c) for c in IGNORED]
    + [("objectives", c) for c in OBJECTIVES]
    + [("malformed", c) for c in MALFORMED]
)


@pytest.mark.parametrize(("kind", "given"), ALL, ids=[f"{k}-{i}" for i, (k, _) in enumerate(ALL)])
def test_a_strict_input_is_refused_naming_it(
    hostile, kind: str, given: tuple[list[str], tuple[str, ...]]
) -> None:  # type: ignore[no-untyped-def]
    argv, named = given
    hostile.refuses(argv, *named)
