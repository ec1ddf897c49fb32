"""Smoke tests of `autotune systolic` and `autotune tile-model`: output, JSON keys, bad input."""

from __future__ import annotations

import json

import pytest

from autotune.cli.main import main
from simcore.tile_model import DERIVED_MEMBERS


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --- systolic ------------------------------------------------------------------------------


def test_systolic_text_is_verified_for_small_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systolic", "--shape", "6x6x6", "--array", "3x3"]) == 0
    out = capsys.readouterr().out
    assert "31" in out and "77.4%" in out and "words per MAC" in out and "partial-sum" in out
    assert "compulsory traffic MK + KN + MN = 108 words" in out
    # every dataflow ran its own cycle model on the design itself
    assert out.count("verified (exact)") == 3 and "checked (" not in out


def test_systolic_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        [
            "systolic",
            "--shape",
            "6x6x6",
            "--array",
            "3x3",
            "--hbm-words",
            "1",
            "--buffers",
            "1",
            "--mapping",
            "3x3",
            "--order",
            "col-outer",
            "--json",
        ],
    )
    assert {
        "cycles",
        "mac_utilization",
        "words_per_mac",
        "tiles",
        "compulsory_words",
        "assumptions",
    } <= set(out)
    assert out["cycles"] == 64 and out["tiles"] == 4 and out["compulsory_words"] == 108
    assert set(out["words_per_mac"]) == set(out["dataflows"]) == {"ws", "os", "is"}
    assert out["words_per_mac"]["ws"] == 1.0
    assert out["dataflows"]["os"]["traffic"]["psum_writes"] == 0
    assert out["dataflows"]["ws"]["mapping"] == {
        "rows": 3,
        "cols": 3,
        "order": "col-outer",
        "chosen": "given",
    }
    assert out["verified"] is True and out["verification_level"] == ["exact"] * 3


@pytest.mark.parametrize(("array", "expected"), [("4x4", 15), ("6x6", 17)])
def test_systolic_reports_the_best_mapping_unless_one_is_given(
    capsys: pytest.CaptureFixture[str], array: str, expected: int
) -> None:
    given = run_json(
        capsys,
        [
            "systolic",
            "--shape",
            "1x6x6",
            "--array",
            array,
            "--dataflow",
            "ws",
            "--mapping",
            array,
            "--order",
            "col-outer",
            "--json",
        ],
    )
    assert given["cycles"] == expected  # the whole array, as the issue measured it
    best = run_json(
        capsys, ["systolic", "--shape", "1x6x6", "--array", array, "--dataflow", "ws", "--json"]
    )
    assert best["cycles"] <= 15 and best["dataflows"]["ws"]["mapping"]["chosen"] == "best"


def test_systolic_bigger_array_is_not_slower(capsys: pytest.CaptureFixture[str]) -> None:
    small = run_json(capsys, ["systolic", "--shape", "128x256x64", "--array", "128x128", "--json"])
    big = run_json(capsys, ["systolic", "--shape", "128x256x64", "--array", "256x256", "--json"])
    for dataflow in ("ws", "os", "is"):
        assert big["dataflows"][dataflow]["cycles"] <= small["dataflows"][dataflow]["cycles"]


def test_systolic_assume_scalesim(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        ["systolic", "--shape", "64x64x64", "--array", "8x8", "--assume", "scalesim", "--json"],
    )
    assert out["assumptions"] == {
        "preset": "scalesim",
        "shadow": False,
        "edges": "pad",
        "drain": "free",
        "folds": "sequence",
    }
    # SCALE-Sim 3.0 reports Total Cycles 5503, 4991, 5503: its last cycle index, so one less.
    assert {d: r["cycles"] for d, r in out["dataflows"].items()} == {
        "ws": 5504,
        "os": 4992,
        "is": 5504,
    }
    assert {r["mapping"]["chosen"] for r in out["dataflows"].values()} == {"scalesim"}
    over = run_json(
        capsys,
        [
            "systolic",
            "--shape",
            "64x64x64",
            "--array",
            "8x8",
            "--assume",
            "scalesim",
            "--shadow",
            "on",
            "--dataflow",
            "ws",
            "--json",
        ],
    )
    assert over["assumptions"]["shadow"] is True and over["cycles"] < 5504


def test_systolic_chapter_in_sequence(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        [
            "systolic",
            "--shape",
            "6x6x6",
            "--array",
            "3x3",
            "--shadow",
            "off",
            "--folds",
            "sequence",
            "--mapping",
            "3x3",
            "--order",
            "col-outer",
            "--dataflow",
            "ws",
            "--json",
        ],
    )
    assert out["cycles"] == 52


def test_systolic_check_on_a_bigger_shape(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        [
            "systolic",
            "--shape",
            "128x256x96",
            "--array",
            "16x8",
            "--shadow",
            "off",
            "--hbm-words",
            "2.5",
            "--edges",
            "pad",
            "--check",
            "--json",
        ],
    )
    assert (
        out["verification_level"] == ["exact"] * 3
        and out["hbm_words"] == 2.5
        and out["verified"] is True
    )


def test_systolic_big_shape_is_not_checked_unasked(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["systolic", "--shape", "512x1024x1024", "--array", "128x128", "--json"])
    assert out["verified"] is None and out["tiles"] == 64


def test_systolic_check_help_says_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["systolic", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "own cycle model on the design itself" in text and "'scaled'" in text and "'exact'" in text
    )


@pytest.mark.parametrize(
    "extra",
    [
        ["--shape", "6x6", "--array", "3x3"],
        ["--shape", "0x6x6", "--array", "3x3"],
        ["--shape", "6x6x6", "--array", "3"],
        ["--shape", "6x6x6", "--array", "0x3"],
        ["--shape", "6x6x6", "--array", "3x3", "--hbm-words", "0"],
        ["--shape", "6x6x6", "--array", "3x3", "--hbm-words", "-2"],
        ["--shape", "6x6x6", "--array", "3x3", "--hbm-words", "fast"],
        ["--shape", "6x6x6", "--array", "3x3", "--buffers", "3"],
        ["--shape", "6x6x6", "--array", "3x3", "--weight-buffers", "0"],
        ["--shape", "6x6x6", "--array", "3x3", "--mapping", "4x3"],
        ["--shape", "6x6x6", "--array", "3x3", "--mapping", "3"],
        ["--shape", "6x6x6", "--array", "3x3", "--assume", "tpu"],
        ["--shape", "6x6x6", "--array", "3x3", "--dataflow", "rs"],
        ["--shape", "4096x4096x4096", "--array", "100000x100000"],
        ["--shape", "6x6x6"],
    ],
)
def test_systolic_bad_input(capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    assert main(["systolic", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err


# --- tile-model ----------------------------------------------------------------------------

TILE = [
    "tile-model",
    "--shape",
    "4096x4096x4096",
    "--tile",
    "128x128x64",
    "--operand-bytes",
    "2",
    "--accumulator-bytes",
    "4",
]


def test_tile_model_prints_every_member(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*TILE, "--double-buffered", "--capacity", "131072"]) == 0
    lines = dict(line.split(" = ") for line in capsys.readouterr().out.splitlines())
    assert set(DERIVED_MEMBERS) <= set(lines)
    assert lines["tile_intensity"] == "64.0"
    assert lines["live_bytes"] == "131072" and lines["fits"] == "True"
    assert lines["row_b_reads"] == str(4096**3 // 128)  # cells default to tile_m


def test_tile_model_json_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        [
            "tile-model",
            "--shape",
            "100x300x200",
            "--tile",
            "10x20x30",
            "--operand-bytes",
            "1",
            "--accumulator-bytes",
            "4",
            "--cells",
            "7",
            "--json",
        ],
    )
    assert (out["m"], out["k"], out["n"]) == (100, 300, 200)
    assert (out["tile_m"], out["tile_n"], out["tile_k"]) == (10, 20, 30)
    assert (out["tiles_m"], out["tiles_n"], out["tiles_k"]) == (10, 10, 10)
    assert out["row_b_reads"] == 100 * 300 * 200 // 7 and "fits" not in out
    assert set(DERIVED_MEMBERS) <= set(out)


@pytest.mark.parametrize(
    "argv",
    [
        [
            "tile-model",
            "--shape",
            "4x4x4",
            "--tile",
            "2x2",
            "--operand-bytes",
            "2",
            "--accumulator-bytes",
            "4",
        ],
        [
            "tile-model",
            "--shape",
            "4x4x4",
            "--tile",
            "2x0x2",
            "--operand-bytes",
            "2",
            "--accumulator-bytes",
            "4",
        ],
        [
            "tile-model",
            "--shape",
            "4x4",
            "--tile",
            "2x2x2",
            "--operand-bytes",
            "2",
            "--accumulator-bytes",
            "4",
        ],
        [
            "tile-model",
            "--shape",
            "4x4x4",
            "--tile",
            "2x2x2",
            "--operand-bytes",
            "0",
            "--accumulator-bytes",
            "4",
        ],
        [
            "tile-model",
            "--shape",
            "4x4x4",
            "--tile",
            "2x2x2",
            "--operand-bytes",
            "2",
            "--accumulator-bytes",
            "4",
            "--capacity",
            "-1",
        ],
        ["tile-model", "--shape", "4x4x4", "--tile", "2x2x2", "--operand-bytes", "2"],
    ],
)
def test_tile_model_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err
