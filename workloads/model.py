"""A workload's values: its GEMMs (each a shape and a weight) and the errors of reading one. The
readers (workloads.formats) build them."""

from __future__ import annotations

from dataclasses import dataclass

from simcore.shape import Shape


def whole(value: float) -> float | int:
    """A whole number as an int (printed and summed exactly), any other as it is."""
    return int(value) if float(value).is_integer() else value


def weight_text(weight: float) -> str:
    """A weight as printed: a whole number exactly, with thousands separators; a fraction as
    the shortest decimal that reads back as it."""
    return f"{whole(weight):,}"


class WorkloadError(ValueError):
    """A workload file is missing, malformed, or describes no valid GEMM."""


class DynamicShapeError(WorkloadError):
    """A model input has a dimension that is not fixed, and no shape was given for it."""

    def __init__(self, message: str, input_name: str, dims: tuple[int | None, ...]) -> None:
        super().__init__(message)
        self.input_name = input_name
        self.dims = dims  # None where the dimension is dynamic


@dataclass(frozen=True)
class Gemm:
    name: str
    shape: Shape
    weight: float  # occurrences per workload step; the objective sums weight x cycles
    source: str = ""  # the op it comes from (Conv, MatMul, ...), if known
    layers: tuple[str, ...] = ()  # the model's layers that run it, if known (merged layers)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of one run."""
        return self.shape.macs

    @property
    def label(self) -> str:
        return f"{self.name} ({self.shape} x{weight_text(self.weight)})"


@dataclass(frozen=True)
class Workload:
    name: str
    gemms: tuple[Gemm, ...]
    summary: tuple[str, ...] = ()  # what an importer read besides the GEMMs (other ops)
    warnings: tuple[str, ...] = ()  # what it could not turn into GEMMs

    def weighted(self, cycles: dict[str, int | float]) -> float:
        """The workload's objective: sum of weight x cycles, by GEMM name."""
        return float(sum(g.weight * cycles[g.name] for g in self.gemms))
