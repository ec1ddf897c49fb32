"""Broken fused schedules and engines on the systolic array are caught: each mutant is a fresh
copy of simcore with one mistake put into its syntax tree, and `verify_fused` must refuse the
case, in the check named (the replay's results, the hazard replay, or the engines' agreement)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

engine = partial(Rewrite, "systolic.fused.engine")
mlp = partial(Rewrite, "systolic.fused.mlp")
gemm = partial(Rewrite, "systolic.fused.gemm")
MLP = (
    "mlp",
    {"m": 40, "d": 24, "hidden": 80, "d_out": 20},
    {"bm": 8, "bk": 8, "bh": 8, "bn": 8, "y_resident": False},
)
EPILOGUE = (
    "gemm",
    {"m": 30, "k": 20, "n": 40, "epilogue": ("bias", "gelu")},
    {"bm": 8, "bk": 8, "bn": 8},
)


@dataclass(frozen=True)
class Mutant:
    name: str
    rewrites: tuple[Rewrite, ...]
    case: tuple[str, dict[str, Any], dict[str, Any]]
    caught_by: str  # a phrase of the verdict


MUTANTS = (
    Mutant(
        "a jump over repeated periods adds no cycles",
        (engine("_Fast.repeat", "self.shift(times * shift, base)", "self.shift(0, base)"),),
        MLP,
        "the fast engine's",
    ),
    Mutant(
        "a write does not wait for the readers of its slot",
        (
            engine(
                "_State.run",
                "max(start, self.released[s], self.ready[s])",
                "max(start, self.ready[s])",
            ),
        ),
        MLP,
        "hazard",
    ),
    Mutant(
        "a load's data is in place when the link has moved it (no latency)",
        (engine("_State.run", "end + op.latency", "end", count=2),),
        MLP,
        "hazard",
    ),
    Mutant(
        "a block's tiles stream before its streamed blocks are in",
        (
            engine(
                "_State.run_array",
                "stream = max(stream, self.ready_ext[s])",
                "stream = stream",
            ),
        ),
        MLP,
        "hazard",
    ),
    Mutant(
        "a block's tiles fetch before its stationary block is in",
        (
            engine(
                "_State.run_array",
                "fetch = max(fetch, self.ready_ext[s])",
                "fetch = fetch",
            ),
        ),
        MLP,
        "hazard",
    ),
    Mutant(
        "Y's partial sums are not read back between hidden blocks",
        (mlp("MlpBuild._down_step", "u > 0", "False"),),
        MLP,
        "replay",
    ),
    Mutant(
        "the epilogue's bias comes from the first columns",
        (
            gemm(
                "GemmBuild._finish_c",
                'self.costs.link("load", "b", bias, self.bias_name, (0, 1), self.cols(j))',
                'self.costs.link("load", "b", bias, self.bias_name, (0, 1), self.cols(0))',
            ),
        ),
        EPILOGUE,
        "differ from numpy",
    ),
)


def _verdict(copy: Any, case: tuple[str, dict[str, Any], dict[str, Any]]) -> Any:
    kind, group_fields, schedule_fields = case
    fusion, fused = copy.fusion.groups, copy.systolic.fused
    machine = copy.systolic.archs.load_arch("gemmini")
    design = copy.systolic.model.SystolicDesign(machine.array, machine.dataflow)
    if kind == "mlp":
        group = fusion.FusedMlp(**group_fields)
        schedule = fused.MlpSchedule(**schedule_fields)
    else:
        group = fusion.EpilogueGemm(**group_fields)
        schedule = fused.GemmSchedule(**schedule_fields)
    return copy.systolic.fused.verify.verify_fused(machine, design, group, schedule, seed=4)


@pytest.mark.slow
def test_the_unmutated_copy_verifies_every_case() -> None:
    copy = load_simcore_copy()
    for mutant in MUTANTS:
        verdict = _verdict(copy, mutant.case)
        assert verdict.ok, f"{mutant.name}: {verdict.detail}"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_broken_schedule_or_engine_is_caught(mutant: Mutant) -> None:
    verdict = _verdict(load_simcore_copy(mutant.rewrites), mutant.case)
    assert not verdict.ok and mutant.caught_by in verdict.detail, f"{mutant.name}: {verdict.detail}"
