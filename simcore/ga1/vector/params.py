"""A vector program's schedule parameters, and their domains declared as data.

`VectorParams` is one point; `param_domains(op)` says which parameters apply to an operation
and which values each may take, in the form a search space converts (every domain is a finite
choice; `only_when` names another parameter's values outside which this one is fixed).
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.ga1.vector.ops import VectorOp

ORDERS: tuple[str, ...] = ("row", "col")
REDUCTIONS: tuple[str, ...] = ("two_pass", "online", "resident")
BUFFERS: tuple[int, ...] = (1, 2, 3, 4)
GROUPS: tuple[int, ...] = (1, 2, 4, 8)


class VectorParamsError(ValueError):
    """A parameter value outside its domain, or not applicable to the operation."""


@dataclass(frozen=True)
class VectorParams:
    """order: "row" visits a row band's tiles left to right, band after band; "col" visits a
    group of `group` bands column by column (a column's bias, gamma or beta tile is loaded once
    for the group). buffers: slots that streamed tiles rotate through; a result is stored
    buffers - 1 tiles later, so loads run that far ahead of the vector unit. reduction (row-wise
    operations): "two_pass" reads a row once per statistic (max, then sum; mean, then variance)
    and once more to normalise; "online" gathers the statistics in one read (a running max
    with a rescaled sum; Chan's merge of mean and variance); "resident" keeps the group's row
    band in the scratchpad and reads it once."""

    order: str = "row"
    group: int = 1
    buffers: int = 2
    reduction: str = "two_pass"

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise VectorParamsError(f"order must be one of {', '.join(ORDERS)}, got {self.order!r}")
        if self.reduction not in REDUCTIONS:
            known = ", ".join(REDUCTIONS)
            raise VectorParamsError(f"reduction must be one of {known}, got {self.reduction!r}")
        for name, allowed in (("buffers", BUFFERS), ("group", GROUPS)):
            value = getattr(self, name)
            if isinstance(value, bool) or value not in allowed:
                raise VectorParamsError(f"{name} must be one of {allowed}, got {value!r}")
        if self.order == "row" and self.group != 1:
            raise VectorParamsError(
                f"group {self.group} needs order col (row order visits one band)"
            )


@dataclass(frozen=True)
class Domain:
    """One parameter's values. `only_when` = (other, values): outside those values of `other`
    this parameter is fixed at `fixed`."""

    name: str
    values: tuple[object, ...]
    description: str
    only_when: tuple[str, tuple[object, ...]] | None = None
    fixed: object = None


def reductions_for(op: VectorOp) -> tuple[str, ...]:
    """How the operation's row reduction may be split across a row's tiles."""
    if op.kind in ("softmax", "layernorm"):
        return REDUCTIONS
    if op.kind == "rmsnorm":
        return ("two_pass", "resident")  # one statistic: "online" would be "two_pass"
    return ("two_pass",)  # one read per tile whatever the split (row sums and maxima)


def orders_for(op: VectorOp) -> tuple[str, ...]:
    """Column order pays where a column carries a parameter tile (bias, gamma, beta)."""
    return ORDERS if op.kind in ("bias", "layernorm", "rmsnorm") else ("row",)


def param_domains(op: VectorOp) -> tuple[Domain, ...]:
    """The parameters that matter for `op`, with their values."""
    found = [Domain("buffers", BUFFERS, "slots streamed tiles rotate through (prefetch depth)")]
    if len(orders_for(op)) > 1:
        found.append(Domain("order", ORDERS, "band by band, or column by column over a group"))
        found.append(
            Domain(
                "group",
                GROUPS,
                "row bands visited together in column order",
                ("order", ("col",)),
                1,
            )
        )
    if len(reductions_for(op)) > 1:
        found.append(Domain("reduction", reductions_for(op), "how a row's statistics are gathered"))
    return tuple(found)


def check_applicable(op: VectorOp, params: VectorParams) -> None:
    """Refuse a point that sets a parameter the operation does not have."""
    if params.order not in orders_for(op):
        raise VectorParamsError(f"{op.kind} takes order row only (it has no column parameter)")
    if params.reduction not in reductions_for(op):
        allowed = ", ".join(reductions_for(op))
        raise VectorParamsError(f"{op.kind} takes reduction {allowed}, got {params.reduction!r}")


def all_params(op: VectorOp) -> list[VectorParams]:
    """Every point of the operation's domains."""
    points = []
    for buffers in BUFFERS:
        for order in orders_for(op):
            for group in GROUPS if order == "col" else (1,):
                for reduction in reductions_for(op):
                    points.append(VectorParams(order, group, buffers, reduction))
    return points
