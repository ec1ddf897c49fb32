"""Energy and area through the command line: the columns of both oracles' leaderboards, a bad
technology file refused in one line, a co-design under an area budget whose cycles-energy front
is verified and plotted, and the same front again from the same seed; rows over a budget keep
their figures; an objective the fixed machine sets is refused before any trial."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from autotune.cli.main import main
from autotune.oracles.ga1 import GA1Oracle
from simcore.energy import shipped_table

ROOT = Path(__file__).resolve().parents[2]
TRANSFORMER = ROOT / "workloads" / "networks" / "transformer_b1.toml"
ENERGY_COLUMNS = (
    "energy_pj",
    "energy_per_mac_pj",
    "edp",
    "area_mm2",
    "energy_compute_pj",
    "energy_on_chip_pj",
    "energy_off_chip_pj",
)
AREA_BUDGET = 0.055  # mm2: below the base machine's 0.0597 (64 slots, 16 DMA lanes)
PNG = b"\x89PNG\r\n\x1a\n"


def board(root: Path, study: str, kind: str = "leaderboard") -> pd.DataFrame:
    return pd.read_parquet(root / "results" / study / f"{kind}.parquet")


def test_both_oracles_report_energy_and_area(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--trials",
                "6",
                "--study",
                "g",
                "--verify-top",
                "1",
                "--objectives",
                "cycles,energy",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "--shape",
                "64x64x64",
                "--oracle",
                "systolic",
                "--trials",
                "6",
                "--study",
                "s",
                "--verify-top",
                "1",
                "--objectives",
                "cycles,energy,area",
            ]
        )
        == 0
    )
    ga1, systolic = board(tmp_path, "g"), board(tmp_path, "s")
    for frame in (ga1, systolic):
        feasible = frame[frame["feasible"]]
        assert not feasible.empty and all(c in frame for c in ENERGY_COLUMNS)
        assert (feasible[list(ENERGY_COLUMNS)] > 0).all().all()
        parts = [
            c
            for c in frame
            if c.startswith("energy_") and c not in ("energy_pj", "energy_per_mac_pj")
        ]
        assert feasible[parts].sum(axis=1).tolist() == pytest.approx(feasible["energy_pj"].tolist())
        assert (feasible["edp"] == feasible["energy_pj"] * feasible["cycles"]).all()
    assert (
        "energy_register_pj" not in ga1 and "energy_register_pj" in systolic
    )  # GA-1 does not count registers
    capsys.readouterr()
    assert main(["show", "g"]) == 0
    shown = capsys.readouterr().out
    assert (
        "energy_pj" in shown and "register  not counted" in shown and "DRAM reads: loads" in shown
    )


@pytest.mark.parametrize(
    "table, key",
    [
        ("[energy]\nmac_pj = 0.3\n", "energy.operand_register_read_pj: missing key"),
        ("dram_read_pj = -1.0", "energy.dram_read_pj: must not be negative"),
        ('mac_pj = "0.3 mm2"', "energy.mac_pj: wrong unit 'mm2'"),
    ],
)
def test_a_bad_technology_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, key: str
) -> None:
    text = shipped_table("default_45nm.toml").read_text()
    if table.startswith("[energy]"):  # the whole [energy] table replaced by one key
        start, end = text.index("[energy]"), text.index("[[sram]]")
        text = text[:start] + table + text[end:]
    else:
        name = table.split(" =")[0]
        text = "\n".join(
            table if line.startswith(name + " =") else line for line in text.splitlines()
        )
    path = tmp_path / "node.toml"
    path.write_text(text)
    assert main(["--shape", "32x32x32", "--trials", "1", "--tech", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"autotune: error: --tech {path}: {key}")
    assert not (tmp_path / "results").exists()


def codesign(root: Path, study: str) -> int:
    return main(
        [
            "--workload",
            str(TRANSFORMER),
            "--search-machine",
            "--objectives",
            "cycles,energy",
            "--area-budget",
            str(AREA_BUDGET),
            "--trials",
            "10",
            "--sampler",
            "nsga2",
            "--seed",
            "3",
            "--study",
            study,
            "--results",
            str(root / "results"),
        ]
    )


def test_codesign_under_an_area_budget_plots_a_verified_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert codesign(tmp_path, "cd") == 0
    out = capsys.readouterr().out
    assert "Pareto front (cycles, energy)" in out and "energy pJ" in out
    every, front = board(tmp_path, "cd"), board(tmp_path, "cd", "pareto")
    assert not front.empty and front["verified"].all()
    assert (front["area_mm2"] <= AREA_BUDGET).all()
    feasible, infeasible = every[every["feasible"]], every[~every["feasible"]]
    assert (feasible["area_mm2"] <= AREA_BUDGET).all()
    assert (
        not infeasible.empty and infeasible["cycles"].isna().all()
    )  # over the budget: never simulated
    assert all(json.loads(c)["area_over"] > 0 for c in infeasible["constraints_json"])
    refused_for = infeasible["area_mm2"]  # the area each machine was refused for
    assert refused_for.notna().all() and (refused_for > AREA_BUDGET).all()
    for _, machine in front.groupby("trial"):
        assert set(machine["gemm"]) == {"qkv", "scores", "attn_v", "out_proj", "ffn_up", "ffn_down"}
        weighted = (machine["weight"] * machine["energy_pj"]).sum()
        assert machine["total_energy_pj"].iloc[0] == pytest.approx(weighted)
        assert machine["total_edp"].iloc[0] == pytest.approx(
            weighted * machine["total_cycles"].iloc[0]
        )
    machines = front.drop_duplicates("trial")
    for _, a in machines.iterrows():  # no front machine dominates another
        assert not any(
            b["total_cycles"] <= a["total_cycles"]
            and b["total_energy_pj"] <= a["total_energy_pj"]
            and b["trial"] != a["trial"]
            for _, b in machines.iterrows()
        )
    assert main(["plot", "cd"]) == 0
    picture = tmp_path / "results" / "cd" / "plots" / "pareto.png"
    assert picture.is_file() and picture.read_bytes()[:8] == PNG and picture.stat().st_size > 1000
    # The same seed gives the same front.
    assert codesign(tmp_path, "again") == 0
    again = board(tmp_path, "again", "pareto")
    columns = ["machine_json", "gemm", "params_json", "total_cycles", "total_energy_pj", "area_mm2"]
    assert again[columns].equals(front[columns])


def test_an_energy_budget_refuses_what_costs_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--trials",
                "4",
                "--study",
                "e",
                "--search-machine",
                "--energy-budget",
                "1",
                "--verify-top",
                "0",
            ]
        )
        == 0
    )  # 1 pJ: nothing fits
    assert "over the energy limit by" in capsys.readouterr().out
    frame = board(tmp_path, "e")
    assert not frame["feasible"].any()
    assert all(json.loads(c)["energy_over"] > 0 for c in frame["constraints_json"])
    ran = frame[frame["cycles"].notna()]  # each run keeps what it measured
    assert not ran.empty and ran[["energy_pj", "area_mm2"]].notna().all().all()
    assert (ran["energy_pj"] > 1).all()  # over the 1 pJ budget


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--shape", "64x64x64", "--objectives", "cycles,area"],
            "--objectives cycles,area: area is the same for every schedule on a fixed machine; "
            "trading it against cycles needs --search-machine",
        ),
        (
            ["--workload", str(TRANSFORMER), "--objectives", "cycles,energy"],
            "--objectives other than cycles need --search-machine (a machine to trade against)",
        ),
    ],
)
def test_an_objective_nothing_trades_is_refused_before_any_trial(
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(GA1Oracle, "evaluate", lambda *a: pytest.fail("a trial ran"))
    assert main(argv) == 2
    assert capsys.readouterr().err == f"autotune: error: {message}\n"
    assert not (tmp_path / "results").exists()
