"""Graphs and workloads: the weighted GEMM list a tune run takes is derived from a network
graph (`gemm_workload`); a GEMM list read from a file is a graph of GEMMs (`gemm_graph`);
`load_graph` reads any workload file or names a bundled network; `Builder` writes a graph
operation by operation (the bundled networks use it)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from workloads.graph import Dims, Graph, Operation, Option, connect
from workloads.layers import LayerGemm, merge
from workloads.model import Workload, WorkloadError, whole
from workloads.validation import validate_workload


def product_gemm(op: Operation) -> LayerGemm:
    """A product operation as one layer's GEMM: M x K x N run count x batch (or groups)
    times."""
    if op.kind == "gemm":
        (m, k, n), runs = op.dims, 1
    else:
        runs, m, k, n = op.dims
    weight = op.count * runs
    layer = op.layers[0] if op.layers else op.name
    return LayerGemm(layer, m, k, n, weight, op.source or op.kind)  # type: ignore[arg-type]


def gemm_workload(graph: Graph) -> Workload:
    """The graph's products as the weighted GEMM list a tune run takes (same-shape products
    merged, as every reader merges them)."""
    found = [product_gemm(op) for op in graph.operations if op.family == "product"]
    if not found:
        raise WorkloadError(f"network {graph.name}: no matrix products to tune")
    where = f"network {graph.name}"
    untimed = [op for op in graph.operations if op.family != "product"]
    summary = (f"{len(found)} product operations and {len(untimed)} other operations in the graph",)
    workload = Workload(graph.name, merge(found, where), summary, graph.warnings)
    return validate_workload(workload, where)


def gemm_graph(workload: Workload) -> Graph:
    """A GEMM list as a graph of GEMMs: one operation per GEMM, its weight as its count, each
    reading its own operands."""
    ops, shapes = [], {}
    for gemm in workload.gemms:
        s = gemm.shape
        a, b, c = f"{gemm.name}.a", f"{gemm.name}.b", f"{gemm.name}.out"
        shapes.update({a: ((s.m, s.k), 2), b: ((s.k, s.n), 2), c: ((s.m, s.n), 2)})
        ops.append(
            Operation(
                gemm.name,
                "gemm",
                (s.m, s.k, s.n),
                (a, b),
                (c,),
                whole(gemm.weight),
                gemm.layers or (gemm.name,),
                source=gemm.source,
            )
        )
    return connect(workload.name, ops, shapes, "", workload.warnings)


def load_graph(
    path: str | Path,
    input_shapes: Mapping[str, tuple[int, ...]] | None = None,
    **options: object,
) -> Graph:
    """A bundled network by name (`options`: its settings, e.g. seq, batch), or any workload
    file: a format that reads graphs gives its graph, any other its GEMMs as a graph."""
    from workloads import networks
    from workloads.formats import format_of, load_workload, resolve_workload

    if isinstance(path, str) and path in networks.NETWORKS:
        return networks.build(path, **options)
    if options:
        given = ", ".join(sorted(options))
        raise WorkloadError(f"workload {path}: {given} apply to bundled networks only")
    resolved = resolve_workload(path)
    if resolved.is_file():
        found = format_of(resolved)
        if found.read_graph is not None:
            return found.read_graph(resolved, input_shapes)
    return gemm_graph(load_workload(resolved, input_shapes))


class Builder:
    """A graph written operation by operation. `block(name, count)` sets the layer (and how
    many times it runs) of the operations that follow; `tensor` declares a graph input or a
    weight; `op` adds an operation and declares its outputs."""

    def __init__(self, name: str, width: int = 2) -> None:
        self.name, self.width = name, width
        self.ops: list[Operation] = []
        self.shapes: dict[str, tuple[Dims, int]] = {}
        self._block, self._count = "", 1

    def block(self, name: str, count: int = 1) -> None:
        self._block, self._count = name, count

    def tensor(self, name: str, *shape: int) -> str:
        self.shapes[name] = (tuple(shape), self.width)
        return name

    def op(
        self,
        name: str,
        kind: str,
        dims: Dims,
        inputs: tuple[str, ...],
        out: Dims,
        **options: str | float | int | bool,
    ) -> str:
        full = f"{self._block}.{name}" if self._block else name
        output = f"{full}:out"
        opts: tuple[Option, ...] = tuple(sorted(options.items()))
        self.ops.append(
            Operation(
                full, kind, dims, inputs, (output,), self._count, (full,), self._block, "", opts
            )
        )
        self.shapes[output] = (out, self.width)
        return output

    def graph(self, provenance: str) -> Graph:
        return connect(self.name, self.ops, self.shapes, provenance)
