"""What a run guarantees, through the library (`autotune.tune`, which runs `autotune.run.pipeline`):
the same seed gives the same study, every registered sampler runs its budget, and a workload
gives a study and a verified row per GEMM. The command line's own contract (its flags, messages
and exit codes) is tested in tests/autotune/cli/."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from optuna.trial import TrialState

import autotune
from autotune.search import sampling

TINY = '[[gemm]]\nname = "a"\nshape = "16x32x24"\nweight = 2\n\n[[gemm]]\nname = "b"\nshape = "8x8x40"\nweight = 1\n'


def _same(first: pd.DataFrame, second: pd.DataFrame) -> bool:
    def cycles(frame: pd.DataFrame) -> list[float]:
        return list(frame["cycles"].astype("Float64").fillna(-1))

    return (
        list(first["params_json"]) == list(second["params_json"])
        and cycles(first) == cycles(second)
        and list(first["trial"]) == list(second["trial"])
    )


def test_the_same_seed_gives_the_same_study(tmp_path: Path) -> None:
    def run(seed: int, study: str) -> pd.DataFrame:
        return autotune.tune(
            "32x32x32", trials=25, seed=seed, study=study, results=tmp_path
        ).leaderboard

    first, second = run(7, "first"), run(7, "second")
    assert "general_delayed" in set(first["family"])  # the default spaces: the general orders
    assert _same(first, second)
    assert set(run(8, "third")["params_json"]) != set(first["params_json"])


@pytest.mark.parametrize("sampler", sampling.names())
def test_every_registered_sampler_runs_its_budget(tmp_path: Path, sampler: str) -> None:
    result = autotune.tune(
        "32x32x32", spaces="chapter", sampler=sampler, trials=25, study=sampler, results=tmp_path
    )
    states = [t.state for t in result.study.trials]
    assert states.count(TrialState.COMPLETE) == 25
    # An enumerating sampler (grid) queues every feasible point up front; what the budget did not
    # reach still waits.
    waiting = {TrialState.WAITING} if sampling.spec(sampler).enumerates else set()
    assert set(states) <= {TrialState.COMPLETE} | waiting
    frame = result.leaderboard
    assert set(frame["sampler"]) == {sampler}
    assert frame["verified"].head(10).all() and not result.failures
    # The chapter's best on 32x32x32 is seeded, whatever the sampler.
    assert int(frame["cycles"].iloc[0]) <= int(frame["chapter_best_cycles"].iloc[0])


def test_a_workload_gives_a_verified_row_and_a_study_per_gemm(tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY)
    result = autotune.tune(
        workload=tmp_path / "tiny.toml", machine="slots=16", trials=12, study="wl", results=tmp_path
    )
    frame = result.leaderboard
    assert list(frame["name"]) == ["a", "b"] and frame["verified"].all()
    assert (frame["cycles"] <= frame["chapter_best_cycles"]).all()
    assert frame["weighted_cycles"].tolist() == (frame["weight"] * frame["cycles"]).tolist()
    assert [s.study_name for s in result.studies] == ["wl-a", "wl-b"]
    for name in ("wl-a", "wl-b"):
        assert (tmp_path / name / "leaderboard.parquet").is_file()
