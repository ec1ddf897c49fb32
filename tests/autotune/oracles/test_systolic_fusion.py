"""A network's fusion searched on the systolic array with its memory system: by its objective
the plan is never worse than every operation apart, no fused group beats its bound, attention
and a gate multiply are refused one group at a time, a group over the buffers is refused by
arithmetic, the best schedule is the fused engine's own enumeration's, and the command reports
it."""

from __future__ import annotations

import json

import pytest
from helpers.cli import run_error
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.cli import main
from autotune.oracles import get
from autotune.oracles.fusion import FusionRefused
from autotune.oracles.systolic_memory.fusion import stand_in
from autotune.results.fusion import FusionPlan, search
from autotune.results.fusion_report import format_report, group_rows
from search_spaces.fusion_systolic import point_count
from search_spaces.systolic_blocked import design
from simcore.fusion.groups import EpilogueGemm, FusedMlp, prefill
from simcore.systolic.fused.schedule import MlpSchedule
from simcore.systolic.fused.search import best_fused
from workloads.graph import Graph
from workloads.network import Builder

MEASURE = {"cycles": "cycles", "energy": "energy_pj", "dram_words": "dram_words"}


def small_layer(tokens: int, d: int, hidden: int, heads: int, gated: bool) -> Graph:
    """Attention over `tokens`, then an MLP with biases and a residual add (GPT-2's), or a
    SwiGLU (gate product, SiLU, a multiply by the up product; LLaMA's)."""
    b = Builder("small")
    x = b.tensor("x", tokens, d)
    b.block("layer", 2)
    q, k, v = (b.tensor(n, heads, tokens, d) for n in "qkv")
    s = b.op("scores", "matmul", (heads, tokens, d, tokens), (q, k), (heads, tokens, tokens))
    shape = (heads, tokens, tokens)
    p = b.op("softmax", "softmax", shape, (s,), shape, scale=d**-0.5, causal=True)
    b.op("context", "matmul", (heads, tokens, tokens, d), (p, v), (heads, tokens, d))
    if gated:
        g = b.op(
            "gate", "gemm", (tokens, d, hidden), (x, b.tensor("wg", d, hidden)), (tokens, hidden)
        )
        g = b.op("silu", "silu", (1, tokens, hidden), (g,), (tokens, hidden))
        u = b.op(
            "up", "gemm", (tokens, d, hidden), (x, b.tensor("wu", d, hidden)), (tokens, hidden)
        )
        h = b.op("gated", "mul", (1, tokens, hidden), (g, u), (tokens, hidden))
        y = b.op("down", "gemm", (tokens, hidden, d), (h, b.tensor("w2", hidden, d)), (tokens, d))
    else:
        h = b.op(
            "up", "gemm", (tokens, d, hidden), (x, b.tensor("w1", d, hidden)), (tokens, hidden)
        )
        h = b.op(
            "up.bias", "bias", (1, tokens, hidden), (h, b.tensor("b1", hidden)), (tokens, hidden)
        )
        h = b.op("gelu", "gelu", (1, tokens, hidden), (h,), (tokens, hidden), form="tanh")
        y = b.op("down", "gemm", (tokens, hidden, d), (h, b.tensor("w2", hidden, d)), (tokens, d))
        y = b.op("down.bias", "bias", (1, tokens, d), (y, b.tensor("b2", d)), (tokens, d))
    b.op("residual", "add", (1, tokens, d), (x, y), (tokens, d))
    return b.graph("a small layer")


def _plan(graph: Graph, machine: str, objective: str = "cycles") -> FusionPlan:
    oracle = get("systolic")
    return search(graph, oracle, oracle.parse_machine(machine), objective=objective)


def _check(plan: FusionPlan) -> None:
    measure = MEASURE[plan.objective]
    totals = plan.totals()
    assert totals[f"fused_{measure}"] <= totals[f"apart_{measure}"] * (1 + 1e-12)
    index = list(MEASURE).index(plan.objective)
    for region in plan.regions:
        assert region.choices[0].fuse == "apart"
        for group in region.groups:
            if group.fused is not None:  # every group timed, chosen or not, holds its bound
                assert group.fused.cycles >= group.fused.bound_cycles
                assert group.fused.dram_words >= group.fused.bound_words
        for group in region.chosen:
            assert group.fused is not None and group.fused.verified
            assert group.saved()[index] >= 0


@pytest.mark.slow
@settings(max_examples=examples(8), deadline=None)
@given(
    tokens=st.sampled_from((8, 24, 40)),
    d=st.sampled_from((16, 48)),
    hidden=st.sampled_from((32, 80)),
    heads=st.integers(1, 2),
    gated=st.booleans(),
    capacity=st.sampled_from(("4 KiB", "256 KiB")),
    objective=st.sampled_from(tuple(MEASURE)),
)
def test_fused_plan_never_worse_and_within_its_bounds(
    tokens: int, d: int, hidden: int, heads: int, gated: bool, capacity: str, objective: str
) -> None:
    machine = f"arch=gemmini,buffers.scratchpad.capacity={capacity}"
    _check(_plan(small_layer(tokens, d, hidden, heads, gated), machine, objective))


def test_groups_reported_attention_and_gate_refused() -> None:
    plan = _plan(small_layer(32, 32, 64, 2, True), "arch=gemmini")
    _check(plan)
    rows = group_rows(plan)
    attention = next(r for r in rows if r["kind"] == "attention")
    assert attention["status"] == "refused" and "no attention schedule" in str(attention["refused"])
    gates = [r for r in rows if "gated" in str(r["operations"])]
    assert gates and all("no gate step" in str(r["refused"]) for r in gates)
    fused = [r for r in rows if r["status"] == "fused"]
    assert fused and all(str(r["verification"]).startswith("exact: ") for r in fused)
    assert "attention layer.scores..context" in format_report(plan, "systolic", "gemmini")


def test_a_group_over_the_buffers_is_refused_by_arithmetic() -> None:
    oracle = get("systolic")
    machine = oracle.parse_machine("arch=gemmini,buffers.scratchpad.capacity=300 B")
    with pytest.raises(FusionRefused, match="fits the buffers"):
        oracle.time_fused(FusedMlp(32, 64, 64, 64), machine)


def test_the_best_is_the_fused_engines_own() -> None:
    """The declared domain is the fused engine's enumeration: the same best, all points."""
    oracle = get("systolic")
    machine = oracle.parse_machine("arch=gemmini")
    system = machine.system
    for group in (EpilogueGemm(40, 48, 80, ("bias", "relu")), FusedMlp(24, 32, 64, 32)):
        found = oracle.time_fused(group, machine)
        own = best_fused(system, design(system, {}), group, vector=system.vector_unit)
        assert found.cycles == own.run.cycles and found.feasible == own.tried
        assert found.schedule == own.schedules[0].describe()
        assert found.points == point_count(group, system) and found.verified


def test_batched_products_and_large_groups() -> None:
    oracle = get("systolic")
    machine = oracle.parse_machine("arch=gemmini")
    one = oracle.time_fused(EpilogueGemm(24, 32, 48, ("scale",), 1, 0.5), machine)
    three = oracle.time_fused(EpilogueGemm(24, 32, 48, ("scale",), 3, 0.5), machine)
    assert three.cycles == 3 * one.cycles and three.dram_words == 3 * one.dram_words
    assert one.bound_cycles <= three.bound_cycles <= 3 * one.bound_cycles <= three.cycles
    with pytest.raises(FusionRefused, match="no attention schedule"):
        oracle.time_fused(prefill(2, 64, 16), machine)
    small = stand_in(FusedMlp(1024, 512, 2048, 512), MlpSchedule(64, 64, 512, 64))
    assert (small.m, small.d, small.hidden, small.d_out) == (128, 128, 256, 128)


@pytest.mark.slow
def test_ops_fuse_command(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ops", "gpt2", "--seq", "16", "--oracle", "systolic", "--arch", "tpuv4i"]
    code = main([*argv, "--fuse", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    assert report["fused_cycles"] <= report["apart_cycles"]
    status = {g["kind"]: g["status"] for g in report["groups"] if g["status"] == "fused"}
    assert "mlp" in status or "epilogue" in status
    attention = [g for g in report["groups"] if g["kind"] == "attention"]
    assert attention and all(g["status"] == "refused" for g in attention)


def test_ops_fuse_needs_an_architecture(capsys: pytest.CaptureFixture[str]) -> None:
    message = run_error(capsys, ["ops", "gpt2", "--seq", "8", "--oracle", "systolic", "--fuse"])
    assert "give --arch NAME" in message


def test_a_failed_verification_is_labelled_and_never_chosen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from autotune.oracles.systolic_memory import fusion
    from simcore.systolic.fused import verify

    monkeypatch.setattr(verify, "verify_fused", lambda *a, **k: verify.FusedVerdict(False, "off"))
    fusion.time_fused.cache_clear()
    try:
        plan = _plan(small_layer(16, 32, 48, 1, False), "arch=gemmini")
    finally:
        fusion.time_fused.cache_clear()
    timed = [g.fused for r in plan.regions for g in r.groups if g.fused is not None]
    assert timed and all(not f.verified and f.verification == "failed: exact: off" for f in timed)
    assert all(not r.chosen for r in plan.regions)
    assert plan.totals()["fused_cycles"] == plan.totals()["apart_cycles"]
