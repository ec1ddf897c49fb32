"""Regenerate the bundled real networks in workloads/networks/: each network's ONNX graph is
built from its published configuration (tools/onnx_nets.py), read back with autotune's ONNX
importer (workloads/onnx_graph.py), and written as a TOML workload whose header says
where the shapes come from and what they add up to.

    python tools/make_workloads.py            # writes workloads/networks/<name>.toml
    python tools/make_workloads.py --check    # exit 1 if a bundled file is not what it writes

tests/search_spaces/test_bundled_networks.py checks every file against independent counts
(published parameter counts and MACs) and that this script would write it unchanged.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import onnx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_nets  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from workloads import Workload  # noqa: E402
from workloads.listing import totals  # noqa: E402
from workloads.onnx_graph import read_onnx  # noqa: E402

OUT = ROOT / "workloads" / "networks"


@dataclass(frozen=True)
class Network:
    name: str
    title: str
    provenance: str
    build: Callable[[], onnx.ModelProto]


LLAMA = (
    "Touvron et al., Llama 2: Open Foundation and Fine-Tuned Chat Models (2023); Hugging Face "
    "meta-llama/Llama-2-7b-hf config.json: hidden_size 4096, intermediate_size 11008, "
    "num_attention_heads 32, num_key_value_heads 32, 32 layers, vocab 32000 "
    "(6,738,415,616 parameters)."
)
DECODE = " One new token per sequence; with its own K and V the cache holds 2048 positions."
BERT = (
    "Devlin et al., BERT (2019); Hugging Face bert-base-uncased config.json: hidden_size 768, "
    "12 layers, 12 heads, intermediate_size 3072, vocab 30522, 512 positions (BertModel with its "
    "pooler: 109,482,240 parameters). No MLM head."
)
RESNET = (
    "He et al., Deep Residual Learning (2016), Table 1, as torchvision.models.resnet50 builds it "
    "(v1.5: stride on the 3x3 convolution); torchvision lists 25,557,032 parameters and "
    "4.09 GFLOPS (multiply-adds). Convolutions by im2col: M = output pixels, "
    "K = C_in x kH x kW, N = C_out."
)
MOBILENET = (
    "Sandler et al., MobileNetV2 (2018), Table 2, as torchvision.models.mobilenet_v2 builds it; "
    "torchvision lists 3,504,872 parameters and 0.30 GFLOPS (multiply-adds; the paper: 300M). "
    "Depthwise convolutions: one GEMM per channel (K = 3 x 3, N = 1), weighted by the channels."
)
GPT2 = (
    "Radford et al., Language Models are Unsupervised Multitask Learners (2019); Hugging Face "
    "gpt2 config.json: n_embd 768, n_layer 12, n_head 12, n_positions 1024, vocab 50257 "
    "(124,439,808 parameters; the LM head is tied to the token embedding). Attention computes "
    "all 1024 x 1024 scores."
)
NETWORKS: tuple[Network, ...] = (
    Network("resnet50", "ResNet-50, batch 1, 224 x 224", RESNET, onnx_nets.resnet50),
    Network(
        "mobilenet_v2",
        "MobileNetV2 (width 1.0), batch 1, 224 x 224",
        MOBILENET,
        onnx_nets.mobilenet_v2,
    ),
    Network(
        "bert_base_s128",
        "BERT-base encoder, batch 1, sequence 128",
        BERT,
        lambda: onnx_nets.bert_base(128),
    ),
    Network(
        "bert_base_s512",
        "BERT-base encoder, batch 1, sequence 512",
        BERT,
        lambda: onnx_nets.bert_base(512),
    ),
    Network(
        "gpt2_s1024",
        "GPT-2 small with its LM head, batch 1, sequence 1024",
        GPT2,
        lambda: onnx_nets.gpt2_small(1024),
    ),
    Network(
        "llama2_7b_prefill",
        "LLaMA-2-7B, one decoder layer, prefill of 2048 tokens (batch 1)",
        LLAMA,
        lambda: onnx_nets.llama2_7b_layer(1, 2048, 0),
    ),
    Network(
        "llama2_7b_decode_b1",
        "LLaMA-2-7B, one decoder layer, decode at batch 1, KV cache of 2048",
        LLAMA + DECODE,
        lambda: onnx_nets.llama2_7b_layer(1, 1, 2047),
    ),
    Network(
        "llama2_7b_decode_b64",
        "LLaMA-2-7B, one decoder layer, decode at batch 64, KV cache of 2048",
        LLAMA + DECODE,
        lambda: onnx_nets.llama2_7b_layer(64, 1, 2047),
    ),
)


def imported(network: Network) -> Workload:
    """The network's ONNX graph, written and read back with the importer."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{network.name}.onnx"
        onnx.save(network.build(), str(path))
        workload = read_onnx(path)
    return Workload(network.name, workload.gemms, workload.summary, workload.warnings)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_text(network: Network, workload: Workload) -> str:
    t = totals(workload)
    facts = (
        f"{network.provenance} Shapes are M x K x N (A is M x K, B is K x N); weight = runs per "
        f"inference step. {t['entries']} shapes, {t['gemms']:,} GEMMs, {t['macs']:,} MACs. "
        f"{workload.summary[0]}. Written by python tools/make_workloads.py from the ONNX graph "
        "tools/onnx_nets.py builds; do not edit."
    )
    lines = [
        f"# {network.title}.",
        *(f"# {line}" for line in textwrap.wrap(facts, 94, break_on_hyphens=False)),
    ]
    for warning in workload.warnings:
        lines += [
            f"# {line}"
            for line in textwrap.wrap(f"Not in the GEMMs: {warning}.", 94, break_on_hyphens=False)
        ]
    for g in workload.gemms:
        weight = int(g.weight) if g.weight.is_integer() else g.weight
        lines += [
            "",
            "[[gemm]]",
            f"name = {_quote(g.name)}",
            f'shape = "{g.shape}"',
            f"weight = {weight}",
            f"source = {_quote(g.source)}",
            "layers = [" + ", ".join(_quote(x) for x in g.layers) + "]",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="compare with the bundled files, write nothing"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    stale = []
    for network in NETWORKS:
        text = toml_text(network, imported(network))
        path = args.out / f"{network.name}.toml"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(path.name)
            continue
        path.write_text(text)
        print(f"wrote {path}", file=sys.stderr)
    if stale:
        print(
            f"out of date: {', '.join(stale)} (run python tools/make_workloads.py)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
