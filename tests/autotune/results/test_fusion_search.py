"""A network's fusion searched on GA-1: the best choice of each region is never slower than its
operations apart, every fused group chosen is verified and no faster than its bound, a group
that does not fit is refused with what it needs, and the command reports it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from helpers.cli import run_error
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.cli import main
from autotune.oracles import get
from autotune.oracles.fusion import FusedTime
from autotune.results.fusion import FusionPlan, search
from autotune.results.fusion_report import format_report, group_rows
from simcore.fusion.groups import FusedGroup
from workloads.graph import Graph
from workloads.network import Builder


def small_layer(tokens: int, d: int, hidden: int, heads: int, causal: bool) -> Graph:
    """Attention over `tokens`, then an MLP with biases and a residual add, as GPT-2 has them."""
    b = Builder("small")
    x = b.tensor("x", tokens, d)
    b.block("layer", 2)
    q, k, v = (b.tensor(n, heads, tokens, d) for n in "qkv")
    s = b.op("scores", "matmul", (heads, tokens, d, tokens), (q, k), (heads, tokens, tokens))
    p = b.op(
        "softmax",
        "softmax",
        (heads, tokens, tokens),
        (s,),
        (heads, tokens, tokens),
        scale=d**-0.5,
        causal=causal,
    )
    b.op("context", "matmul", (heads, tokens, tokens, d), (p, v), (heads, tokens, d))
    h = b.op("up", "gemm", (tokens, d, hidden), (x, b.tensor("w1", d, hidden)), (tokens, hidden))
    h = b.op("up.bias", "bias", (1, tokens, hidden), (h, b.tensor("b1", hidden)), (tokens, hidden))
    h = b.op("gelu", "gelu", (1, tokens, hidden), (h,), (tokens, hidden), form="tanh")
    y = b.op("down", "gemm", (tokens, hidden, d), (h, b.tensor("w2", hidden, d)), (tokens, d))
    y = b.op("down.bias", "bias", (1, tokens, d), (y, b.tensor("b2", d)), (tokens, d))
    b.op("residual", "add", (1, tokens, d), (x, y), (tokens, d))
    return b.graph("a small layer")


MEASURE = {"cycles": "cycles", "energy": "energy_pj", "dram_words": "dram_words"}


def _plan(graph: Graph, slots: int, objective: str = "cycles") -> FusionPlan:
    oracle = get("ga1")
    return search(graph, oracle, oracle.parse_machine(f"slots={slots}"), objective=objective)


def _check(plan: FusionPlan) -> None:
    measure = MEASURE[plan.objective]
    totals = plan.totals()
    assert totals[f"fused_{measure}"] <= totals[f"apart_{measure}"] * (1 + 1e-12)
    index = list(MEASURE).index(plan.objective)
    for region in plan.regions:
        best = min(getattr(c, measure) for c in region.choices)
        assert region.choices[0].fuse == "apart"
        saved = sum(g.saved()[index] for g in region.chosen)
        assert saved == pytest.approx(getattr(region.choices[0], measure) - best)
        used = [n for g in region.chosen for n in g.candidate.operations]
        assert len(used) == len(set(used))
        for group in region.chosen:
            assert group.fused is not None and group.fused.verified
            assert group.saved()[index] >= 0
            assert group.fused.cycles >= group.fused.bound_cycles
            assert group.fused.dram_words >= group.fused.bound_words


@settings(max_examples=examples(12), deadline=None)
@given(
    tokens=st.sampled_from((8, 13, 24)),
    d=st.sampled_from((8, 16)),
    hidden=st.sampled_from((16, 40)),
    heads=st.integers(1, 2),
    causal=st.booleans(),
    slots=st.sampled_from((24, 64)),
    objective=st.sampled_from(tuple(MEASURE)),
)
def test_fused_plan_never_worse_and_verified(
    tokens: int, d: int, hidden: int, heads: int, causal: bool, slots: int, objective: str
) -> None:
    """By its objective, the plan is never worse than every operation apart: with dram_words,
    fusion never moves more DRAM words than the operations apart."""
    _check(_plan(small_layer(tokens, d, hidden, heads, causal), slots, objective))


def test_each_group_reported_and_attention_fused() -> None:
    plan = _plan(small_layer(32, 16, 64, 2, True), 64)
    _check(plan)
    rows = {r["group"]: r for r in group_rows(plan)}
    assert len(rows) == 6  # attention; MLP; up with bias, with GELU; down with bias, residual
    attention = rows["attention: layer.scores + layer.softmax + layer.context"]
    assert attention["status"] == "fused" and attention["dram_words_saved"] > 0  # type: ignore[operator]
    text = format_report(plan, "ga1", "slots=64")
    assert "attention layer.scores..context" in text and "fused:" in text


def test_a_group_over_the_scratchpad_is_refused() -> None:
    plan = _plan(small_layer(8, 128, 16, 1, False), 16)
    mlp = next(r for r in group_rows(plan) if r["kind"] == "mlp")
    assert mlp["status"] == "refused" and mlp["fused_cycles"] is None
    assert "needs at least" in str(mlp["refused"]) and "the scratchpad has 16" in str(
        mlp["refused"]
    )
    _check(plan)


@pytest.mark.slow
def test_ops_fuse_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ops", "gpt2", "--seq", "16", "--oracle", "ga1", "--fuse", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["fused_cycles"] <= report["apart_cycles"]
    kinds = {g["kind"] for g in report["groups"] if g["status"] == "fused"}
    assert "attention" in kinds


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ops", "gpt2", "--fuse"], "--fuse searches the --oracle report's fusion"),
        (["ops", "gpt2", "--oracle", "ga1", "--fuse", "--chart", "x.png"], "--fuse takes neither"),
    ],
)
def test_ops_fuse_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in run_error(capsys, argv)


class _Unverified(type(get("ga1"))):  # type: ignore[misc]
    """GA-1 whose fused attention fails its verification."""

    def time_fused(self, group: FusedGroup, machine: Any, objective: str = "cycles") -> FusedTime:
        found = super().time_fused(group, machine, objective)
        if group.kind != "attention":
            return found
        return dataclasses.replace(found, verified=False, verification="outputs differ")


def test_a_group_failing_verification_is_never_chosen() -> None:
    graph = small_layer(32, 16, 64, 2, True)
    oracle = _Unverified()
    plan = search(graph, oracle, oracle.parse_machine("slots=64"))
    attention = next(r for r in group_rows(plan) if r["kind"] == "attention")
    assert attention["status"] == "refused"
    assert attention["refused"] == "verification outputs differ"
    assert all(g.candidate.kind != "attention" for r in plan.regions for g in r.chosen)
    _check(plan)
