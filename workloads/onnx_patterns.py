"""Patterns of several ONNX nodes that are one operation of the network model: SiLU (Sigmoid
then Mul), GELU in erf form (Div, Erf, Add, Mul, Mul) and in tanh form (Pow(x, 3), Mul, Add,
Mul, Tanh, Add, Mul with 0.5 x beside or after, as PyTorch exports Hugging Face's), RMS norm
(x*x or x^2, ReduceMean, Add, Sqrt, Reciprocal, Mul, Mul). A pattern is a chain of nodes each
the only consumer of the one before, whose product takes the pattern's input again. Layer norm
as older exporters decompose it is a graph, not a chain (`_layernorm`): ReduceMean, Sub (x -
mean), its square (Pow or Mul) and Div both reading x - mean, ReduceMean, Add (eps), Sqrt, Div,
then a Mul (gamma) and an Add (beta) by constants when they follow."""

from __future__ import annotations

from typing import Any

from workloads.onnx_graph import DEFAULT_DOMAINS

Found = tuple[str, tuple, list[Any]]  # kind, options, nodes

# name -> (kind, options, op types node by node, the node that takes x again)
PATTERNS: dict[str, tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, ...], ...], int]] = {
    "silu": ("silu", (), (("Sigmoid",), ("Mul",)), 1),
    "gelu_erf": (
        "gelu",
        (("form", "erf"),),
        (("Div", "Mul"), ("Erf",), ("Add",), ("Mul",), ("Mul",)),
        3,
    ),
    "gelu_tanh": (
        "gelu",
        (("form", "tanh"),),
        (("Pow",), ("Mul",), ("Add",), ("Mul",), ("Tanh",), ("Add",), ("Mul",)),
        2,
    ),
    "rmsnorm": (
        "rmsnorm",
        (),
        (("Mul", "Pow"), ("ReduceMean",), ("Add",), ("Sqrt",), ("Reciprocal",), ("Mul",), ("Mul",)),
        5,
    ),
}


def find_patterns(
    nodes: Any, consumers: dict[str, list[Any]], producer: dict[str, Any]
) -> tuple[dict[int, Found], set[int]]:
    """Every pattern found, keyed by the id of its first node in the graph's order; the ids of
    the nodes taken."""
    position = {id(n): i for i, n in enumerate(nodes)}
    fused: dict[int, Found] = {}
    taken: set[int] = set()
    for node in nodes:
        if id(node) in taken:
            continue
        found = _pattern(node, consumers, producer)
        if found is None or any(id(n) in taken for n in found[2]):
            continue
        ordered = sorted(found[2], key=lambda n: position[id(n)])
        fused[id(ordered[0])] = (found[0], found[1], ordered)
        taken.update(id(n) for n in ordered)
    return fused, taken


def _pattern(node: Any, consumers: dict[str, list[Any]], producer: dict[str, Any]) -> Found | None:
    if node.domain not in DEFAULT_DOMAINS or not node.input:
        return None
    if node.op_type == "ReduceMean":
        found = _layernorm(node, consumers, producer)
        if found is not None:
            return found
    x = node.input[0]
    for kind, options, steps, again in PATTERNS.values():
        if node.op_type not in steps[0]:
            continue
        nodes = [node]
        for step in steps[1:]:
            after = consumers.get(nodes[-1].output[0], [])
            if len(after) != 1 or after[0].op_type not in step:
                break
            nodes.append(after[0])
        else:
            if kind == "rmsnorm" and node.op_type == "Mul" and list(node.input) != [x, x]:
                continue
            if x not in nodes[again].input:
                continue  # the product with x again (x sigmoid(x), x (1 + erf), x rstd)
            if options == (("form", "tanh"),) and not _halved(nodes, x, consumers, producer):
                continue
            return kind, options, nodes
    return None


def _halved(
    nodes: list[Any], x: str, consumers: dict[str, list[Any]], producer: dict[str, Any]
) -> bool:
    """GELU's tanh form ends with 0.5 x: a Mul of x by a constant feeding the last Mul (it
    joins the pattern), or the last Mul taking x and a Mul by a constant after it."""
    last = nodes[-1]
    for tensor in last.input:
        side = producer.get(tensor)
        if (
            side is not None
            and side.op_type == "Mul"
            and x in side.input
            and len(consumers.get(tensor, [])) == 1
        ):
            nodes.append(side)
            return True
    after = consumers.get(last.output[0], [])
    if x in last.input and len(after) == 1 and after[0].op_type == "Mul":
        nodes.append(after[0])
        return True
    return False


def _only(consumers: dict[str, list[Any]], node: Any) -> Any:
    """The one consumer of the node's output, else None."""
    after = consumers.get(node.output[0], []) if node.output else []
    return after[0] if len(after) == 1 else None


def _last_axis(node: Any) -> bool:
    axes = [list(a.ints) for a in node.attribute if a.name == "axes"]
    return not axes or axes[0] == [-1]


def _constant(name: str, producer: dict[str, Any]) -> bool:
    """A weight or a Constant's output (gamma and beta)."""
    made = producer.get(name)
    return made is None or made.op_type == "Constant"


def _layernorm(
    node: Any, consumers: dict[str, list[Any]], producer: dict[str, Any]
) -> Found | None:
    x, mean = node.input[0], node.output[0]
    sub = _only(consumers, node)
    if not _last_axis(node) or sub is None or sub.op_type != "Sub" or list(sub.input) != [x, mean]:
        return None
    centred = sub.output[0]
    users = consumers.get(centred, [])
    square = [u for u in users if u.op_type == "Pow" or list(u.input) == [centred, centred]]
    divide = [u for u in users if u.op_type == "Div"]
    if len(users) != 2 or len(square) != 1 or len(divide) != 1:
        return None
    chain = [square[0]]
    for step in ("ReduceMean", "Add", "Sqrt"):
        after = _only(consumers, chain[-1])
        if after is None or after.op_type != step:
            return None
        chain.append(after)
    if not _last_axis(chain[1]) or list(divide[0].input) != [centred, chain[-1].output[0]]:
        return None
    nodes = [node, sub, *chain, divide[0]]
    for step in ("Mul", "Add"):  # gamma, beta
        after = _only(consumers, nodes[-1])
        if after is None or after.op_type != step:
            break
        other = [t for t in after.input if t != nodes[-1].output[0]]
        if len(other) != 1 or not _constant(other[0], producer):
            break
        nodes.append(after)
    return "layernorm", (), nodes
