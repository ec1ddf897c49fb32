"""The GEMMs a workload is: one line per GEMM (name, the layers it stands for, M, K, N, weight,
source op) and the totals: the GEMM count (the sum of the weights: how many products run per
workload step) and the MACs (the sum of M x K x N x weight)."""

from __future__ import annotations

from workloads.model import Gemm, Workload, weight_text, whole

__all__ = ["weight_text", "totals", "listing", "format_listing", "shapes_text"]


def totals(workload: Workload) -> dict[str, float | int]:
    weights = sum(g.weight for g in workload.gemms)
    macs = sum(_weighted_macs(g) for g in workload.gemms)
    return {"entries": len(workload.gemms), "gemms": whole(weights), "macs": whole(macs)}


def _weighted_macs(gemm: Gemm) -> float | int:
    """MACs x weight, exact for a whole weight."""
    return gemm.macs * whole(gemm.weight)


def _count_text(value: float | int) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.0f}"


def shapes_text(workload: Workload) -> str:
    """The GEMM count of a listing: its entries, and its distinct shapes when they differ."""
    entries, shapes = len(workload.gemms), len({g.shape for g in workload.gemms})
    if entries == shapes:
        return f"{shapes} distinct shape{'s' if shapes != 1 else ''}"
    return (
        f"{entries} entr{'ies' if entries != 1 else 'y'} "
        f"({shapes} distinct shape{'s' if shapes != 1 else ''})"
    )


def listing(workload: Workload) -> dict[str, object]:
    """The listing as one JSON-ready object."""
    return {
        "workload": workload.name,
        "gemms": [
            {
                "name": g.name,
                "layers": list(g.layers),
                "m": g.shape.m,
                "k": g.shape.k,
                "n": g.shape.n,
                "weight": whole(g.weight),
                "source": g.source,
                "macs": whole(_weighted_macs(g)),
            }
            for g in workload.gemms
        ],
        "totals": totals(workload),
        "summary": list(workload.summary),
        "warnings": list(workload.warnings),
    }


def _layers(names: tuple[str, ...], limit: int = 2) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", ... ({len(names)} layers)"


def format_listing(workload: Workload) -> str:
    """The listing as a table: one line per GEMM, then the totals and the importer's summary."""
    rows = [
        (
            g.name,
            *(str(d) for d in (g.shape.m, g.shape.k, g.shape.n)),
            weight_text(g.weight),
            _count_text(_weighted_macs(g)),
        )
        for g in workload.gemms
    ]
    heads = ("name", "m", "k", "n", "weight", "MACs")
    widths = [
        max([low, len(head), *(len(r[i]) for r in rows)])
        for i, (head, low) in enumerate(zip(heads, (4, 8, 8, 8, 8, 18)))
    ]

    source_width = max([8, *(len(g.source or "-") for g in workload.gemms)])

    def line(cells: tuple[str, ...], source: str, layers: str) -> str:
        numbers = " ".join(c.rjust(w) for c, w in zip(cells[1:], widths[1:]))
        return f"{cells[0]:{widths[0]}} {numbers}  {source:{source_width}} {layers}".rstrip()

    lines = [f"{workload.name}: the GEMMs of one workload step", line(heads, "source", "layers")]
    for g, cells in zip(workload.gemms, rows):
        layers = _layers(g.layers) if g.layers != (g.name,) else ""
        lines.append(line(cells, g.source or "-", layers))
    t = totals(workload)
    lines.append(
        f"total: {shapes_text(workload)}, {weight_text(t['gemms'])} GEMMs (the sum of the "
        f"weights), {t['macs']:,} MACs"
    )
    lines.extend(workload.summary)
    return "\n".join(lines)
