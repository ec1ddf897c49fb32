"""A measure declared by an oracle, and computed by its `evaluate`, becomes an objective, a
leaderboard column, a table and plot label and a line of `--objectives`'s help, with nothing in
autotune changed (docs/extending/measure.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autotune import oracles
from tests.helpers.plugins import install

# A roofline oracle that also reports its power: one declaration and its computation.
POWERED = """
import math
from dataclasses import asdict, dataclass

from autotune.oracles import Oracle
from autotune.oracles.measures import CYCLES, Measure
from search_spaces.base import MODEL, Family, Verdict
from search_spaces.domains import IntRange, Param

POWER = Measure("power", unit="mW", total="max", help="the average power of a product")


@dataclass(frozen=True)
class Rate:
    words_per_cycle: int = 16

    def as_dict(self):
        return asdict(self)

    def key(self):
        return f"words_per_cycle={self.words_per_cycle}"


class Blocks(Family):
    name, oracle = "powered_blocks", "powered"

    def params(self, shape, T):
        return (Param("bi", IntRange(1, 8)), Param("bj", IntRange(1, 8)))

    def violation(self, point, shape, machine):
        return 0.0

    def seed_points(self, shape, machine):
        return [{"bi": 1, "bj": 1}]


class Powered(Oracle):
    name, default_spaces = "powered", ("powered",)
    measures = (CYCLES, POWER)

    def parse_machine(self, text):
        return Rate(**{k: int(v) for k, v in (i.split("=") for i in text.split(",") if i)})

    def machine_from_record(self, record):
        return Rate(**record)

    def families(self, spaces, machine):
        return (BLOCKS,)

    def family(self, name):
        return BLOCKS if name == BLOCKS.name else None

    def evaluate(self, family, point, shape, machine):
        bi, bj = point["bi"], point["bj"]
        steps = math.ceil(shape.m / bi) * math.ceil(shape.n / bj) * shape.k
        cycles = steps * max(bi * bj // 4, (bi + bj) // 2 + 1)
        return {"cycles": cycles, "power": 10.0 * bi * bj / (1 + bi + bj)}

    def verify(self, family, point, shape, machine):
        return Verdict(True, MODEL, "a closed form")


BLOCKS = Blocks()
PLUGIN = Powered()
"""


@pytest.fixture
def powered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(tmp_path / "site", monkeypatch, oracles.GROUP, "powered", "powered_oracle", POWERED)
    oracles._declared.cache_clear()
    oracles.get.cache_clear()
    yield
    oracles._declared.cache_clear()
    oracles.get.cache_clear()
    sys.modules.pop("powered_oracle", None)


def test_a_declared_measure_is_an_objective_a_column_and_a_label(
    powered: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import autotune
    from autotune.cli.commands import plot
    from autotune.results import plots, tables
    from autotune.settings import SETTINGS, help_of

    result = autotune.tune(
        "16x16x16",
        oracle="powered",
        objectives="cycles,power",
        trials=12,
        storage=":memory:",
        results=tmp_path / "results",
    )
    frame = result.leaderboard
    assert "power" in frame.columns and frame["pareto"].any()  # a column, and a front over it
    assert [d.name for d in result.study.directions] == ["MINIMIZE", "MINIMIZE"]
    measures = autotune.oracles.get("powered").measures
    table = tables.format_rows(frame, 5, measures)
    assert table.splitlines()[0].split()[:3] == ["rank", "cycles", "power"]
    drawn = []
    monkeypatch.setattr(plots, "pareto_png", lambda fronts, title, path: drawn.extend(fronts))
    plot.pareto(frame, {"objectives": ["cycles", "power"], "oracle": "powered"}, tmp_path)
    assert [front.x_label for front in drawn] == ["power (mW)"]
    assert "powered: cycles, power (mW)" in help_of(SETTINGS["objectives"])


def test_an_undeclared_objective_is_refused_naming_the_declared_ones(powered: None) -> None:
    from autotune.errors import PlanError
    from autotune.run.resolve import plan_of

    with pytest.raises(PlanError, match=r"unknown objective\(s\) joules .*known: cycles, power"):
        plan_of("16x16x16", oracle="powered", objectives="cycles,joules").validate()
