"""The fusible groups of a network graph: the bundled networks' groups as expected, and on random
graphs every group found is a valid subgraph (a chain whose kept tensors no operation outside it
reads, computing the group's multiply-adds), and a region's choices are disjoint."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedMlp
from workloads.fusion_groups import Candidate, candidates, regions
from workloads.graph import Graph
from workloads.network import Builder, load_graph
from workloads.networks import build

VECTOR = ("bias", "relu", "gelu", "silu", "add", "mul", "scale", "softmax", "layernorm")


def _names(graph: Graph) -> list[tuple[str, str, str]]:
    return [(c.kind, c.operations[0], c.operations[-1]) for c in candidates(graph)]


def test_gpt2_layer_groups() -> None:
    found = _names(build("gpt2", seq=64))
    assert ("attention", "h.scores", "h.context") in found
    assert ("mlp", "h.mlp.c_fc", "h.mlp.c_proj.bias") in found
    assert ("epilogue", "h.mlp.c_fc", "h.mlp.gelu") in found
    assert ("epilogue", "h.attn.c_proj", "h.residual_1") in found
    mlp = next(c for c in candidates(build("gpt2", seq=64)) if c.kind == "mlp")
    assert mlp.group == FusedMlp(64, 768, 3072, 768, "gelu", True, "tanh")
    assert mlp.count == 12 and mlp.block == "h"


def test_llama_attention_prefill_and_decode() -> None:
    prefill = next(c for c in candidates(build("llama2_7b", seq=256)) if c.kind == "attention")
    assert prefill.group == FusedAttention(32, 256, 256, 128, causal=True, scale=1 / math.sqrt(128))
    decode = next(
        c for c in candidates(build("llama2_7b", phase="decode", seq=256)) if c.kind == "attention"
    )
    assert decode.group == FusedAttention(32, 1, 256, 128, scale=1 / math.sqrt(128))
    # SwiGLU: the gate product's SiLU, then the multiply by the up product's output (a gate)
    found = candidates(build("llama2_7b", seq=256))
    gated = next(c for c in found if c.operations[-1] == "layers.mlp.mul")
    assert gated.operations == ("layers.mlp.gate_proj", "layers.mlp.silu", "layers.mlp.mul")
    assert gated.group == EpilogueGemm(256, 4096, 11008, ("silu", "gate"))
    assert not any(c.kind == "mlp" for c in found)


def test_bert_erf_gelu_and_region_choices() -> None:
    graph = build("bert_base", seq=32)
    mlp = next(c for c in candidates(graph) if c.kind == "mlp")
    assert isinstance(mlp.group, FusedMlp) and mlp.group.gelu == "erf"
    region = next(r for r in regions(graph) if mlp in r.candidates)
    # apart; c_fc with bias, or with bias and GELU; c_proj with bias, or with the residual
    # too; each c_fc choice with each c_proj choice; the MLP: 1 + 2 + 2 + 4 + 1
    assert len(region.choices()) == 10
    assert region.choices()[0] == ()


def test_a_tensor_read_twice_is_not_kept() -> None:
    b = Builder("tap")
    x = b.tensor("x", 16, 8)
    y = b.op("p", "gemm", (16, 8, 24), (x, b.tensor("w", 8, 24)), (16, 24))
    b.op("r", "relu", (1, 16, 24), (y,), (16, 24))
    b.op("tap", "scale", (1, 16, 24), (y,), (16, 24))
    assert candidates(b.graph("")) == []


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    """Segments of a product followed by a random chain of vector operations, some read twice,
    some into a second product; and attention-shaped segments with random dimensions."""
    b = Builder("random")
    x = b.tensor("x", 32, 16)
    sizes = st.sampled_from((8, 16, 24))
    for index in range(draw(st.integers(1, 4))):
        b.block(f"s{index}", draw(st.integers(1, 3)))
        shape = draw(st.sampled_from(("attention", "mlp", "chain")))
        if shape == "mlp":
            _mlp_segment(draw, b, x, index)
            continue
        if shape == "attention":
            heads, q, d, k = draw(st.integers(1, 3)), draw(sizes), draw(sizes), draw(sizes)
            s = b.op(f"qk{index}", "matmul", (heads, q, d, k), (x, x), (heads, q, k))
            p = b.op(
                f"sm{index}",
                "softmax",
                (heads, q, draw(st.sampled_from((k, 8)))),
                (s,),
                (heads, q, k),
            )
            dv = draw(st.sampled_from((d, 8)))
            b.op(f"pv{index}", "matmul", (heads, q, k, dv), (p, x), (heads, q, dv))
            continue
        m, kk, n = draw(sizes), draw(sizes), draw(sizes)
        y = b.op(f"g{index}", "gemm", (m, kk, n), (x, b.tensor(f"w{index}", kk, n)), (m, n))
        for step in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(VECTOR + ("gemm",)))
            name = f"v{index}_{step}"
            if kind == "gemm":
                n2 = draw(sizes)
                y = b.op(name, "gemm", (m, n, n2), (y, b.tensor(f"{name}.w", n, n2)), (m, n2))
                n = n2
                continue
            inputs = (y, b.tensor(f"{name}.other", m, n)) if kind in ("add", "mul") else (y,)
            if draw(st.booleans()) and kind == "add":
                inputs = inputs[::-1]
            if draw(st.integers(0, 5)) == 0:
                b.op(f"{name}.tap", "copy", (m * n,), (y,), (m, n))
            rows = draw(st.sampled_from((m, m + 8)))
            y = b.op(name, kind, (1, rows, n), inputs, (m, n))
    return b.graph("")


def _mlp_segment(draw: st.DrawFn, b: Builder, x: str, index: int) -> None:
    """gemm, [bias], an activation, gemm, [bias]: each bias drawn apart, an activation at times
    read twice, the second product's rows at times another size."""
    m, d, h, n = 32, 16, draw(st.sampled_from((24, 48))), draw(st.sampled_from((8, 16)))
    y = b.op(f"up{index}", "gemm", (m, d, h), (x, b.tensor(f"w1_{index}", d, h)), (m, h))
    if draw(st.booleans()):
        y = b.op(f"b1_{index}", "bias", (1, m, h), (y, b.tensor(f"b1v{index}", h)), (m, h))
    act = draw(st.sampled_from(("relu", "gelu", "silu", "mul")))
    y = b.op(f"act{index}", act, (1, m, h), (y,), (m, h))
    if draw(st.integers(0, 4)) == 0:
        b.op(f"tap{index}", "copy", (m * h,), (y,), (m, h))
    rows = draw(st.sampled_from((m, m, 8)))
    y = b.op(f"down{index}", "gemm", (rows, h, n), (y, b.tensor(f"w2_{index}", h, n)), (rows, n))
    if draw(st.booleans()):
        b.op(f"b2_{index}", "bias", (1, rows, n), (y, b.tensor(f"b2v{index}", n)), (rows, n))


def _macs(graph: Graph, candidate: Candidate) -> int:
    return sum(graph.operation(n).macs for n in candidate.operations)


@settings(max_examples=examples(200), deadline=None)
@given(graphs())
def test_every_group_is_a_valid_subgraph(graph: Graph) -> None:
    order = [op.name for op in graph.operations]
    for c in candidates(graph):
        ops = [graph.operation(n) for n in c.operations]
        assert [order.index(n) for n in c.operations] == sorted(
            order.index(n) for n in c.operations
        )
        assert {op.count for op in ops} == {c.count} and {op.block for op in ops} == {c.block}
        assert c.intermediates == tuple(op.outputs[0] for op in ops[:-1])
        for before, after in zip(ops, ops[1:]):
            assert before.outputs[0] in after.inputs  # a chain
            assert graph.tensors[before.outputs[0]].consumers == (after.name,)  # kept on chip
        assert ops[0].family == "product"
        group = c.group
        if isinstance(group, EpilogueGemm):
            assert c.kind == "epilogue" and len(group.epilogue) == len(ops) - 1
            assert group.macs == ops[0].macs
        elif isinstance(group, FusedMlp):
            assert c.kind == "mlp" and group.macs == _macs(graph, c)
        else:
            assert c.kind == "attention"
            # a causal group skips the products above the diagonal
            assert group.macs < _macs(graph, c) if group.causal else group.macs == _macs(graph, c)


@settings(max_examples=examples(100), deadline=None)
@given(graphs())
def test_regions_partition_and_choices_are_disjoint(graph: Graph) -> None:
    found = regions(graph)
    seen = [n for r in found for n in r.operations]
    assert len(seen) == len(set(seen))
    every = set(candidates(graph))
    assert {c for r in found for c in r.candidates} == every
    for region in found:
        choices = region.choices()
        assert choices[0] == ()
        for chosen in choices:
            used = [n for c in chosen for n in c.operations]
            assert len(used) == len(set(used)) and set(used) <= set(region.operations)
        assert {c for chosen in choices for c in chosen} == set(region.candidates)


@pytest.mark.parametrize("name", ["gpt2", "bert_base", "llama2_7b"])
def test_bundled_groups_are_valid_subgraphs(name: str) -> None:
    test_every_group_is_a_valid_subgraph.hypothesis.inner_test(build(name))  # type: ignore[attr-defined]


def test_onnx_model_groups(tmp_path: Path) -> None:
    """An ONNX file's MatMul, Add, Gelu, Div and Softmax nodes make the same groups."""
    helper = pytest.importorskip("onnx").helper
    from helpers.onnx_models import model, save

    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1_bias"),
        helper.make_node("Gelu", ["hb"], ["g"], name="gelu"),
        helper.make_node("MatMul", ["g", "w2"], ["y"], name="fc2"),
        helper.make_node("Add", ["y", "b2"], ["yb"], name="fc2_bias"),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
        helper.make_node("Div", ["s", "d"], ["ss"], name="scale"),
        helper.make_node("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="pv"),
    ]
    weights = {"w1": (32, 64), "b1": (64,), "w2": (64, 32), "b2": (32,), "d": ()}
    shapes = {"x": [16, 32], "q": [2, 16, 8], "kt": [2, 8, 24], "v": [2, 24, 8]}
    path = save(model(nodes, shapes, ["yb", "o"], weights, opset=20), tmp_path / "m.onnx")
    found = {c.kind: c for c in candidates(load_graph(path))}
    assert found["mlp"].group == FusedMlp(16, 32, 64, 32, "gelu", True, "erf")
    assert found["attention"].operations == ("qk", "scale", "softmax", "pv")
    assert found["attention"].group == FusedAttention(2, 16, 24, 8, scale=1.0)
