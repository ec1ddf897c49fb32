"""Broken vector programs are caught: each mutant is a fresh copy of simcore with one mistake put
into its syntax tree (tests/helpers/ast_mutation.py), and the verification of an operation the
mistake touches must fail, in the check named (the results against numpy, the hazard replay, or
the timings of the compiled engine and the tree against the reference simulator). A call
replaced by None is an instruction left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

softmax = partial(Rewrite, "ga1.vector.kernels.softmax")
norms = partial(Rewrite, "ga1.vector.kernels.norms")
plan = partial(Rewrite, "ga1.vector.plan")
build = partial(Rewrite, "ga1.vector.build")
RESULTS, HAZARDS, TIMING = "results", "hazards", "timing"


@dataclass(frozen=True)
class Mutant:
    name: str
    rewrites: tuple[Rewrite, ...]
    op: dict[str, Any]  # VectorOp's fields
    caught_by: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "softmax does not subtract the row maximum",
        (softmax("_exp_shifted", 'e.vop("sub", x, x, m)', "None"),),
        {"kind": "softmax", "rows": 9, "cols": 20},
        (RESULTS,),
    ),
    Mutant(
        "the causal mask tiles are swapped",
        (plan("Plan._diag", "0 if t >= 0 else 1", "1 if t >= 0 else 0"),),
        {"kind": "softmax", "rows": 20, "cols": 24, "causal": True, "causal_offset": 3},
        (RESULTS,),
    ),
    Mutant(
        "the causal diagonal is one tile late",
        (plan("Plan._diag", "t >= self.T - 1", "t >= 2 * self.T - 1"),),
        {"kind": "softmax", "rows": 20, "cols": 24, "causal": True, "causal_offset": 3},
        (RESULTS,),
    ),
    Mutant(
        "a partial tile's padding takes part in the row maximum and sum",
        (softmax("_prepare", 'e.vop("add", v.x, v.x, plan.const("PAD"))', "None"),),
        {"kind": "softmax", "rows": 9, "cols": 21},
        (RESULTS,),
    ),
    Mutant(
        "online softmax does not rescale its running sum",
        (softmax("_online", 'e.vop("mul", s, s, t)', "None"),),
        {"kind": "softmax", "rows": 9, "cols": 40},
        (RESULTS,),
        {"reduction": "online"},
    ),
    Mutant(
        "layer norm's variance counts the padding",
        (norms("LayerNormKernel.compute", "e.masklen(x, plan.T, v.cols)", "None"),),
        {"kind": "layernorm", "rows": 9, "cols": 21},
        (RESULTS,),
    ),
    Mutant(
        "Chan's merge weighs the new tile's mean by the old count",
        (norms("_merge_moments", "n / (before + n)", "before / (before + n)"),),
        {"kind": "layernorm", "rows": 9, "cols": 40},
        (RESULTS,),
        {"reduction": "online"},
    ),
    Mutant(
        "the sfu's rsqrt is a square root",
        (Rewrite("ga1.functional", "_rsqrt", "1.0 / np.sqrt(x)", "np.sqrt(x)"),),
        {"kind": "rmsnorm", "rows": 9, "cols": 20},
        (RESULTS,),
    ),
    Mutant(
        "GELU's cubic term is 0.04 x^3",
        (Rewrite("ga1.vector.kernels.maps", "_gelu", "GELU_CUBIC", "0.04"),),
        {"kind": "gelu", "rows": 9, "cols": 20},
        (RESULTS,),
    ),
    Mutant(
        "the tile ring is one slot short of the store delay",
        (plan("Plan._layout_slots", "held + params.buffers - 1", "held + params.buffers - 2"),),
        {"kind": "silu", "rows": 30, "cols": 40},
        (RESULTS,),
        {"buffers": 3},
    ),
    Mutant(
        "the vector unit does not wait for its sources (read after write dropped)",
        (Rewrite("ga1.timing", "run_timing", "ready[s]", "0", branch="op == STORE", arm="else"),),
        {"kind": "layernorm", "rows": 9, "cols": 20},
        (HAZARDS,),  # the run ends on the DMA at the same cycle: only the replay sees it
    ),
    Mutant(
        "a pass's repeated unit ignores the tile ring's rotation",
        (plan("Plan.runs", "math.lcm(period, self.R_x)", "period"),),
        {"kind": "softmax", "rows": 9, "cols": 160},
        (TIMING,),
        {"buffers": 3},
    ),
    Mutant(
        "a repeated band group reaches back past the first visit",
        (build("_matrix", "max(1, -(-plan.delay // plan.group_visits(0)))", "1"),),
        {"kind": "add", "rows": 7, "cols": 1, "batch": 3},
        (TIMING,),
        {"buffers": 3},
        {"T": 2},
    ),
    Mutant(
        "a jump over repeated periods adds no cycles",
        (Rewrite("ga1.engine.trees", "_advance", "times * (base - _base(kept))", "0"),),
        {"kind": "relu", "rows": 80, "cols": 80},
        (TIMING,),
    ),
)


def _failed_checks(copy: Any, mutant: Mutant) -> set[str]:
    vector = copy.ga1.vector
    machine = copy.ga1.machine.Machine(**{"slots": 40, **mutant.machine})
    op, params = vector.VectorOp(**mutant.op), vector.VectorParams(**mutant.params)
    verification = vector.vector_program(op, machine, params).verify(seed=5)
    failed = {RESULTS} if not verification.result_ok else set()
    failed |= {HAZARDS} if verification.hazards else set()
    return failed | ({TIMING} if not verification.timing_ok else set())


@pytest.mark.slow
def test_the_unmutated_copy_verifies_every_mutant_case() -> None:
    copy = load_simcore_copy()
    for mutant in MUTANTS:
        assert _failed_checks(copy, mutant) == set(), mutant.name


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_a_broken_program_is_caught(mutant: Mutant) -> None:
    failed = _failed_checks(load_simcore_copy(mutant.rewrites), mutant)
    assert failed == set(mutant.caught_by), f"{mutant.name}: failed {sorted(failed)}"
