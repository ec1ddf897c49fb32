"""workloads: what is tuned, as a weighted list of GEMMs (a model's layers) derived from a
network graph (workloads.graph: every operation over named tensors), and the readers that
build them from a file: TOML, CSV, SCALE-Sim topologies, ONNX models, each a `WorkloadFormat`
registered in the entry-point group `autotune.workloads`, and the bundled networks
(workloads/networks/). Depends on simcore only."""

from __future__ import annotations

from workloads.formats import (
    WorkloadFormat,
    bundled_workloads,
    format_of,
    load_workload,
    resolve_workload,
)
from workloads.graph import KINDS, Graph, Operation, Tensor
from workloads.model import DynamicShapeError, Gemm, Workload, WorkloadError
from workloads.network import gemm_graph, gemm_workload, load_graph
from workloads.text import build_workload

__all__ = [
    "KINDS",
    "DynamicShapeError",
    "Gemm",
    "Graph",
    "Operation",
    "Tensor",
    "Workload",
    "WorkloadError",
    "WorkloadFormat",
    "build_workload",
    "bundled_workloads",
    "format_of",
    "gemm_graph",
    "gemm_workload",
    "load_graph",
    "load_workload",
    "resolve_workload",
]
