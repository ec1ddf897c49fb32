"""A sampler registers in the entry-point group `autotune.samplers`, as a package does, and
becomes a `--sampler` choice with its help, runs a study through the ordinary run, and is
recorded as the study's sampler. The built-in samplers register the same way."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autotune.search import sampling
from tests.helpers.plugins import install

ROOT = Path(__file__).resolve().parents[3]

# docs/extending/sampler.md's example: Optuna's quasi-random sampler over the flat encoding.
SAMPLER = """
import optuna

from autotune.search.sampling import SamplerSpec


def make(seed, search):
    return optuna.samplers.RandomSampler(seed=seed + 1)


PLUGIN = SamplerSpec("shifted", "random draws from the seed after this one", "flat", make)
"""


@pytest.fixture
def registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "site", monkeypatch, sampling.GROUP, "shifted", "my_sampler", SAMPLER)
    sampling.specs.cache_clear()
    yield
    sampling.specs.cache_clear()
    sys.modules.pop("my_sampler", None)


def test_a_registered_sampler_is_a_choice_with_its_help(registered: None) -> None:
    from autotune.cli.main import build_parser

    assert sampling.names()[-1] == "shifted" and sampling.encoding_for("shifted") == "flat"
    assert "shifted (random draws from the seed after this one)" in sampling.described()
    tune = build_parser()._subparsers._group_actions[0].choices["tune"]  # type: ignore[union-attr]
    action = next(a for a in tune._actions if a.dest == "sampler")
    assert "shifted" in action.choices and "shifted (random draws" in str(action.help)


def test_a_registered_sampler_runs_a_study(registered: None, tmp_path: Path) -> None:
    import autotune

    result = autotune.tune(
        "32x48x32",
        oracle="systolic",
        sampler="shifted",
        trials=8,
        storage=":memory:",
        results=tmp_path / "results",
    )
    assert result.best is not None and result.best.record is not None
    assert result.best.record.provenance.sampler == "shifted"
    assert {t.user_attrs["run"]["sampler"] for t in result.study.trials} == {"shifted"}


def test_an_unknown_sampler_names_every_installed_one() -> None:
    with pytest.raises(sampling.PlanError, match="unknown sampler 'nosuch' .known: guided, tpe"):
        sampling.spec("nosuch")


def test_the_built_in_samplers_are_declared_once() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[sampling.GROUP] == sampling.BUILT_IN
