"""The per-layer report of a workload run: shares, the costliest layers, the chart, a shape tuned
once, a rerun with one more layer resuming the others, transfer between the run's studies, and
workload runs on the systolic oracle."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.cli.main import main
from autotune.oracles.systolic import ORACLE as SYSTOLIC
from autotune.oracles.systolic import SystolicBudget
from autotune.results import report, tables
from search_spaces.systolic import systolic_family
from simcore.shape import Shape
from tests.helpers.examples import examples

LAYERS = [("a", "16x32x24", 2), ("b", "8x8x40", 1), ("c", "32x32x24", 3)]


def toml(layers: list[tuple[str, str, float]]) -> str:
    return "".join(f'[[gemm]]\nname = "{n}"\nshape = "{s}"\nweight = {w}\n\n' for n, s, w in layers)


def summary(
    cycles: list[int | None], weights: list[float], bounds: list[int | None]
) -> pd.DataFrame:
    names = [f"g{i}" for i in range(len(cycles))]
    return tables.typed(
        pd.DataFrame(
            {
                "name": names,
                "shape": ["8x8x8"] * len(names),
                "weight": weights,
                "cycles": cycles,
                "bound_cycles": bounds,
                "mxu_util": [0.5] * len(names),
            }
        )
    )


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 10**7), st.integers(1, 64), st.integers(1, 10**7)),
        min_size=1,
        max_size=12,
    )
)
def test_shares_sum_to_one_and_costliest_are_largest(rows: list[tuple[int, int, int]]) -> None:
    frame = report.with_report_columns(
        summary(
            [c for c, _, _ in rows], [float(w) for _, w, _ in rows], [min(b, c) for c, _, b in rows]
        )
    )
    assert float(frame["share"].sum()) == pytest.approx(1.0)
    top = report.costliest(frame)
    assert len(top) == min(3, len(rows))
    assert float(top["share"].min()) >= float(
        frame.drop(top.index)["share"].max() if len(frame) > len(top) else 0
    )
    assert (frame["ratio_to_bound"] >= 1).all()


def test_report_lines_name_the_costliest_and_the_furthest() -> None:
    frame = summary([100, 400, 50, 1000, None], [1, 2, 4, 1, 1], [100, 100, 50, 990, None])
    text = report.format_report(frame, {"workload": "w", "weighted_cycles": 2100.0})
    assert "costliest 3: g1 38.1%, g3 47.6%" not in text  # largest first
    assert "costliest 3: g3 47.6%, g1 38.1%, g2 9.5%" in text
    assert (
        "furthest from bound: g1 4.000x (38.1% of the time), g3 1.010x (47.6% of the time)" in text
    )
    assert "no feasible schedule" in text  # g4 stays listed, without a share


def test_systolic_bound_is_below_every_design() -> None:
    family, machine = systolic_family(256, 16), SystolicBudget(256, 16)
    for shape in (Shape(49, 4608, 512), Shape(1, 2048, 1000), Shape(3136, 64, 64)):
        bound = SYSTOLIC.bound(shape, machine)
        for point in family.seed_points(shape, machine):
            assert SYSTOLIC.evaluate(family, point, shape, machine)["cycles"] >= bound  # type: ignore[operator]


def _run(tmp_path: Path, layers: list[tuple[str, str, float]], *extra: str) -> int:
    (tmp_path / "three.toml").write_text(toml(layers))
    return main(
        ["--workload", "three.toml", "--slots", "16", "--trials", "6", "--study", "r", *extra]
    )


def test_workload_report_chart_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    same_shape = LAYERS[:2] + [("a2", "16x32x24", 1)]  # a2 is a's shape: tuned with a's study
    assert _run(tmp_path, same_shape) == 0
    out = capsys.readouterr()
    assert "costliest 3:" in out.out and "furthest from bound" in out.out
    assert "tuning a2" not in out.err and not (tmp_path / "results" / "r-a2").exists()
    frame, metadata = tables.read(tmp_path / "results" / "r" / "workload.parquet")
    assert metadata["schema"] == 5 and list(frame["name"]) == ["a", "b", "a2"]
    assert float(frame["share"].sum()) == pytest.approx(1.0)
    assert frame.loc[2, "study"] == "r-a" and frame.loc[2, "cycles"] == frame.loc[0, "cycles"]
    assert (frame["ratio_to_bound"] >= 1).all() and frame["bound_cycles"].notna().all()
    assert (tmp_path / "results" / "r" / "report.png").stat().st_size > 0

    assert _run(tmp_path, same_shape + [LAYERS[2]]) == 0  # one more layer: the others resume
    err = capsys.readouterr().err
    assert "reusing a (" in err and "reusing b (" in err and "tuning c (" in err
    origins = pd.read_parquet(tmp_path / "results" / "r-c" / "leaderboard.parquet")["origin"]
    assert "transfer" in set(origins)  # seeded from a and b, nearby shapes of the same run

    assert main(["plot", "r", "--out", str(tmp_path / "pics")]) == 0
    assert (tmp_path / "pics" / "report.png").stat().st_size > 0


def test_systolic_workload_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.toml").write_text(toml(LAYERS))
    assert (
        main(
            ["--oracle", "systolic", "--pe-budget", "256", "--workload", "w.toml", "--trials", "8"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "on the systolic oracle" in out and "costliest 3:" in out
    folder = next(p.parent for p in (tmp_path / "results").glob("*/workload.parquet"))
    assert folder.name.startswith("workload-w-pe256-")
    frame, metadata = tables.read(folder / "workload.parquet")
    assert metadata["oracle"] == "systolic" and frame["verified"].all()
    assert (frame["cycles"] >= frame["bound_cycles"]).all() and frame["utilisation"].notna().all()
    assert (folder / "report.png").is_file()
