"""The bundled real networks against independent counts: the parameter count their framework
publishes (rebuilt from the GEMMs' weight operands plus the few non-GEMM parameters the
architecture adds), the MACs published (CNNs) or the MACs the published configuration gives
(transformers), loading by name, and that tools/make_workloads.py would write them unchanged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.waiting import PATIENCE
from workloads import Gemm, WorkloadError, bundled_workloads, load_workload
from workloads.listing import totals

ROOT = Path(__file__).resolve().parents[2]
NETWORKS = (
    "resnet50",
    "mobilenet_v2",
    "bert_base_s128",
    "bert_base_s512",
    "gpt2_s1024",
    "llama2_7b_prefill",
    "llama2_7b_decode_b1",
    "llama2_7b_decode_b64",
)
# Published parameter counts: torchvision's model docs (resnet50, mobilenet_v2), Hugging Face
# model cards / configs (bert-base-uncased BertModel with pooler, gpt2, Llama-2-7b-hf).
PARAMS = {
    "resnet50": 25_557_032,
    "mobilenet_v2": 3_504_872,
    "bert": 109_482_240,
    "gpt2": 124_439_808,
    "llama2_7b": 6_738_415_616,
}


def _activation_product(g: Gemm) -> bool:
    """Attention's scores and context products: both operands are activations, no weights."""
    return any(name.endswith(("/scores", "/context")) for name in g.layers)


def _weights(gemms: tuple[Gemm, ...]) -> tuple[int, int]:
    """(weight-matrix parameters K x N, output features N) summed over the weight GEMMs."""
    matrices = [g for g in gemms if not _activation_product(g)]
    return (
        int(sum(g.shape.k * g.shape.n * g.weight for g in matrices)),
        int(sum(g.shape.n * g.weight for g in matrices)),
    )


def test_every_network_is_bundled_and_loads_by_name() -> None:
    assert set(NETWORKS) <= set(bundled_workloads())
    for name in NETWORKS:
        workload = load_workload(name)
        assert workload.gemms and all(g.source and g.layers for g in workload.gemms)
    with pytest.raises(WorkloadError, match="no bundled workload of that name"):
        load_workload("resnet51")


@pytest.mark.parametrize("name, published_gmacs", [("resnet50", 4.09), ("mobilenet_v2", 0.30)])
def test_cnn_parameters_and_macs(name: str, published_gmacs: float) -> None:
    """Conv and FC weights are K x N x groups; every convolution is followed by a batch norm
    (2 parameters per channel); the classifier has a bias of 1000."""
    workload = load_workload(name)
    matrices, features = _weights(workload.gemms)
    convs = sum(g.shape.n * g.weight for g in workload.gemms if g.source == "Conv")
    assert matrices + 2 * convs + 1000 == PARAMS[name]
    assert (
        round(totals(workload)["macs"] / 1e9, 2) == published_gmacs
    )  # torchvision's "GFLOPS" (multiply-adds)


def test_resnet50_macs_exactly() -> None:
    """The sum over its layers, written out from He et al., Table 1 (torchvision's strides)."""
    convs = [(112 * 112, 3 * 49, 64)]
    cin = 64
    for width, blocks, size in ((64, 3, 56), (128, 4, 28), (256, 6, 14), (512, 3, 7)):
        first_in = size * 2 if width > 64 else size
        convs += [
            (first_in**2, cin, width),
            (size**2, 9 * width, width),
            (size**2, width, 4 * width),
            (size**2, cin, 4 * width),
        ]  # the first block, with its downsample
        convs += [
            (size**2, 4 * width, width),
            (size**2, 9 * width, width),
            (size**2, width, 4 * width),
        ] * (blocks - 1)
        cin = 4 * width
    expected = sum(m * k * n for m, k, n in convs) + 2048 * 1000
    assert totals(load_workload("resnet50"))["macs"] == expected == 4_089_184_256


@pytest.mark.parametrize("name, seq", [("bert_base_s128", 128), ("bert_base_s512", 512)])
def test_bert_base(name: str, seq: int) -> None:
    d, ff, layers, heads = 768, 3072, 12, 12
    workload = load_workload(name)
    matrices, biases = _weights(workload.gemms)
    layer_norms = 2 * d * (1 + 2 * layers)
    embeddings = (30522 + 512 + 2) * d
    assert matrices + biases + layer_norms + embeddings == PARAMS["bert"]
    per_layer = seq * (4 * d * d + 2 * d * ff) + 2 * seq * seq * d  # projections, FFN, QK^T and AV
    assert totals(workload)["macs"] == layers * per_layer + d * d  # + the pooler on one token
    assert totals(workload)["gemms"] == layers * (6 + 2 * heads) + 1


def test_gpt2_small() -> None:
    d, layers, seq, vocab = 768, 12, 1024, 50257
    workload = load_workload("gpt2_s1024")
    head = [g for g in workload.gemms if g.layers == ("lm_head",)]
    assert (
        len(head) == 1 and head[0].shape.k * head[0].shape.n == vocab * d
    )  # tied to the token embedding
    matrices, biases = _weights(tuple(g for g in workload.gemms if g not in head))
    assert matrices + biases + 2 * d * (2 * layers + 1) + (vocab + 1024) * d == PARAMS["gpt2"]
    per_layer = seq * 12 * d * d + 2 * seq * seq * d
    assert totals(workload)["macs"] == layers * per_layer + seq * d * vocab


@pytest.mark.parametrize(
    "name, batch, tokens, span",
    [
        ("llama2_7b_prefill", 1, 2048, 2048),
        ("llama2_7b_decode_b1", 1, 1, 2048),
        ("llama2_7b_decode_b64", 64, 1, 2048),
    ],
)
def test_llama2_7b_layer(name: str, batch: int, tokens: int, span: int) -> None:
    d, ff, layers, vocab, heads = 4096, 11008, 32, 32000, 32
    workload = load_workload(name)
    matrices, _ = _weights(workload.gemms)
    assert (
        layers * (matrices + 2 * d) + 2 * vocab * d + d == PARAMS["llama2_7b"]
    )  # no biases; RMSNorm: d each
    rows = batch * tokens
    assert (
        totals(workload)["macs"] == rows * (4 * d * d + 3 * d * ff) + 2 * batch * tokens * span * d
    )
    attention = [g for g in workload.gemms if _activation_product(g)]
    assert {(g.shape.m, g.shape.k, g.shape.n, g.weight) for g in attention} == {
        (tokens, 128, span, batch * heads),
        (tokens, span, 128, batch * heads),
    }


def test_the_generator_would_write_the_bundled_files_unchanged() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_workloads.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert result.returncode == 0, result.stderr
