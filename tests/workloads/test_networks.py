"""The bundled networks as graphs, each held to an independent count written from the model's
published dimensions (not from the builders): operations by kind, MACs, elements by kind."""

from __future__ import annotations

from collections import Counter

import pytest

from workloads import load_workload
from workloads.graph import Graph
from workloads.model import WorkloadError
from workloads.network import gemm_workload, load_graph
from workloads.networks import build


def elements_by_kind(graph: Graph) -> dict[str, int]:
    found: Counter[str] = Counter()
    for op in graph.operations:
        found[op.kind] += op.count * op.elements
    return dict(found)


def test_gpt2_seq256_counts() -> None:
    s, d, h, layers, vocab = 256, 768, 12, 12, 50257
    graph = load_graph("gpt2", seq=s)
    assert graph.macs == layers * (12 * s * d * d + 2 * s * s * d) + s * d * vocab
    assert graph.counts() == {
        "gemm": 4 * layers + 1,
        "bias": 4 * layers,
        "permute": 4 * layers,
        "split": 3 * layers,
        "add": 2 * layers + 1,
        "layernorm": 2 * layers + 1,
        "matmul": 2 * layers,
        "gelu": layers,
        "softmax": layers,
        "gather": 2,
    }
    elements = elements_by_kind(graph)
    assert elements["softmax"] == layers * h * s * s
    assert elements["layernorm"] == (2 * layers + 1) * s * d
    assert elements["gelu"] == layers * s * 4 * d
    assert elements["bias"] == layers * s * (3 * d + d + 4 * d + d)
    assert elements["add"] == (2 * layers + 1) * s * d
    softmax = next(op for op in graph.operations if op.kind == "softmax")
    assert softmax.option("causal") is True and softmax.option("scale") == pytest.approx(0.125)


def test_bert_base_counts_and_gemms_equal_the_onnx_derived_list() -> None:
    s, d, ff, h, layers = 128, 768, 3072, 12, 12
    graph = load_graph("bert_base", seq=s)
    assert graph.macs == layers * (4 * s * d * d + 2 * s * d * ff + 2 * s * s * d) + d * d
    assert graph.counts()["softmax"] == layers and graph.counts()["layernorm"] == 2 * layers + 1
    assert elements_by_kind(graph)["softmax"] == layers * h * s * s
    assert elements_by_kind(graph)["elementwise"] == d  # the pooler's tanh, untimed by GA-1
    _same_gemms(graph, "bert_base_s128")


def _same_gemms(graph: Graph, bundled: str) -> None:
    def key(workload: object) -> Counter[str]:
        found: Counter[str] = Counter()
        for gemm in workload.gemms:  # type: ignore[attr-defined]
            found[str(gemm.shape)] += gemm.weight
        return found

    assert key(gemm_workload(graph)) == key(load_workload(bundled))


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_llama2_7b_counts(phase: str) -> None:
    n, d, ff, heads, layers, vocab, dh = 2048, 4096, 11008, 32, 32, 32000, 128
    graph = load_graph("llama2_7b", phase=phase, seq=n, batch=1)
    t = n if phase == "prefill" else 1
    per_layer = 4 * t * d * d + 3 * t * d * ff + 2 * heads * t * n * dh
    assert graph.macs == layers * per_layer + d * vocab  # logits of the last token
    elements = elements_by_kind(graph)
    assert elements["kv_read"] == layers * 2 * heads * n * dh
    assert elements["kv_append"] == layers * 2 * heads * t * dh
    assert elements["softmax"] == layers * heads * t * n
    assert elements["rmsnorm"] == 2 * layers * t * d + d
    assert elements["silu"] == layers * t * ff
    assert elements["mul"] == layers * (2 * 2 * t * d + t * ff)  # RoPE's cos and sin; SwiGLU
    assert elements["copy"] == layers * 2 * t * d  # RoPE's rotate_half of q and k
    # one layer's GEMMs equal the ONNX-derived single-layer lists, scaled by the layers
    one = load_workload(f"llama2_7b_{phase}" if phase == "prefill" else "llama2_7b_decode_b1")
    assert layers * sum(g.macs * g.weight for g in one.gemms) + d * vocab == graph.macs


def test_llama2_decode_batch_scales_the_cache() -> None:
    one = load_graph("llama2_7b", phase="decode", seq=1024, batch=1)
    four = load_graph("llama2_7b", phase="decode", seq=1024, batch=4)
    assert elements_by_kind(four)["kv_read"] == 4 * elements_by_kind(one)["kv_read"]


def test_resnet50_counts() -> None:
    graph = load_graph("resnet50")
    # conv1 7x7/2 -> 112; per stage (width, blocks, output size); bottleneck 1x1, 3x3, 1x1 (x4)
    macs, cin = 112 * 112 * 3 * 49 * 64, 64
    for width, blocks, out in ((64, 3, 56), (128, 4, 28), (256, 6, 14), (512, 3, 7)):
        inside = out * 2 if width > 64 else out
        for block in range(blocks):
            first = inside if block == 0 else out
            macs += first * first * cin * width + out * out * width * width * 9
            macs += out * out * width * 4 * width
            if block == 0:
                macs += out * out * cin * 4 * width
            cin = 4 * width
    macs += 2048 * 1000
    assert graph.macs == macs == 4_089_184_256  # torchvision: 4.09 GFLOPS (multiply-adds)
    assert graph.counts()["conv"] == 53 and graph.counts()["relu"] == 49
    _same_gemms(graph, "resnet50")


def test_mobilenet_v2_counts() -> None:
    graph = load_graph("mobilenet_v2")
    assert graph.macs == 300_774_272  # torchvision: 0.30 GFLOPS; the paper: 300M
    assert graph.counts()["conv"] == 52 and graph.counts()["elementwise"] == 35  # ReLU6
    _same_gemms(graph, "mobilenet_v2")


def test_every_bundled_graph_is_connected() -> None:
    for name in ("gpt2", "bert_base", "llama2_7b", "resnet50", "mobilenet_v2"):
        graph = build(name)
        for op in graph.operations:
            for tensor in op.inputs:
                assert op.name in graph.tensors[tensor].consumers
            for tensor in op.outputs:
                assert graph.tensors[tensor].producer == op.name


def test_bad_settings_are_one_line_errors() -> None:
    with pytest.raises(WorkloadError, match="seq must be a positive integer"):
        build("gpt2", seq=0)
    with pytest.raises(WorkloadError, match="takes seq, batch, not phase"):
        build("gpt2", phase="decode")
    with pytest.raises(WorkloadError, match="phase must be prefill or decode"):
        build("llama2_7b", phase="train")
    with pytest.raises(WorkloadError, match="longer than its 1024 positions"):
        build("gpt2", seq=2048)
    with pytest.raises(WorkloadError, match="longer than its 4096 positions"):
        build("llama2_7b", seq=4097)
