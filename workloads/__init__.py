"""workloads: what is tuned, as a weighted list of GEMMs (a model's layers), and the readers that
build one from a file: TOML, CSV, SCALE-Sim topologies, ONNX models, each a `WorkloadFormat`
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
from workloads.model import DynamicShapeError, Gemm, Workload, WorkloadError
from workloads.text import build_workload

__all__ = [
    "DynamicShapeError",
    "Gemm",
    "Workload",
    "WorkloadError",
    "WorkloadFormat",
    "build_workload",
    "bundled_workloads",
    "format_of",
    "load_workload",
    "resolve_workload",
]
