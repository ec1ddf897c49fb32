"""The fusible groups of a network graph (workloads.graph), found by pattern, each with the
fused group (simcore.fusion.groups) that computes it as one program.

Three patterns, over edges whose tensor has one consumer (the next operation of the group), in
operations of the same block and count:

* **epilogue**: a product (gemm, or matmul: `batch` products) followed by elementwise steps on
  its output: bias, relu, gelu, silu, scale, an add of a tensor from outside the chain (a
  residual) and a multiply by one (a gate: SwiGLU's silu(x W_gate) times x W_up). Every prefix of the chain is a candidate: which of its edges fuse is a choice;
* **mlp**: gemm, [bias], an activation (relu, gelu, silu), a gemm reading it, [bias] (both
  biases or none, as `FusedMlp` has them);
* **attention**: matmul Q K^T, [scale], softmax, matmul P V reading the probabilities.

Candidates that share an operation are alternatives of one `Region`; a region's choices are its
sets of pairwise disjoint candidates, the empty set (every operation apart) among them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from simcore.fusion.groups import (
    ACTIVATIONS,
    EpilogueGemm,
    FusedAttention,
    FusedGroup,
    FusedGroupError,
    FusedMlp,
)
from workloads.graph import Graph, Operation

KINDS: tuple[str, ...] = ("epilogue", "mlp", "attention")
STEPS = {"bias": "bias", "relu": "relu", "gelu": "gelu", "silu": "silu", "scale": "scale"}
STEPS.update({"add": "residual", "mul": "gate"})
MOST_CHOICES = 4096  # a region past this many choices is refused (none of the networks nears it)


@dataclass(frozen=True)
class Candidate:
    """One fusible group: its kind, its operations in graph order, the tensors it keeps on chip
    (the fused edges), how often it runs (its operations' count) and the group that computes
    it."""

    kind: str
    operations: tuple[str, ...]
    intermediates: tuple[str, ...]
    count: float
    block: str
    group: FusedGroup

    @property
    def name(self) -> str:
        return f"{self.kind}: {' + '.join(self.operations)}"


@dataclass(frozen=True)
class Region:
    """Candidates that share operations: at most one of any two overlapping ones fuses."""

    candidates: tuple[Candidate, ...]
    operations: tuple[str, ...]

    def choices(self) -> list[tuple[Candidate, ...]]:
        """Every set of pairwise disjoint candidates, the empty set first, smaller sets first."""
        found: list[tuple[Candidate, ...]] = []
        for size in range(len(self.candidates) + 1):
            for chosen in itertools.combinations(self.candidates, size):
                used = [op for c in chosen for op in c.operations]
                if len(used) == len(set(used)):
                    found.append(chosen)
                    if len(found) > MOST_CHOICES:
                        raise ValueError(
                            f"fusion region of {self.operations[0]} has more than "
                            f"{MOST_CHOICES} choices"
                        )
        return found


class _Edges:
    """The graph's producer and consumer lookups."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.by_name = {op.name: op for op in graph.operations}

    def next_op(self, op: Operation) -> Operation | None:
        """The one operation reading `op`'s one output, when that is its only reader and it runs
        in the same block as often."""
        if len(op.outputs) != 1:
            return None
        consumers = self.graph.tensors[op.outputs[0]].consumers
        if len(consumers) != 1:
            return None
        following = self.by_name[consumers[0]]
        if following.count != op.count or following.block != op.block:
            return None
        return following


def _rows(op: Operation, batch: int, m: int, n: int) -> bool:
    """Whether a vector operation works on the product's batch x m x n output."""
    if op.family != "vector":
        return False
    b, rows, cols = op.dims
    return cols == n and b * rows == batch * m


def _scale(op: Operation) -> float:
    """A scale operation's factor (1 when the graph does not state it: the cost is the same)."""
    return float(op.option("value", op.option("scale", 1.0)))  # type: ignore[arg-type]


def _product(op: Operation) -> tuple[int, int, int, int] | None:
    if op.kind == "gemm":
        return (1, *op.dims)  # type: ignore[return-value]
    if op.kind == "matmul":
        return op.dims  # type: ignore[return-value]
    return None


def _step(op: Operation, tensor: str, edges: _Edges, batch: int, m: int, n: int) -> str | None:
    """The epilogue step `op` is, applied to `tensor`, or None."""
    step = STEPS.get(op.kind)
    if step is None or not _rows(op, batch, m, n):
        return None
    if op.inputs[:1] != (tensor,) and step not in ("residual", "gate"):
        return None
    if step in ("residual", "gate"):
        others = [t for t in op.inputs if t != tensor]
        if op.option("fn") == "Sub" or len(op.inputs) != 2 or len(others) != 1:
            return None
        if edges.graph.tensors[others[0]].elements != batch * m * n:
            return None
    return step


def _epilogues(op: Operation, edges: _Edges) -> list[Candidate]:
    dims = _product(op)
    if dims is None:
        return []
    batch, m, k, n = dims
    chain: list[Operation] = [op]
    steps: list[str] = []
    found = []
    while True:
        following = edges.next_op(chain[-1])
        if following is None:
            break
        step = _step(following, chain[-1].outputs[0], edges, batch, m, n)
        if step is None or step in steps:
            break
        chain.append(following)
        steps.append(step)
        scales = [_scale(o) for o in chain if o.kind == "scale"]
        gelu = next((str(o.option("form", "tanh")) for o in chain if o.kind == "gelu"), "tanh")
        try:
            group = EpilogueGemm(m, k, n, tuple(steps), batch, scales[0] if scales else 1.0, gelu)
        except FusedGroupError:
            break
        found.append(_candidate("epilogue", chain, group))
    return found


def _candidate(kind: str, chain: list[Operation], group: FusedGroup) -> Candidate:
    return Candidate(
        kind,
        tuple(o.name for o in chain),
        tuple(o.outputs[0] for o in chain[:-1]),
        chain[0].count,
        chain[0].block,
        group,
    )


def _mlp(op: Operation, edges: _Edges) -> Candidate | None:
    if op.kind != "gemm":
        return None
    m, d, hidden = op.dims
    chain = [op]
    following = edges.next_op(op)
    bias = following is not None and _step(following, op.outputs[0], edges, 1, m, hidden) == "bias"
    if bias:
        assert following is not None
        chain.append(following)
        following = edges.next_op(following)
    if following is None or following.kind not in ACTIVATIONS:
        return None
    if not _rows(following, 1, m, hidden) or following.inputs[:1] != chain[-1].outputs:
        return None
    chain.append(following)
    down = edges.next_op(following)
    if down is None or down.kind != "gemm" or down.inputs[:1] != following.outputs:
        return None
    if down.dims[:2] != (m, hidden):
        return None
    chain.append(down)
    d_out = down.dims[2]
    if bias:
        last = edges.next_op(down)
        if last is None or _step(last, down.outputs[0], edges, 1, m, d_out) != "bias":
            return None
        chain.append(last)
    form = str(following.option("form", "tanh"))
    try:
        group = FusedMlp(m, d, hidden, d_out, following.kind, bias, form)
    except FusedGroupError:
        return None
    return _candidate("mlp", chain, group)


def _attention(op: Operation, edges: _Edges) -> Candidate | None:
    if op.kind != "matmul":
        return None
    heads, queries, head_dim, keys = op.dims
    chain = [op]
    following = edges.next_op(op)
    scale = 1.0
    if following is not None and following.kind == "scale":
        if not _rows(following, heads, queries, keys):
            return None
        scale = _scale(following)
        chain.append(following)
        following = edges.next_op(following)
    if (
        following is None
        or following.kind != "softmax"
        or not _rows(following, heads, queries, keys)
    ):
        return None
    chain.append(following)
    values = edges.next_op(following)
    if values is None or values.kind != "matmul" or values.inputs[:1] != following.outputs:
        return None
    if values.dims != (heads, queries, keys, head_dim):
        return None
    chain.append(values)
    causal = bool(following.option("causal", False))
    offset = int(following.option("causal_offset", 0))  # type: ignore[call-overload]
    scale *= float(following.option("scale", 1.0))  # type: ignore[arg-type]
    try:
        group = FusedAttention(
            heads, queries, keys, head_dim, causal, offset if causal else 0, scale
        )
    except FusedGroupError:
        return None
    return _candidate("attention", chain, group)


def candidates(graph: Graph) -> list[Candidate]:
    """Every fusible group of `graph`, in the order of their first operation."""
    edges = _Edges(graph)
    found: list[Candidate] = []
    for op in graph.operations:
        found += _epilogues(op, edges)
        for pattern in (_mlp, _attention):
            candidate = pattern(op, edges)
            if candidate is not None:
                found.append(candidate)
    return found


def regions(graph: Graph, kinds: tuple[str, ...] = KINDS) -> list[Region]:
    """The candidates of the given kinds grouped into regions of overlapping ones (connected by
    a shared operation), in graph order."""
    found = [c for c in candidates(graph) if c.kind in kinds]
    order = {op.name: i for i, op in enumerate(graph.operations)}
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[str, int] = {}
    for index, candidate in enumerate(found):
        for name in candidate.operations:
            if name in owner:
                parent[root(index)] = root(owner[name])
            else:
                owner[name] = index
    groups: dict[int, list[Candidate]] = {}
    for index, candidate in enumerate(found):
        groups.setdefault(root(index), []).append(candidate)
    result = []
    for members in groups.values():
        names = sorted({n for c in members for n in c.operations}, key=order.__getitem__)
        result.append(Region(tuple(members), tuple(names)))
    return sorted(result, key=lambda r: order[r.operations[0]])
