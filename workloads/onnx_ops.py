"""The matrix products of ONNX ops, from their operands' shapes and their attributes alone.

* MatMul (numpy's matmul): A (..., M, K) x B (..., K, N). When B is a matrix (a layer's weight),
  A's leading dimensions are rows of one product: M is their product. When both are batched,
  the broadcast leading dimensions are separate products: the GEMM's weight. A vector operand
  is a 1 x K row (A) or a K x 1 column (B).
* Gemm: A (M x K, or K x M with transA) times B (K x N, or N x K with transB).
* Conv, lowered by im2col: M = batch x output pixels, K = (C_in / groups) x kernel size,
  N = C_out / groups, weight = groups (depthwise: groups = C_in, so K is the kernel size and
  N the channel multiplier). Output sizes follow the ONNX operator definition: explicit pads,
  or auto_pad SAME_UPPER / SAME_LOWER (ceil(in / stride)) or VALID, with strides and dilations.
  Attributes the definition does not allow (a list whose length is not the spatial rank, or 2x
  it for pads; another auto_pad; a kernel_shape other than the weight's) are errors.
* Einsum with two operands (explicit or implicit output): indices in both operands and the
  output are batch (the weight),
  in both operands only are contracted (K), in one operand and the output are M (first operand)
  or N (second operand). Other forms (one operand, a diagonal, an index summed within one
  operand, an elementwise product: no contracted index, and not an outer product) are not
  matrix products. An equation that is not Einsum's syntax is an error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

Dims = tuple[int, ...]
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")
_TERM = r"(?:[A-Za-z]|\.\.\.)*"
_EQUATION = re.compile(rf"{_TERM}(?:,{_TERM})*(?:->{_TERM})?", re.ASCII)


class NotAProduct(ValueError):
    """The op, with these attributes, is not a matrix product this lowering knows."""


@dataclass(frozen=True)
class Product:
    m: int
    k: int
    n: int
    weight: int


def _prod(dims: Dims) -> int:
    return math.prod(dims) if dims else 1


def matmul(a: Dims, b: Dims) -> Product:
    if not a or not b:
        raise ValueError("MatMul operands must have at least one dimension")
    a2 = (1, a[0]) if len(a) == 1 else a
    b2 = (b[0], 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"MatMul operands {a} and {b} do not agree on K")
    if len(b2) == 2:  # a weight matrix: A's leading dimensions are rows of one product
        return Product(_prod(a2[:-1]), a2[-1], b2[-1], 1)
    batch = _broadcast(a2[:-2], b2[:-2])
    return Product(a2[-2], a2[-1], b2[-1], _prod(batch))


def _broadcast(x: Dims, y: Dims) -> Dims:
    width = max(len(x), len(y))
    x, y = (1,) * (width - len(x)) + x, (1,) * (width - len(y)) + y
    out = []
    for p, q in zip(x, y):
        if p != q and 1 not in (p, q):
            raise ValueError(f"batch dimensions {x} and {y} do not broadcast")
        out.append(max(p, q))
    return tuple(out)


def gemm(a: Dims, b: Dims, trans_a: int, trans_b: int) -> Product:
    if len(a) != 2 or len(b) != 2:
        raise ValueError(f"Gemm operands must be matrices, got {a} and {b}")
    m, k = (a[1], a[0]) if trans_a else a
    kb, n = (b[1], b[0]) if trans_b else b
    if k != kb:
        raise ValueError(
            f"Gemm operands {a} and {b} (transA={trans_a}, transB={trans_b}) do not agree on K"
        )
    return Product(m, k, n, 1)


def conv_output(
    size: int, kernel: int, stride: int, dilation: int, pads: tuple[int, int], auto_pad: str
) -> int:
    """One output dimension of Conv (the ONNX operator's definition)."""
    reach = dilation * (kernel - 1) + 1
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return -(-size // stride)
    if auto_pad == "VALID":
        out = (size - reach) // stride + 1
    else:
        out = (size + pads[0] + pads[1] - reach) // stride + 1
    if out < 1:
        raise ValueError(
            f"a kernel of {kernel} (dilation {dilation}) does not fit an input of {size}"
        )
    return out


@dataclass(frozen=True)
class ConvAttributes:
    group: int = 1
    strides: Dims = ()
    dilations: Dims = ()
    pads: Dims = ()
    auto_pad: str = "NOTSET"
    kernel_shape: Dims = ()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _check_attributes(attrs: ConvAttributes, spatial: int, kernel: Dims) -> None:
    """Conv attributes as the operator definition allows them."""
    if attrs.auto_pad not in AUTO_PADS:
        raise ValueError(
            f"attribute auto_pad {attrs.auto_pad!r} is not one of {', '.join(AUTO_PADS)}"
        )
    lists = (
        ("strides", attrs.strides, spatial),
        ("dilations", attrs.dilations, spatial),
        ("pads", attrs.pads, 2 * spatial),
        ("kernel_shape", attrs.kernel_shape, spatial),
    )
    for label, values, length in lists:
        if values and len(values) != length:
            raise ValueError(
                f"attribute {label} has {_count(len(values), 'value')}, expected {length} "
                f"(the input has {_count(spatial, 'spatial dimension')})"
            )
    for label, values in (("strides", attrs.strides), ("dilations", attrs.dilations)):
        if any(v < 1 for v in values):
            raise ValueError(f"attribute {label} {list(values)} must be positive")
    if any(v < 0 for v in attrs.pads):
        raise ValueError(f"attribute pads {list(attrs.pads)} must not be negative")
    if attrs.kernel_shape and tuple(attrs.kernel_shape) != kernel:
        raise ValueError(
            f"attribute kernel_shape {list(attrs.kernel_shape)} disagrees with the weight's "
            f"spatial dimensions {list(kernel)}"
        )


def conv(x: Dims, w: Dims, attrs: ConvAttributes, out_spatial: Dims | None = None) -> Product:
    """im2col of Conv: X (N, C_in, D1..Dk), W (C_out, C_in / groups, k1..kk). `out_spatial`,
    when known (from shape inference), is used as the output size."""
    if len(x) < 3 or len(w) != len(x):
        raise ValueError(f"Conv input {x} and weight {w} must have the same rank, at least 3")
    spatial = len(x) - 2
    kernel = w[2:]
    _check_attributes(attrs, spatial, kernel)
    group = attrs.group
    if group < 1 or x[1] != w[1] * group or w[0] % group:
        raise ValueError(f"Conv with group={group}: input channels {x[1]}, weight {w} do not agree")
    if out_spatial is None:
        strides = attrs.strides or (1,) * spatial
        dilations = attrs.dilations or (1,) * spatial
        pads = attrs.pads or (0,) * (2 * spatial)
        out_spatial = tuple(
            conv_output(
                x[2 + i],
                kernel[i],
                strides[i],
                dilations[i],
                (pads[i], pads[i + spatial]),
                attrs.auto_pad,
            )
            for i in range(spatial)
        )
    return Product(x[0] * _prod(out_spatial), w[1] * _prod(kernel), w[0] // group, group)


def _ellipsis_dims(term: str, rank: int) -> int:
    """How many dimensions an operand's '...' stands for."""
    named = len(term.replace("...", ""))
    count = rank - named if "..." in term else 0
    if count < 0 or ("..." not in term and named != rank):
        raise NotAProduct(f"indices {term!r} do not match an operand of rank {rank}")
    return count


def _expand(term: str, count: int, placeholders: str) -> str:
    """The indices with '...' replaced by the last `count` placeholders (numpy broadcasting
    aligns the ellipsis dimensions from the right)."""
    return (
        term.replace("...", placeholders[len(placeholders) - count :])
        if count
        else term.replace("...", "")
    )


def parse_equation(equation: str) -> tuple[list[str], str]:
    """The operands' index terms and the output's (implicit: the ellipsis, then the indices
    used once, sorted)."""
    eq = equation.replace(" ", "")
    terms = eq.split("->")[0].split(",")
    if not _EQUATION.fullmatch(eq) or any(
        t.count("...") > 1 for t in eq.replace("->", ",").split(",")
    ):
        raise ValueError(
            f"Einsum equation {equation!r} is malformed: expected operand terms of letters "
            f"(and at most one '...') separated by ',', then optionally '->' and the output's"
        )
    if "->" in eq:
        return terms, eq.split("->")[1]
    letters = "".join(terms).replace("...", "")
    out = "".join(sorted(i for i in set(letters) if letters.count(i) == 1))
    return terms, ("..." if "..." in eq else "") + out


def einsum(equation: str, a: Dims, b: Dims) -> Product:
    terms, out = parse_equation(equation)
    if len(terms) != 2:
        raise NotAProduct(f"Einsum {equation!r} does not have two operands")
    count_a, count_b = _ellipsis_dims(terms[0], len(a)), _ellipsis_dims(terms[1], len(b))
    placeholders = "".join(
        chr(0x100 + i) for i in range(max(count_a, count_b))
    )  # never an index letter
    ta, tb = _expand(terms[0], count_a, placeholders), _expand(terms[1], count_b, placeholders)
    to = _expand(out, max(count_a, count_b), placeholders)
    if any(len(set(t)) != len(t) for t in (ta, tb, to)):
        raise NotAProduct(f"Einsum {equation!r} repeats an index within an operand (a diagonal)")
    size: dict[str, int] = {}
    for term, dims in ((ta, a), (tb, b)):
        for index, dim in zip(term, dims):
            if size.get(index, 1) not in (1, dim) and dim != 1:
                raise ValueError(f"Einsum {equation!r}: index {index!r} is {size[index]} and {dim}")
            size[index] = max(size.get(index, 1), dim)
    if set(to) - set(ta) - set(tb) or (set(ta) ^ set(tb)) - set(to):
        raise NotAProduct(f"Einsum {equation!r} sums an index within one operand")
    batch = [i for i in ta if i in tb and i in to]
    contracted = [i for i in ta if i in tb and i not in to]
    rows = [i for i in ta if i not in tb]
    cols = [i for i in tb if i not in ta]
    if not contracted and not (rows and cols):  # an outer product (rows x cols, K = 1) stays
        raise NotAProduct(f"Einsum {equation!r} contracts no index: an elementwise product")
    get = lambda indices: _prod(tuple(size[i] for i in indices))  # noqa: E731
    return Product(get(rows), get(contracted), get(cols), get(batch))
