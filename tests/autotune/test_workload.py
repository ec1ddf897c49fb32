"""Workload files (TOML and CSV), a small workload tune, and a co-design run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from autotune.cli.main import main
from simcore.shape import Shape
from workloads import WorkloadError, load_workload

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "workloads" / "networks"
TINY = '[[gemm]]\nname = "a"\nshape = "16x32x24"\nweight = 2\n\n[[gemm]]\nname = "b"\nshape = "8x8x40"\nweight = 1\n'


@pytest.mark.parametrize(
    "name", ["chapter.toml", "transformer_b1.toml", "transformer_b64.toml", "transformer_b1.csv"]
)
def test_examples_parse(name: str) -> None:
    workload = load_workload(EXAMPLES / name)
    assert workload.gemms and all(g.weight > 0 for g in workload.gemms)


def test_toml_and_csv_agree() -> None:
    assert (
        load_workload(EXAMPLES / "transformer_b1.toml").gemms
        == load_workload(EXAMPLES / "transformer_b1.csv").gemms
    )
    assert load_workload(EXAMPLES / "chapter.toml").gemms[0].shape == Shape(128, 128, 128)


@pytest.mark.parametrize(
    "text, suffix, message",
    [
        ('[[gemm]]\nname = "a"\nshape = "16x0x8"\nweight = 1\n', ".toml", "must be positive"),
        ('[[gemm]]\nname = "a"\nshape = "16by8"\nweight = 1\n', ".toml", "malformed shape"),
        ('[[gemm]]\nname = "a"\nshape = "8x8x8"\nweight = 0\n', ".toml", "weight must be positive"),
        (
            '[[gemm]]\nname = "a"\nshape = "8x8x8"\nweight = -2\n',
            ".toml",
            "weight must be positive",
        ),
        ('[[gemm]]\nname = "a"\nshape = "8x8x8"\n', ".toml", "missing weight"),
        ("", ".toml", "empty"),
        ("name,shape,weight\n", ".csv", "empty"),
        ("name,shape,weight\na,8x8x8,x\n", ".csv", "positive number"),
        ("name,shape\na,8x8x8\n", ".csv", "header"),
        (
            '[[gemm]]\nname = "a"\nshape = "8x8x8"\nweight = 1\n[[gemm]]\nname = "a"\nshape = "8x8x16"\nweight = 1\n',
            ".toml",
            "twice",
        ),
    ],
)
def test_bad_workloads(tmp_path: Path, text: str, suffix: str, message: str) -> None:
    path = tmp_path / f"w{suffix}"
    path.write_text(text)
    with pytest.raises(WorkloadError, match=message):
        load_workload(path)


def test_missing_file_and_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(WorkloadError, match="not found"):
        load_workload(tmp_path / "nope.toml")
    assert main(["--workload", str(tmp_path / "nope.toml")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["--trials", "3"]) == 2
    assert "--shape" in capsys.readouterr().err
    assert main(["--shape", "8x8x8", "--workload", str(EXAMPLES / "chapter.toml")]) == 2


def test_workload_tune(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(TINY)
    assert (
        main(["--workload", "tiny.toml", "--slots", "16", "--trials", "12", "--study", "wl"]) == 0
    )
    out = capsys.readouterr().out
    assert "weighted total" in out and "chapter's families" in out
    frame = pd.read_parquet(tmp_path / "results" / "wl" / "workload.parquet")
    assert list(frame["name"]) == ["a", "b"]
    assert frame["verified"].all()
    assert (frame["cycles"] <= frame["chapter_best_cycles"]).all()
    assert frame["weighted_cycles"].tolist() == (frame["weight"] * frame["cycles"]).tolist()
    for name in ("wl-a", "wl-b"):  # a study, and a leaderboard, per GEMM
        assert (tmp_path / "results" / name / "leaderboard.parquet").is_file()


def test_codesign_pareto_verified_within_budgets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.toml").write_text(TINY)
    code = main(
        [
            "--workload",
            "tiny.toml",
            "--slots",
            "16",
            "--search-machine",
            "--objectives",
            "cycles,scratchpad_words,dma_words_per_cycle",
            "--max-scratchpad-words",
            "768",
            "--max-dma-words-per-cycle",
            "32",
            "--trials",
            "25",
            "--sampler",
            "nsga2",
            "--study",
            "cd",
        ]
    )
    assert code == 0
    board = pd.read_parquet(tmp_path / "results" / "cd" / "leaderboard.parquet")
    front = pd.read_parquet(tmp_path / "results" / "cd" / "pareto.parquet")
    assert not front.empty and front["verified"].all()
    assert set(front.groupby("trial")["gemm"].apply(tuple)) == {
        ("a", "b")
    }  # every GEMM, per machine
    assert (front["scratchpad_words"] <= 768).all() and (front["dma_words_per_cycle"] <= 32).all()
    feasible = board[board["feasible"]]
    assert (feasible["scratchpad_words"] <= 768).all() and (
        feasible["dma_words_per_cycle"] <= 32
    ).all()
    infeasible = board[~board["feasible"]]
    assert infeasible["cycles"].isna().all()  # never simulated
    for _, machine in front.groupby("trial"):
        assert machine["total_cycles"].iloc[0] == pytest.approx(machine["weighted_cycles"].sum())
        assert (machine["cycles"] <= machine["chapter_best_cycles"]).all()
    for constraints in infeasible["constraints_json"]:
        assert max(json.loads(constraints).values()) > 0


def test_many_padded_layers_give_a_few_notes_and_a_count(tmp_path: Path) -> None:
    from autotune.run.plan import NOTES_SHOWN
    from autotune.run.resolve import plan_of

    rows = "".join(
        f'[[gemm]]\nname = "g{n}"\nshape = "{8 * n + 1}x16x16"\nweight = 1\n\n' for n in range(30)
    )
    (tmp_path / "padded.toml").write_text(rows)
    notes = plan_of(workload=str(tmp_path / "padded.toml")).notes()
    assert len(notes) == NOTES_SHOWN and notes[-1] == "note: and 23 more notes of these kinds"
    assert all("is not a multiple of the 8x8 tile" in note for note in notes[:-1])
