"""The bandwidth sweep: the chapter's 64-slot numbers, the table, JSON and the parquet file."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from autotune.cli.main import main

CHAPTER_64 = {
    "blocked 1x1 (i,j,k), 2 buf": 173056,
    "blocked 2x4, 2 buf": 66560,
    "blocked 4x8, 2 buf": 37440,
}


def test_chapter_sweep_parquet_and_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.parquet"
    assert (
        main(
            [
                "sweep",
                "--shape",
                "128x128x128",
                "--slots",
                "64",
                "--machine-grid",
                "dma_words_per_cycle=8,16,32,64",
                "--machine-grid",
                "dma_setup=16,4",
                "--schedules",
                "1x1:2,2x4:2,4x8:2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "dma cyc/tile" in text and "1x1/best" in text
    frame = pd.read_parquet(out)
    assert len(frame) == 8 * 3 and frame["verified"].all()
    chapter = frame[(frame["dma_words_per_cycle"] == 16) & (frame["dma_setup"] == 16)]
    assert dict(zip(chapter["schedule"], chapter["cycles"])) == CHAPTER_64
    # a faster memory never makes a schedule slower
    for _, rows in frame.groupby(["schedule", "dma_setup"]):
        cycles = rows.sort_values("dma_words_per_cycle")["cycles"].tolist()
        assert cycles == sorted(cycles, reverse=True)


def test_sweep_json_and_tuned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.parquet"
    assert (
        main(
            [
                "sweep",
                "--shape",
                "32x32x32",
                "--machine-grid",
                "dma_setup=16,4",
                "--schedules",
                "1x1:2,2x2:2",
                "--json",
                "--tuned",
                "--trials",
                "20",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 2 * 3 and all("dma_setup" in r and "dma_words_per_cycle" in r for r in rows)
    tuned = [r for r in rows if r["schedule"] == "tuned"]
    assert len(tuned) == 2 and all(r["verified"] and r["vs_best"] <= 1.0 for r in tuned)
    assert (pd.read_parquet(out)["schedule"] == "tuned").sum() == 2


def test_sweep_bad_grid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--machine-grid", "bogus=1,2"]) == 2
    assert "KEY=V1,V2" in capsys.readouterr().err
    assert main(["sweep", "--machine-grid", "dma_words_per_cycle=0"]) == 2


def test_a_long_sweep_is_announced_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "big.parquet"
    assert main(["sweep", "--shape", "100000x100000x100000", "--out", str(out)]) == 0
    assert capsys.readouterr().err.count("timed periodically") == 1 and out.exists()
