"""ResNet-50 and MobileNetV2 as graphs, from their published architectures (torchvision's
builds), batch `batch`, 224 x 224.

Conventions: an activation is a pixels x channels matrix (rows: batch x height x width, cols:
channels); a convolution is its im2col product (M = output pixels, K = C_in / groups x kernel
size, N = C_out / groups, one product per group); batch norm at inference is folded into the
convolution's weights and a per-channel bias (a `bias` along the channels); ReLU6 is an
elementwise Clip; pooling is a `pool` over each output's window (rows: outputs, cols: the
window's pixels).
"""

from __future__ import annotations

from workloads.graph import Graph
from workloads.network import Builder

SIZE = 224


def _conv(
    b: Builder,
    name: str,
    x: str,
    batch: int,
    size: int,
    cin: int,
    cout: int,
    kernel: int,
    stride: int,
    groups: int = 1,
) -> tuple[str, int]:
    """A convolution and its folded batch norm; the output and its spatial size."""
    out = (size + 2 * (kernel // 2) - kernel) // stride + 1
    m = batch * out * out
    w = b.tensor(f"{name}.weight", cout, cin // groups, kernel, kernel)
    y = b.op(
        name,
        "conv",
        (groups, m, cin // groups * kernel * kernel, cout // groups),
        (x, w),
        (m, cout),
    )
    y = b.op(f"{name}.bn", "bias", (1, m, cout), (y, b.tensor(f"{name}.bn.b", cout)), (m, cout))
    return y, out


def _head(b: Builder, x: str, batch: int, size: int, channels: int, fc: str) -> None:
    pooled = b.op(
        "avgpool",
        "pool",
        (1, batch * channels, size * size),
        (x,),
        (batch, channels),
        fn="GlobalAveragePool",
    )
    y = b.op(
        fc,
        "gemm",
        (batch, channels, 1000),
        (pooled, b.tensor(f"{fc}.weight", channels, 1000)),
        (batch, 1000),
    )
    b.op(f"{fc}.bias", "bias", (1, batch, 1000), (y, b.tensor(f"{fc}.b", 1000)), (batch, 1000))


def resnet50(batch: int = 1) -> Graph:
    """ResNet-50 v1.5 (the stride of a stage's first bottleneck on its 3x3 convolution)."""
    b = Builder("resnet50" + (f"_b{batch}" if batch > 1 else ""))
    b.block("stem")
    x, size = _conv(b, "conv1", b.tensor("input", batch, 3, SIZE, SIZE), batch, SIZE, 3, 64, 7, 2)
    x = b.op("relu", "relu", (1, batch * size * size, 64), (x,), (batch * size * size, 64))
    size = (size + 2 - 3) // 2 + 1
    x = b.op(
        "maxpool",
        "pool",
        (1, batch * size * size * 64, 9),
        (x,),
        (batch * size * size, 64),
        fn="MaxPool",
    )
    cin = 64
    for stage, (width, blocks, stride) in enumerate(
        zip((64, 128, 256, 512), (3, 4, 6, 3), (1, 2, 2, 2)), 1
    ):
        for block in range(blocks):
            b.block(f"layer{stage}.{block}")
            s, inside = (stride if block == 0 else 1), size
            y, _ = _conv(b, "conv1", x, batch, inside, cin, width, 1, 1)
            pixels = batch * inside * inside
            y = b.op("relu1", "relu", (1, pixels, width), (y,), (pixels, width))
            y, size = _conv(b, "conv2", y, batch, inside, width, width, 3, s)
            pixels = batch * size * size
            y = b.op("relu2", "relu", (1, pixels, width), (y,), (pixels, width))
            y, _ = _conv(b, "conv3", y, batch, size, width, 4 * width, 1, 1)
            identity = (
                _conv(b, "downsample", x, batch, inside, cin, 4 * width, 1, s)[0]
                if block == 0
                else x
            )
            x = b.op("add", "add", (1, pixels, 4 * width), (y, identity), (pixels, 4 * width))
            x = b.op("relu3", "relu", (1, pixels, 4 * width), (x,), (pixels, 4 * width))
            cin = 4 * width
    b.block("head")
    _head(b, x, batch, size, cin, "fc")
    return b.graph(
        "ResNet-50 (He et al. 2016, Table 1) as torchvision.models.resnet50 builds it (v1.5), "
        f"batch {batch}, 224 x 224"
    )


MOBILENET_V2 = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)  # expansion t, channels c, repeats n, stride s


def _relu6(b: Builder, name: str, x: str, pixels: int, channels: int) -> str:
    return b.op(name, "elementwise", (1, pixels, channels), (x,), (pixels, channels), fn="Clip")


def mobilenet_v2(batch: int = 1) -> Graph:
    """MobileNetV2, width 1.0: inverted residual blocks (Table 2), ReLU6 as Clip(0, 6)."""
    b = Builder("mobilenet_v2" + (f"_b{batch}" if batch > 1 else ""))
    b.block("features.0")
    x, size = _conv(b, "conv", b.tensor("input", batch, 3, SIZE, SIZE), batch, SIZE, 3, 32, 3, 2)
    x = _relu6(b, "relu6", x, batch * size * size, 32)
    cin, index = 32, 1
    for t, c, n, s in MOBILENET_V2:
        for i in range(n):
            b.block(f"features.{index}")
            hidden, inside, y = cin * t, size, x
            if t != 1:
                y, _ = _conv(b, "expand", y, batch, inside, cin, hidden, 1, 1)
                y = _relu6(b, "expand.relu6", y, batch * inside * inside, hidden)
            y, size = _conv(
                b,
                "depthwise",
                y,
                batch,
                inside,
                hidden,
                hidden,
                3,
                s if i == 0 else 1,
                groups=hidden,
            )
            pixels = batch * size * size
            y = _relu6(b, "depthwise.relu6", y, pixels, hidden)
            y, _ = _conv(b, "project", y, batch, size, hidden, c, 1, 1)
            if (s == 1 or i > 0) and cin == c:
                y = b.op("add", "add", (1, pixels, c), (x, y), (pixels, c))
            x, cin, index = y, c, index + 1
    b.block("features.18")
    x, _ = _conv(b, "conv", x, batch, size, 320, 1280, 1, 1)
    x = _relu6(b, "relu6", x, batch * size * size, 1280)
    b.block("head")
    _head(b, x, batch, size, 1280, "classifier.1")
    return b.graph(
        "MobileNetV2 (Sandler et al. 2018, Table 2) as torchvision.models.mobilenet_v2 builds it "
        f"(width 1.0), batch {batch}, 224 x 224"
    )
