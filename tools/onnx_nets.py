"""ONNX graphs of real networks, built with onnx.helper from their published configurations (no
framework, no weights: every weight is an initializer whose data lives in an external file that
does not exist, which the importer never reads). tools/make_workloads.py imports them with
autotune's ONNX reader to write the bundled workloads.

Each builder follows the reference implementation named in its docstring, layer by layer, with
the layer names PyTorch gives the modules.
"""

from __future__ import annotations

import itertools

import onnx
from onnx import TensorProto, helper

OPSET = 21
FLOAT = TensorProto.FLOAT


class Net:
    """A graph under construction: inputs, weights (external, no data), constants, nodes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self._ids = itertools.count()

    def input(self, name: str, dims: list[int | str], dtype: int = FLOAT) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, dtype, dims))
        return name

    def weight(self, name: str, dims: list[int]) -> str:
        tensor = TensorProto(
            name=name, data_type=FLOAT, dims=dims, data_location=TensorProto.EXTERNAL
        )
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", f"{self.name}.weights"  # never written
        self.inits.append(tensor)
        return name

    def ints(self, values: list[int]) -> str:
        name = f"const_{next(self._ids)}"
        self.inits.append(helper.make_tensor(name, TensorProto.INT64, [len(values)], values))
        return name

    def scalar(self, value: float) -> str:
        name = f"const_{next(self._ids)}"
        self.inits.append(helper.make_tensor(name, FLOAT, [], [value]))
        return name

    def op(
        self, op_type: str, inputs: list[str], name: str = "", outputs: int = 1, **attrs: object
    ) -> str:
        label = name or f"/{op_type}_{next(self._ids)}"
        outs = [f"{label}:{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=label, **attrs))
        return outs[0] if outputs == 1 else outs  # type: ignore[return-value]

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            self.name,
            self.inputs,
            [helper.make_tensor_value_info(o, FLOAT, None) for o in outputs],
            initializer=self.inits,
        )
        return helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnx_nets"
        )


def _conv_bn(
    net: Net, x: str, name: str, cin: int, cout: int, kernel: int, stride: int, groups: int = 1
) -> str:
    w = net.weight(f"{name}.weight", [cout, cin // groups, kernel, kernel])
    pad = kernel // 2
    y = net.op("Conv", [x, w], name, strides=[stride, stride], pads=[pad] * 4, group=groups)
    bn = name.replace("conv", "bn") if "conv" in name else f"{name}.bn"
    return net.op(
        "BatchNormalization",
        [
            y,
            *(
                net.weight(f"{bn}.{p}", [cout])
                for p in ("weight", "bias", "running_mean", "running_var")
            ),
        ],
        bn,
    )


def resnet50() -> onnx.ModelProto:
    """ResNet-50 (He et al., 2016, Table 1) as torchvision's resnet50 builds it (v1.5: the
    stride of a stage's first bottleneck on its 3x3 convolution), batch 1, 224 x 224."""
    net = Net("resnet50")
    x = net.op("Relu", [_conv_bn(net, net.input("input", [1, 3, 224, 224]), "conv1", 3, 64, 7, 2)])
    x = net.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (width, blocks, stride) in enumerate(
        zip((64, 128, 256, 512), (3, 4, 6, 3), (1, 2, 2, 2)), 1
    ):
        for block in range(blocks):
            s, p = (stride if block == 0 else 1), f"layer{stage}.{block}"
            y = net.op("Relu", [_conv_bn(net, x, f"{p}.conv1", cin, width, 1, 1)])
            y = net.op("Relu", [_conv_bn(net, y, f"{p}.conv2", width, width, 3, s)])
            y = _conv_bn(net, y, f"{p}.conv3", width, width * 4, 1, 1)
            identity = (
                _conv_bn(net, x, f"{p}.downsample.0", cin, width * 4, 1, s) if block == 0 else x
            )
            x, cin = net.op("Relu", [net.op("Add", [y, identity])]), width * 4
    x = net.op("Flatten", [net.op("GlobalAveragePool", [x])])
    out = net.op(
        "Gemm",
        [x, net.weight("fc.weight", [1000, 2048]), net.weight("fc.bias", [1000])],
        "fc",
        transB=1,
    )
    return net.model([out])


def mobilenet_v2() -> onnx.ModelProto:
    """MobileNetV2 (Sandler et al., 2018, Table 2) as torchvision's mobilenet_v2 builds it
    (width 1.0), batch 1, 224 x 224. ReLU6 is Clip(0, 6)."""
    net = Net("mobilenet_v2")
    zero, six = net.scalar(0.0), net.scalar(6.0)
    relu6 = lambda t: net.op("Clip", [t, zero, six])  # noqa: E731
    x = relu6(_conv_bn(net, net.input("input", [1, 3, 224, 224]), "features.0.0", 3, 32, 3, 2))
    cin, index = 32, 1
    for t, c, n, s in (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ):
        for i in range(n):
            p, hidden, y, layer = f"features.{index}.conv", cin * t, x, 0
            if t != 1:
                y, layer = relu6(_conv_bn(net, y, f"{p}.0.0", cin, hidden, 1, 1)), 1
            y = relu6(
                _conv_bn(
                    net, y, f"{p}.{layer}.0", hidden, hidden, 3, s if i == 0 else 1, groups=hidden
                )
            )
            y = _conv_bn(net, y, f"{p}.{layer + 1}", hidden, c, 1, 1)
            x = net.op("Add", [x, y]) if (s == 1 or i > 0) and cin == c else y
            cin, index = c, index + 1
    x = relu6(_conv_bn(net, x, "features.18.0", 320, 1280, 1, 1))
    x = net.op("Flatten", [net.op("GlobalAveragePool", [x])])
    out = net.op(
        "Gemm",
        [
            x,
            net.weight("classifier.1.weight", [1000, 1280]),
            net.weight("classifier.1.bias", [1000]),
        ],
        "classifier.1",
        transB=1,
    )
    return net.model([out])


def _heads(net: Net, x: str, batch: int, seq: int, heads: int, d_head: int, perm: list[int]) -> str:
    return net.op(
        "Transpose", [net.op("Reshape", [x, net.ints([batch, seq, heads, d_head])])], perm=perm
    )


def _linear(net: Net, x: str, name: str, d_in: int, d_out: int, bias: bool = True) -> str:
    """x (..., d_in) @ W (d_in x d_out) [+ b]: a MatMul, as PyTorch exports nn.Linear on 3-D
    inputs."""
    y = net.op("MatMul", [x, net.weight(f"{name}.weight", [d_in, d_out])], name)
    return net.op("Add", [y, net.weight(f"{name}.bias", [d_out])]) if bias else y


def _layer_norm(net: Net, x: str, name: str, d: int) -> str:
    return net.op(
        "LayerNormalization",
        [x, net.weight(f"{name}.weight", [d]), net.weight(f"{name}.bias", [d])],
        name,
        axis=-1,
    )


def bert_base(seq: int) -> onnx.ModelProto:
    """BERT-base (Devlin et al., 2019) as Hugging Face's BertModel builds it from
    bert-base-uncased's config (hidden 768, 12 layers, 12 heads, intermediate 3072, vocabulary
    30522, 512 positions, 2 token types), with its pooler; batch 1, `seq` tokens."""
    net, d, heads, ff = Net(f"bert_base_s{seq}"), 768, 12, 3072
    ids = net.input("input_ids", [1, seq], TensorProto.INT64)
    types = net.input("token_type_ids", [1, seq], TensorProto.INT64)
    pos = net.ints(list(range(seq)))
    x = net.op(
        "Add",
        [
            net.op("Gather", [net.weight("embeddings.word_embeddings.weight", [30522, d]), ids]),
            net.op(
                "Gather", [net.weight("embeddings.token_type_embeddings.weight", [2, d]), types]
            ),
        ],
    )
    x = net.op(
        "Add",
        [x, net.op("Gather", [net.weight("embeddings.position_embeddings.weight", [512, d]), pos])],
    )
    x = _layer_norm(net, x, "embeddings.LayerNorm", d)
    mask = net.weight("extended_attention_mask", [1, 1, 1, seq])
    for layer in range(12):
        p = f"encoder.layer.{layer}"
        q = _heads(
            net, _linear(net, x, f"{p}.attention.self.query", d, d), 1, seq, heads, 64, [0, 2, 1, 3]
        )
        k = _heads(
            net, _linear(net, x, f"{p}.attention.self.key", d, d), 1, seq, heads, 64, [0, 2, 3, 1]
        )
        v = _heads(
            net, _linear(net, x, f"{p}.attention.self.value", d, d), 1, seq, heads, 64, [0, 2, 1, 3]
        )
        scores = net.op(
            "Div", [net.op("MatMul", [q, k], f"{p}.attention.self/scores"), net.scalar(8.0)]
        )
        probs = net.op("Softmax", [net.op("Add", [scores, mask])], axis=-1)
        ctx = net.op(
            "Transpose",
            [net.op("MatMul", [probs, v], f"{p}.attention.self/context")],
            perm=[0, 2, 1, 3],
        )
        ctx = net.op("Reshape", [ctx, net.ints([1, seq, d])])
        x = _layer_norm(
            net,
            net.op("Add", [_linear(net, ctx, f"{p}.attention.output.dense", d, d), x]),
            f"{p}.attention.output.LayerNorm",
            d,
        )
        h = net.op("Gelu", [_linear(net, x, f"{p}.intermediate.dense", d, ff)])
        x = _layer_norm(
            net,
            net.op("Add", [_linear(net, h, f"{p}.output.dense", ff, d), x]),
            f"{p}.output.LayerNorm",
            d,
        )
    first = net.op("Gather", [x, net.ints([0])], axis=1)
    first = net.op("Reshape", [first, net.ints([1, d])])
    pooled = net.op(
        "Gemm",
        [first, net.weight("pooler.dense.weight", [d, d]), net.weight("pooler.dense.bias", [d])],
        "pooler.dense",
        transB=1,
    )
    return net.model([x, net.op("Tanh", [pooled])])


def gpt2_small(seq: int = 1024) -> onnx.ModelProto:
    """GPT-2 small (Radford et al., 2019) as Hugging Face's GPT2LMHeadModel builds it from gpt2's
    config (n_embd 768, 12 layers, 12 heads, 1024 positions, vocabulary 50257): its Conv1D
    layers are Gemm on (seq x n_embd) as addmm exports, the LM head is tied to the token
    embedding; batch 1, `seq` tokens."""
    net, d, heads = Net(f"gpt2_s{seq}"), 768, 12
    wte = net.weight("transformer.wte.weight", [50257, d])
    ids = net.input("input_ids", [1, seq], TensorProto.INT64)
    x = net.op(
        "Add",
        [
            net.op("Gather", [wte, ids]),
            net.op(
                "Gather",
                [net.weight("transformer.wpe.weight", [1024, d]), net.ints(list(range(seq)))],
            ),
        ],
    )
    mask = net.weight("causal_mask", [1, 1, seq, seq])

    def conv1d(
        t: str, name: str, d_in: int, d_out: int
    ) -> str:  # HF Conv1D: addmm(b, x.view(-1, nx), W)
        flat = net.op("Reshape", [t, net.ints([seq, d_in])])
        y = net.op(
            "Gemm",
            [
                flat,
                net.weight(f"{name}.weight", [d_in, d_out]),
                net.weight(f"{name}.bias", [d_out]),
            ],
            name,
        )
        return net.op("Reshape", [y, net.ints([1, seq, d_out])])

    for layer in range(12):
        p = f"transformer.h.{layer}"
        qkv = conv1d(_layer_norm(net, x, f"{p}.ln_1", d), f"{p}.attn.c_attn", d, 3 * d)
        q, k, v = net.op("Split", [qkv, net.ints([d, d, d])], outputs=3, axis=2)
        q = _heads(net, q, 1, seq, heads, 64, [0, 2, 1, 3])
        k = _heads(net, k, 1, seq, heads, 64, [0, 2, 3, 1])
        v = _heads(net, v, 1, seq, heads, 64, [0, 2, 1, 3])
        scores = net.op("Div", [net.op("MatMul", [q, k], f"{p}.attn/scores"), net.scalar(8.0)])
        probs = net.op("Softmax", [net.op("Add", [scores, mask])], axis=-1)
        ctx = net.op(
            "Transpose", [net.op("MatMul", [probs, v], f"{p}.attn/context")], perm=[0, 2, 1, 3]
        )
        x = net.op(
            "Add",
            [x, conv1d(net.op("Reshape", [ctx, net.ints([1, seq, d])]), f"{p}.attn.c_proj", d, d)],
        )
        h = net.op(
            "Gelu",
            [conv1d(_layer_norm(net, x, f"{p}.ln_2", d), f"{p}.mlp.c_fc", d, 4 * d)],
            approximate="tanh",
        )
        x = net.op("Add", [x, conv1d(h, f"{p}.mlp.c_proj", 4 * d, d)])
    x = _layer_norm(net, x, "transformer.ln_f", d)
    logits = net.op("MatMul", [x, net.op("Transpose", [wte], perm=[1, 0])], "lm_head")
    return net.model([logits])


def _rms_norm(net: Net, x: str, name: str, d: int) -> str:
    mean = net.op("ReduceMean", [net.op("Mul", [x, x]), net.ints([-1])], keepdims=1)
    scale = net.op("Reciprocal", [net.op("Sqrt", [net.op("Add", [mean, net.scalar(1e-5)])])])
    return net.op("Mul", [net.op("Mul", [x, scale]), net.weight(f"{name}.weight", [d])], name)


def _rope(net: Net, t: str, cos: str, sin: str) -> str:
    lo, hi = net.op("Split", [t, net.ints([64, 64])], outputs=2, axis=-1)
    rotated = net.op("Concat", [net.op("Neg", [hi]), lo], axis=-1)
    return net.op("Add", [net.op("Mul", [t, cos]), net.op("Mul", [rotated, sin])])


def llama2_7b_layer(batch: int, tokens: int, cached: int) -> onnx.ModelProto:
    """One decoder layer of LLaMA-2-7B (Touvron et al., 2023) as Hugging Face's LlamaDecoderLayer
    builds it from meta-llama/Llama-2-7b-hf's config (hidden 4096, intermediate 11008, 32 heads
    of 128, 32 key-value heads, RMSNorm, SiLU-gated MLP, rotary embeddings). `tokens` new tokens
    per sequence attend to `cached` earlier ones (a KV cache) and to themselves. Attention is
    written as the Einsum forms of exporters that keep it."""
    net, d, heads, ff = Net(f"llama2_7b_b{batch}_t{tokens}_c{cached}"), 4096, 32, 11008
    p, span = "model.layers.0", cached + tokens
    x = net.input("hidden_states", [batch, tokens, d])
    cos, sin = (
        net.weight("rope.cos", [1, 1, tokens, 128]),
        net.weight("rope.sin", [1, 1, tokens, 128]),
    )
    h = _rms_norm(net, x, f"{p}.input_layernorm", d)
    proj = lambda t, name, d_in, d_out: _linear(net, t, f"{p}.{name}", d_in, d_out, bias=False)  # noqa: E731
    q = _rope(
        net,
        _heads(net, proj(h, "self_attn.q_proj", d, d), batch, tokens, heads, 128, [0, 2, 1, 3]),
        cos,
        sin,
    )
    k = _rope(
        net,
        _heads(net, proj(h, "self_attn.k_proj", d, d), batch, tokens, heads, 128, [0, 2, 1, 3]),
        cos,
        sin,
    )
    v = _heads(net, proj(h, "self_attn.v_proj", d, d), batch, tokens, heads, 128, [0, 2, 1, 3])
    if cached:
        k = net.op("Concat", [net.input("past_key", [batch, heads, cached, 128]), k], axis=2)
        v = net.op("Concat", [net.input("past_value", [batch, heads, cached, 128]), v], axis=2)
    scores = net.op("Einsum", [q, k], f"{p}.self_attn/scores", equation="bhqd,bhkd->bhqk")
    scores = net.op(
        "Add",
        [
            net.op("Div", [scores, net.scalar(128**0.5)]),
            net.weight("attention_mask", [1, 1, tokens, span]),
        ],
    )
    probs = net.op("Softmax", [scores], axis=-1)
    ctx = net.op("Einsum", [probs, v], f"{p}.self_attn/context", equation="bhqk,bhkd->bhqd")
    ctx = net.op(
        "Reshape", [net.op("Transpose", [ctx], perm=[0, 2, 1, 3]), net.ints([batch, tokens, d])]
    )
    x = net.op("Add", [x, proj(ctx, "self_attn.o_proj", d, d)])
    h = _rms_norm(net, x, f"{p}.post_attention_layernorm", d)
    gate = proj(h, "mlp.gate_proj", d, ff)
    act = net.op(
        "Mul", [net.op("Mul", [gate, net.op("Sigmoid", [gate])]), proj(h, "mlp.up_proj", d, ff)]
    )
    return net.model([net.op("Add", [x, proj(act, "mlp.down_proj", ff, d)])])
