"""GPT-2, BERT-base and LLaMA-2-7B as graphs, from their published configurations.

Conventions (each network's provenance repeats what applies): element width 2 bytes (16-bit
activations); a decoder or encoder layer is one block run once per layer; a linear layer is a
GEMM over every token (M = batch x tokens) and, where the model has one, a separate bias add;
attention per head is a batched product of batch x heads matrices; softmax takes the
1/sqrt(head_dim) scale; splitting and merging heads are views (the products load a head's
columns by their coordinates); the attention mask of a full batch is all zeros and omitted;
rotary embeddings are x cos + rotate_half(x) sin (a copy, two products and an add).
"""

from __future__ import annotations

import math

from workloads.graph import Graph
from workloads.model import WorkloadError
from workloads.network import Builder

GPT2 = {"d": 768, "layers": 12, "heads": 12, "vocab": 50257, "positions": 1024}
BERT = {"d": 768, "layers": 12, "heads": 12, "ff": 3072, "vocab": 30522, "positions": 512}
LLAMA = {"d": 4096, "layers": 32, "heads": 32, "ff": 11008, "vocab": 32000, "positions": 4096}
PHASES = ("prefill", "decode")


def _linear(
    b: Builder, name: str, x: str, tokens: int, d_in: int, d_out: int, bias: bool = True
) -> str:
    y = b.op(
        name,
        "gemm",
        (tokens, d_in, d_out),
        (x, b.tensor(f"{name}.weight", d_in, d_out)),
        (tokens, d_out),
    )
    if not bias:
        return y
    return b.op(
        f"{name}.bias",
        "bias",
        (1, tokens, d_out),
        (y, b.tensor(f"{name}.b", d_out)),
        (tokens, d_out),
    )


def _attention(
    b: Builder,
    q: str,
    k: str,
    v: str,
    batch: int,
    heads: int,
    queries: int,
    keys: int,
    d_head: int,
    causal: bool,
    offset: int = 0,
) -> str:
    bh = batch * heads
    scores = b.op("scores", "matmul", (bh, queries, d_head, keys), (q, k), (bh, queries, keys))
    options: dict[str, float | bool | int] = {"scale": 1 / math.sqrt(d_head)}
    if causal:
        options.update(causal=True, causal_offset=offset)
    probs = b.op(
        "softmax", "softmax", (bh, queries, keys), (scores,), (bh, queries, keys), **options
    )
    ctx = b.op("context", "matmul", (bh, queries, keys, d_head), (probs, v), (bh, queries, d_head))
    return b.op(
        "merge_heads",
        "permute",
        (bh * queries * d_head,),
        (ctx,),
        (batch * queries, heads * d_head),
    )


def _rope(b: Builder, name: str, x: str, tokens: int, d: int) -> str:
    """Rotary embedding: x cos + rotate_half(x) sin, rotate_half a copy with its halves swapped
    (one negated); cos and sin are tables along the last axis."""
    rotated = b.op(f"rope_{name}.rotate_half", "copy", (tokens * d,), (x,), (tokens, d))
    cos = b.op(
        f"rope_{name}.cos",
        "mul",
        (1, tokens, d),
        (x, b.tensor(f"rope_{name}.cos_t", tokens, d)),
        (tokens, d),
    )
    sin = b.op(
        f"rope_{name}.sin",
        "mul",
        (1, tokens, d),
        (rotated, b.tensor(f"rope_{name}.sin_t", tokens, d)),
        (tokens, d),
    )
    return b.op(f"rope_{name}", "add", (1, tokens, d), (cos, sin), (tokens, d))


def _split_heads(b: Builder, name: str, x: str, tokens: int, d: int) -> str:
    return b.op(name, "permute", (tokens * d,), (x,), (tokens, d))


def gpt2(seq: int = 256, batch: int = 1) -> Graph:
    """GPT-2 small: pre-norm decoder layers, a causal softmax, GELU (tanh form), the LM head
    tied to the token embedding, logits for every position."""
    if seq > GPT2["positions"]:
        raise WorkloadError(f"gpt2: seq {seq} is longer than its {GPT2['positions']} positions")
    d, heads, t = GPT2["d"], GPT2["heads"], batch * seq
    b = Builder(f"gpt2_s{seq}" + (f"_b{batch}" if batch > 1 else ""))
    ids = b.tensor("input_ids", batch, seq)
    b.block("embeddings")
    tok = b.op("wte", "gather", (1, t, d), (b.tensor("wte", GPT2["vocab"], d), ids), (t, d))
    pos = b.op("wpe", "gather", (1, seq, d), (b.tensor("wpe", GPT2["positions"], d),), (seq, d))
    x = b.op("add", "add", (1, t, d), (tok, pos), (t, d))
    b.block("h", GPT2["layers"])
    h = b.op("ln_1", "layernorm", (1, t, d), (x, b.tensor("ln_1.g", d)), (t, d))
    qkv = _linear(b, "attn.c_attn", h, t, d, 3 * d)
    q, k, v = (b.op(f"split_{n}", "split", (t * d,), (qkv,), (t, d)) for n in "qkv")
    q, k, v = (_split_heads(b, f"heads_{n}", x_, t, d) for n, x_ in zip("qkv", (q, k, v)))
    ctx = _attention(b, q, k, v, batch, heads, seq, seq, d // heads, causal=True)
    x = b.op("residual_1", "add", (1, t, d), (x, _linear(b, "attn.c_proj", ctx, t, d, d)), (t, d))
    h = b.op("ln_2", "layernorm", (1, t, d), (x, b.tensor("ln_2.g", d)), (t, d))
    h = b.op(
        "mlp.gelu",
        "gelu",
        (1, t, 4 * d),
        (_linear(b, "mlp.c_fc", h, t, d, 4 * d),),
        (t, 4 * d),
        form="tanh",
    )
    x = b.op("residual_2", "add", (1, t, d), (x, _linear(b, "mlp.c_proj", h, t, 4 * d, d)), (t, d))
    b.block("head")
    x = b.op("ln_f", "layernorm", (1, t, d), (x, b.tensor("ln_f.g", d)), (t, d))
    b.op("lm_head", "gemm", (t, d, GPT2["vocab"]), (x, "wte"), (t, GPT2["vocab"]))
    return b.graph(
        "GPT-2 small (Radford et al. 2019; Hugging Face gpt2 config.json: n_embd 768, n_layer 12, "
        f"n_head 12, n_positions 1024, vocab 50257), batch {batch}, sequence {seq}"
    )


def bert_base(seq: int = 128, batch: int = 1) -> Graph:
    """BERT-base with its pooler: post-norm encoder layers, GELU (erf form), no mask."""
    if seq > BERT["positions"]:
        raise WorkloadError(
            f"bert_base: seq {seq} is longer than its {BERT['positions']} positions"
        )
    d, heads, ff, t = BERT["d"], BERT["heads"], BERT["ff"], batch * seq
    b = Builder(f"bert_base_s{seq}" + (f"_b{batch}" if batch > 1 else ""))
    ids = b.tensor("input_ids", batch, seq)
    b.block("embeddings")
    x = b.op("word", "gather", (1, t, d), (b.tensor("word", BERT["vocab"], d), ids), (t, d))
    pos = b.op(
        "position", "gather", (1, seq, d), (b.tensor("position", BERT["positions"], d),), (seq, d)
    )
    typ = b.op("token_type", "gather", (1, t, d), (b.tensor("token_type", 2, d),), (t, d))
    x = b.op("add_position", "add", (1, t, d), (x, pos), (t, d))
    x = b.op("add_token_type", "add", (1, t, d), (x, typ), (t, d))
    x = b.op("layernorm", "layernorm", (1, t, d), (x, b.tensor("ln.g", d)), (t, d))
    b.block("encoder.layer", BERT["layers"])
    q, k, v = (
        _split_heads(b, f"heads_{n}", _linear(b, f"attention.{n}", x, t, d, d), t, d)
        for n in ("query", "key", "value")
    )
    ctx = _attention(b, q, k, v, batch, heads, seq, seq, d // heads, causal=False)
    y = b.op(
        "residual_1", "add", (1, t, d), (_linear(b, "attention.output", ctx, t, d, d), x), (t, d)
    )
    x = b.op("attention.layernorm", "layernorm", (1, t, d), (y, b.tensor("ln1.g", d)), (t, d))
    h = b.op(
        "gelu", "gelu", (1, t, ff), (_linear(b, "intermediate", x, t, d, ff),), (t, ff), form="erf"
    )
    y = b.op("residual_2", "add", (1, t, d), (_linear(b, "output", h, t, ff, d), x), (t, d))
    x = b.op("output.layernorm", "layernorm", (1, t, d), (y, b.tensor("ln2.g", d)), (t, d))
    b.block("pooler")
    first = b.op("first_token", "gather", (1, batch, d), (x,), (batch, d))
    pooled = _linear(b, "dense", first, batch, d, d)
    b.op("tanh", "elementwise", (1, batch, d), (pooled,), (batch, d), fn="Tanh")
    return b.graph(
        "BERT-base (Devlin et al. 2019; Hugging Face bert-base-uncased config.json: hidden 768, "
        f"12 layers, 12 heads, intermediate 3072, vocab 30522), with its pooler, batch {batch}, "
        f"sequence {seq}"
    )


def llama2_7b(phase: str = "prefill", seq: int = 2048, batch: int = 1) -> Graph:
    """LLaMA-2-7B. prefill: the prompt of `seq` tokens, a causal softmax, its K and V written to
    the cache, logits of the last token. decode: one token per sequence against a cache of `seq`
    tokens (its own K and V appended, the cache read from DRAM by attention)."""
    if phase not in PHASES:
        raise WorkloadError(f"llama2_7b: phase must be prefill or decode, got {phase!r}")
    if seq > LLAMA["positions"]:
        raise WorkloadError(
            f"llama2_7b: seq {seq} is longer than its {LLAMA['positions']} positions"
        )
    d, heads, ff, dh = LLAMA["d"], LLAMA["heads"], LLAMA["ff"], LLAMA["d"] // LLAMA["heads"]
    new = seq if phase == "prefill" else 1
    t, bh = batch * new, batch * LLAMA["heads"]
    b = Builder(f"llama2_7b_{phase}_s{seq}_b{batch}")
    ids = b.tensor("input_ids", batch, new)
    b.block("embed")
    x = b.op(
        "embed_tokens", "gather", (1, t, d), (b.tensor("embed", LLAMA["vocab"], d), ids), (t, d)
    )
    b.block("layers", LLAMA["layers"])
    h = b.op("input_layernorm", "rmsnorm", (1, t, d), (x, b.tensor("ln1.g", d)), (t, d))
    q, k, v = (_linear(b, f"self_attn.{n}_proj", h, t, d, d, bias=False) for n in "qkv")
    q, k = (_rope(b, n, x_, t, d) for n, x_ in (("q", q), ("k", k)))
    q = _split_heads(b, "heads_q", q, t, d)
    cache = {}
    for n, x_ in (("k", k), ("v", v)):
        b.op(f"{n}_append", "kv_append", (bh * new * dh,), (x_,), (bh, new, dh))
        cache[n] = b.op(
            f"{n}_cache",
            "kv_read",
            (bh * seq * dh,),
            (b.tensor(f"{n}_cache", bh, seq, dh),),
            (bh, seq, dh),
        )
    ctx = _attention(
        b,
        q,
        cache["k"],
        cache["v"],
        batch,
        heads,
        new,
        seq,
        dh,
        causal=phase == "prefill",
        offset=seq - new,
    )
    x = b.op(
        "residual_1",
        "add",
        (1, t, d),
        (x, _linear(b, "self_attn.o_proj", ctx, t, d, d, bias=False)),
        (t, d),
    )
    h = b.op("post_attention_layernorm", "rmsnorm", (1, t, d), (x, b.tensor("ln2.g", d)), (t, d))
    gate = _linear(b, "mlp.gate_proj", h, t, d, ff, bias=False)
    up = _linear(b, "mlp.up_proj", h, t, d, ff, bias=False)
    act = b.op("mlp.silu", "silu", (1, t, ff), (gate,), (t, ff))
    act = b.op("mlp.mul", "mul", (1, t, ff), (act, up), (t, ff))
    x = b.op(
        "residual_2",
        "add",
        (1, t, d),
        (x, _linear(b, "mlp.down_proj", act, t, ff, d, bias=False)),
        (t, d),
    )
    b.block("head")
    last = batch
    x = b.op("last_token", "split", (last * d,), (x,), (last, d)) if new > 1 else x
    x = b.op("norm", "rmsnorm", (1, last, d), (x, b.tensor("norm.g", d)), (last, d))
    b.op(
        "lm_head",
        "gemm",
        (last, d, LLAMA["vocab"]),
        (x, b.tensor("lm_head", d, LLAMA["vocab"])),
        (last, LLAMA["vocab"]),
    )
    return b.graph(
        "LLaMA-2-7B (Touvron et al. 2023; Hugging Face meta-llama/Llama-2-7b-hf config.json: "
        "hidden 4096, intermediate 11008, 32 heads, 32 key-value heads, 32 layers, vocab 32000, "
        "4096 positions), "
        f"{phase}, batch {batch}, "
        + (
            f"prompt of {seq} tokens"
            if phase == "prefill"
            else f"one token against a KV cache of {seq} tokens"
        )
    )
