"""The size guard is the oracle's: the plan stage asks every GEMM's work of it, so the command
line and the Python API refuse the same runs, before any study exists; a guard whose `work` is
None (always cheap) refuses nothing, and an oracle without one is never asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune.errors import WorkError
from autotune.oracles.capabilities import SizeGuard, WorkLimits
from autotune.run.check import check
from autotune.run.resolve import options_of, plan_of
from simcore.shape import Shape


class AlwaysCheap(SizeGuard):
    def work(self, shape: Shape, machine: object) -> None:
        return None


def test_a_guard_without_an_estimate_refuses_nothing() -> None:
    tight = WorkLimits(max_products=1, max_memory=1)
    assert AlwaysCheap().check_work(Shape(1 << 20, 1 << 20, 1 << 20), None, tight) is None
    AlwaysCheap().check_memory(Shape(1 << 20, 1 << 20, 1 << 20), None, tight)


def test_the_api_is_refused_by_the_oracles_guard_before_anything_exists(tmp_path: Path) -> None:
    plan = plan_of("4096x4096x4096", max_products=1000)
    with pytest.raises(WorkError) as refused:
        check(plan, options_of(plan, results=tmp_path / "results"))
    assert refused.value.setting == "max_products" and refused.value.work.products == 512**3
    assert "max_products" in str(refused.value) and not (tmp_path / "results").exists()


def test_the_guard_announces_a_long_evaluation_and_an_oracle_without_one_is_not_asked() -> None:
    plan = plan_of("4096x4096x4096")
    checked = check(plan, options_of(plan, storage=":memory:"))
    assert any("timed periodically" in line for line in checked.notices)
    systolic = plan_of("4096x4096x4096", oracle="systolic")
    assert check(systolic, options_of(systolic, storage=":memory:")).notices == ()
