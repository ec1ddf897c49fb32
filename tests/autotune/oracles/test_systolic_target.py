"""The systolic target of `tune`: two objectives, a Pareto leaderboard, and `show` of an entry."""

from __future__ import annotations

import pandas as pd
import pytest

from autotune.cli.main import main


@pytest.fixture()
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_systolic_target_writes_a_verified_pareto_leaderboard(in_tmp, capsys):
    assert (
        main(
            [
                "--shape",
                "32x48x40",
                "--target",
                "systolic",
                "--pe-budget",
                "64",
                "--max-hbm-words",
                "8",
                "--trials",
                "25",
                "--study",
                "sy",
            ]
        )
        == 0
    )
    frame = pd.read_parquet(in_tmp / "results" / "sy" / "leaderboard.parquet")
    feasible = frame[frame["feasible"]]
    assert {"cycles", "words_per_mac", "pareto", "rows", "cols", "dataflow"} <= set(frame.columns)
    assert "slots" not in frame.columns  # no GA-1 machine columns for another oracle
    assert (feasible["rows"] * feasible["cols"] <= 64).all()
    front = feasible[feasible["pareto"]]
    assert len(front) >= 1 and front["verified"].all()
    # No front point is dominated by another feasible point.
    for _, point in front.iterrows():
        dominated = (
            (feasible["cycles"] <= point["cycles"])
            & (feasible["words_per_mac"] <= point["words_per_mac"])
            & (
                (feasible["cycles"] < point["cycles"])
                | (feasible["words_per_mac"] < point["words_per_mac"])
            )
        )
        assert not dominated.any()
    capsys.readouterr()
    assert main(["show", "sy", "--rank", "1"]) == 0
    out = capsys.readouterr().out
    assert "array" in out and "cycles" in out


def test_systolic_target_rejects_a_ga1_objective(in_tmp, capsys):
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--target",
                "systolic",
                "--objectives",
                "cycles,scratchpad_words",
            ]
        )
        == 2
    )
    assert "unknown objective" in capsys.readouterr().err


def test_plot_of_a_systolic_study_draws_what_applies_and_says_what_it_skipped(in_tmp, capsys):
    assert (
        main(
            [
                "--shape",
                "32x48x40",
                "--target",
                "systolic",
                "--pe-budget",
                "64",
                "--trials",
                "12",
                "--study",
                "sp",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["plot", "sp"]) == 0
    out = capsys.readouterr().out
    assert (
        "wrote results/sp/plots/history.png" in out and "wrote results/sp/plots/pareto.png" in out
    )
    assert "skipped timeline_rank1.png: the systolic oracle draws no engine timeline" in out
    assert not (in_tmp / "results" / "sp" / "plots" / "timeline_rank1.png").exists()
