"""The GEMMs a workload is: one line per GEMM (name, the layers it stands for, M, K, N, weight,
source op) and the totals: the GEMM count (the sum of the weights: how many products run per
workload step) and the MACs (the sum of M x K x N x weight)."""

from __future__ import annotations

from search_spaces.workload import Workload


def totals(workload: Workload) -> dict[str, float | int]:
    weights = sum(g.weight for g in workload.gemms)
    macs = sum(g.macs * g.weight for g in workload.gemms)
    return {"entries": len(workload.gemms), "gemms": _number(weights), "macs": _number(macs)}


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


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
                "weight": _number(g.weight),
                "source": g.source,
                "macs": _number(g.macs * g.weight),
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
    width = max([4, *(len(g.name) for g in workload.gemms)])
    header = (
        f"{'name':{width}} {'m':>8} {'k':>8} {'n':>8} {'weight':>8} {'MACs':>18}  "
        f"{'source':8} layers"
    )
    lines = [f"{workload.name}: the GEMMs of one workload step", header]
    for g in workload.gemms:
        layers = _layers(g.layers) if g.layers != (g.name,) else ""
        lines.append(
            f"{g.name:{width}} {g.shape.m:>8} {g.shape.k:>8} {g.shape.n:>8} {g.weight:>8g} "
            f"{g.macs * g.weight:>18,.0f}  {g.source or '-':8} {layers}".rstrip()
        )
    t = totals(workload)
    lines.append(
        f"total: {t['entries']} distinct shapes, {t['gemms']:,} GEMMs (the sum of the "
        f"weights), {t['macs']:,} MACs"
    )
    lines.extend(workload.summary)
    return "\n".join(lines)
