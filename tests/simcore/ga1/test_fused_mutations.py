"""Broken fused programs are caught: each mutant is a fresh copy of simcore with one mistake put
into its syntax tree (tests/helpers/ast_mutation.py), and the verification of a group the
mistake touches must fail, in the check named (the results against numpy, the hazard replay,
or the timings of the compiled engine and the tree against the reference simulator). A call
replaced by None is an instruction left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

attention = partial(Rewrite, "ga1.fused.attention")
mlp = partial(Rewrite, "ga1.fused.mlp")
gemm = partial(Rewrite, "ga1.fused.gemm")
emit = partial(Rewrite, "ga1.fused.emit")
RESULTS, HAZARDS, TIMING = "results", "hazards", "timing"
PREFILL = {"kind": "attention", "heads": 1, "queries": 30, "keys": 30, "head_dim": 8}
CAUSAL = {**PREFILL, "causal": True}


@dataclass(frozen=True)
class Mutant:
    name: str
    rewrites: tuple[Rewrite, ...]
    group: dict[str, Any]  # "kind" and the group's fields
    caught_by: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "attention does not rescale its running sum",
        (attention("AttentionBuilder._soft_row", 'e.vop("mul", l, l, alpha)', "None"),),
        PREFILL,
        (RESULTS,),
    ),
    Mutant(
        "attention does not rescale its output",
        (attention("AttentionBuilder._soft_row", 'e.vop("mul", o, o, alpha)', "None"),),
        PREFILL,
        (RESULTS,),
    ),
    Mutant(
        "attention does not subtract the running maximum",
        (attention("AttentionBuilder._soft_row", 'e.vop("sub", s, s, new)', "None"),),
        PREFILL,
        (RESULTS,),
    ),
    Mutant(
        "attention's rescale factor is exp(m_new - m_old)",
        (
            attention(
                "AttentionBuilder._soft_row",
                'e.vop("sub", alpha, old, new)',
                'e.vop("sub", alpha, new, old)',
            ),
        ),
        PREFILL,
        (RESULTS,),
    ),
    Mutant(
        "the causal mask tiles are swapped",
        (attention("AttentionBuilder.diag", "0 if t >= 0 else 1", "1 if t >= 0 else 0"),),
        {**CAUSAL, "keys": 35, "causal_offset": 5},
        (RESULTS,),
    ),
    Mutant(
        "a row sees the key tiles past its diagonal",
        (
            attention(
                "AttentionBuilder.last",
                "(self.T - 1 + self.off) // self.T",
                "1 + (self.T - 1 + self.off) // self.T",
            ),
        ),
        {**CAUSAL, "keys": 35, "causal_offset": 5},
        (RESULTS,),
    ),
    Mutant(
        "the padding of the last key tile takes part in the softmax",
        (
            attention(
                "AttentionBuilder._soft_row", 'e.vop("add", s, s, self.consts["PAD"])', "None"
            ),
        ),
        {**PREFILL, "keys": 27},
        (RESULTS,),
    ),
    Mutant(
        "K held by rows is not transposed",
        (attention("AttentionBuilder._qk", "e.transpose(k, k)", "None"),),
        {**PREFILL, "k_layout": "rows"},
        (RESULTS,),
    ),
    Mutant(
        "the pipelined phases share one set of scores",
        (attention("AttentionBuilder.s_slot", "jb % self.params.s_buffers", "0"),),
        PREFILL,
        (RESULTS,),
        {"bk": 1, "s_buffers": 2},
    ),
    Mutant(
        "the MLP's hidden block skips its activation",
        (
            mlp(
                "MlpBuilder._epilogue",
                "activation(e, g.activation, h, self.temp, self.ones, g.gelu)",
                "None",
            ),
        ),
        {"kind": "mlp", "m": 12, "d": 10, "hidden": 30, "d_out": 9},
        (RESULTS,),
    ),
    Mutant(
        "the MLP's bias tile comes from the block's first columns",
        (mlp("MlpBuilder._epilogue", "u * self.bh + y", "y"),),
        {"kind": "mlp", "m": 12, "d": 10, "hidden": 40, "d_out": 9},
        (RESULTS,),
    ),
    Mutant(
        "a deferred epilogue finishes the current block instead of the previous one",
        (gemm("GemmBuilder._block", "self._epilogue(e, before)", "self._epilogue(e, block)"),),
        {"kind": "gemm", "m": 20, "k": 30, "n": 40, "epilogue": ("bias", "gelu")},
        (RESULTS,),
        {"c_buffers": 2, "bm": 1, "bn": 2},
    ),
    Mutant(
        "the gate multiply left out",
        (gemm("GemmBuilder._finish", 'e.vop("mul", c, c, gate)', "None"),),
        {"kind": "gemm", "m": 20, "k": 12, "n": 24, "epilogue": ("silu", "gate")},
        (RESULTS,),
    ),
    Mutant(
        "the ring holds one column's residual and gate tiles no longer than the streamed sets",
        (
            gemm(
                "GemmBuilder.__init__",
                "max(params.buffers * (self.bm + self.bn), self.epilogue_tiles())",
                "params.buffers * (self.bm + self.bn)",
            ),
        ),
        {"kind": "gemm", "m": 40, "k": 12, "n": 24, "epilogue": ("bias", "residual", "gate")},
        (RESULTS,),
        {"bm": 4, "bn": 1, "buffers": 1},
    ),
    Mutant(
        "a product does not wait for the vector unit's result it reads",
        (Rewrite("ga1.timing", "run_timing", "ready[s1]", "0", branch="op == MXU"),),
        PREFILL,
        (HAZARDS, TIMING),
    ),
    Mutant(
        "a repeated loop's period ignores where the ring of streamed tiles is",
        (
            emit(
                "FusedEmitter.cycle",
                "math.lcm(period, ring_period(ring.value - value, ring.size))",
                "period",
            ),
            emit("FusedEmitter._advance", "moved % ring.size", "0"),
        ),
        {"kind": "gemm", "m": 8, "k": 64, "n": 24, "epilogue": ()},
        (TIMING,),
        {"bm": 1, "bn": 3, "buffers": 3},
        {"T": 2},
    ),
)


def _group(fused: Any, spec: dict[str, Any]) -> Any:
    fields = dict(spec)
    kind = fields.pop("kind")
    made = {"gemm": fused.EpilogueGemm, "mlp": fused.FusedMlp, "attention": fused.FusedAttention}
    return made[kind](**fields)


def _failed_checks(copy: Any, mutant: Mutant) -> set[str]:
    fused = copy.ga1.fused
    machine = copy.ga1.machine.Machine(**{"slots": 40, **mutant.machine})
    group = _group(fused, mutant.group)
    params = fused.params_from(group, mutant.params)
    verification = fused.fused_program(group, machine, params).verify(seed=5)
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
