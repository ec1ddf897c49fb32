"""Smoke tests of `autotune systolic` and `autotune tile-model`: output, JSON keys, bad input."""
from __future__ import annotations

import json

import pytest

from autotune.cli import main
from simcore.tile_model import DERIVED_MEMBERS


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --- systolic ------------------------------------------------------------------------------


def test_systolic_text_is_verified_for_small_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systolic", "--shape", "6x6x6", "--array", "3x3"]) == 0
    out = capsys.readouterr().out
    assert "31" in out and "77.4%" in out and "words per MAC" in out and "partial-sum" in out
    # ws ran its own cycle model; os is still the ws model on the role-swapped shape: scaled, not exact
    assert out.count("verified (exact)") == 1 and out.count("checked (scaled)") == 1


def test_systolic_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["systolic", "--shape", "6x6x6", "--array", "3x3", "--hbm-words", "1",
                            "--weight-buffers", "1", "--json"])
    assert {"cycles", "mac_utilization", "words_per_mac", "tiles"} <= set(out)
    assert out["cycles"] == 64 and out["tiles"] == 4
    assert set(out["words_per_mac"]) == {"ws", "os"}
    assert out["words_per_mac"]["ws"] == 1.0
    assert out["dataflows"]["os"]["traffic"]["psum_writes"] == 0
    assert out["verified"] is False and out["verification_level"] == ["exact", "scaled"]  # os: not its own model yet


def test_systolic_check_on_a_bigger_shape(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["systolic", "--shape", "128x256x96", "--array", "16x8", "--no-shadow",
                            "--hbm-words", "2.5", "--check", "--json"])
    assert out["verification_level"] == ["scaled", "scaled"] and out["shadow"] is False and out["hbm_words"] == 2.5


def test_systolic_big_shape_is_not_checked_unasked(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["systolic", "--shape", "512x1024x1024", "--array", "128x128", "--json"])
    assert out["verified"] is None and out["tiles"] == 64


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
        ["--shape", "6x6x6", "--array", "3x3", "--weight-buffers", "3"],
        ["--shape", "6x6x6", "--array", "3x3", "--weight-buffers", "0"],
        ["--shape", "6x6x6"],
    ],
)
def test_systolic_bad_input(capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    assert main(["systolic", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err


# --- tile-model ----------------------------------------------------------------------------

TILE = ["tile-model", "--shape", "4096x4096x4096", "--tile", "128x128x64", "--operand-bytes", "2",
        "--accumulator-bytes", "4"]


def test_tile_model_prints_every_member(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*TILE, "--double-buffered", "--capacity", "131072"]) == 0
    lines = dict(line.split(" = ") for line in capsys.readouterr().out.splitlines())
    assert set(DERIVED_MEMBERS) <= set(lines)
    assert lines["tile_intensity"] == "64.0"
    assert lines["live_bytes"] == "131072" and lines["fits"] == "True"
    assert lines["row_b_reads"] == str(4096**3 // 128)  # cells default to tile_m


def test_tile_model_json_and_order(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, ["tile-model", "--shape", "100x300x200", "--tile", "10x20x30", "--operand-bytes",
                            "1", "--accumulator-bytes", "4", "--cells", "7", "--json"])
    assert (out["m"], out["k"], out["n"]) == (100, 300, 200)
    assert (out["tile_m"], out["tile_n"], out["tile_k"]) == (10, 20, 30)
    assert (out["tiles_m"], out["tiles_n"], out["tiles_k"]) == (10, 10, 10)
    assert out["row_b_reads"] == 100 * 300 * 200 // 7 and "fits" not in out
    assert set(DERIVED_MEMBERS) <= set(out)


@pytest.mark.parametrize(
    "argv",
    [
        ["tile-model", "--shape", "4x4x4", "--tile", "2x2", "--operand-bytes", "2", "--accumulator-bytes", "4"],
        ["tile-model", "--shape", "4x4x4", "--tile", "2x0x2", "--operand-bytes", "2", "--accumulator-bytes", "4"],
        ["tile-model", "--shape", "4x4", "--tile", "2x2x2", "--operand-bytes", "2", "--accumulator-bytes", "4"],
        ["tile-model", "--shape", "4x4x4", "--tile", "2x2x2", "--operand-bytes", "0", "--accumulator-bytes", "4"],
        ["tile-model", "--shape", "4x4x4", "--tile", "2x2x2", "--operand-bytes", "2", "--accumulator-bytes", "4",
         "--capacity", "-1"],
        ["tile-model", "--shape", "4x4x4", "--tile", "2x2x2", "--operand-bytes", "2"],
    ],
)
def test_tile_model_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err
