"""The fusion search's report (autotune.results.fusion): each fusible group with its cycles
fused and apart, the DRAM words fusing saves, its ratio to the fused bound and its verification;
which groups the search chose; the network's totals apart and fused. As text or as rows."""

from __future__ import annotations

from autotune.results.fusion import FusionPlan, GroupResult, RegionResult


def _status(group: GroupResult, region: RegionResult) -> str:
    if group in region.chosen:
        return "fused"
    if group.fused is None or not group.fused.verified:
        return "refused"
    return "apart"


def group_rows(plan: FusionPlan) -> list[dict[str, object]]:
    """One row per candidate group, one run's figures and the count."""
    found = []
    for region in plan.regions:
        for group in region.groups:
            c, f = group.candidate, group.fused
            found.append(
                {
                    "group": c.name,
                    "kind": c.kind,
                    "operations": list(c.operations),
                    "kept_on_chip": list(c.intermediates),
                    "computes": c.group.describe(),
                    "count": c.count,
                    "block": c.block,
                    "status": _status(group, region),
                    "refused": group.refused or None,
                    "apart_cycles": group.apart_cycles,
                    "apart_energy_pj": group.apart_energy_pj,
                    "apart_dram_words": group.apart_words,
                    "fused_cycles": f.cycles if f else None,
                    "fused_energy_pj": f.energy_pj if f else None,
                    "fused_dram_words": f.dram_words if f else None,
                    "dram_words_saved": group.apart_words - f.dram_words if f else None,
                    "bound_cycles": f.bound_cycles if f else None,
                    "bound_dram_words": f.bound_words if f else None,
                    "ratio_to_bound": f.ratio_to_bound if f else None,
                    "schedule": f.schedule if f else None,
                    "points": f.points if f else None,
                    "feasible_points": f.feasible if f else None,
                    "verified": f.verified if f else None,
                    "verification": f.verification if f else None,
                }
            )
    return found


def region_rows(plan: FusionPlan) -> list[dict[str, object]]:
    return [
        {
            "operations": list(r.region.operations),
            "count": r.count,
            "choices": [
                {
                    "fuse": c.fuse,
                    "cycles": c.cycles,
                    "energy_pj": c.energy_pj,
                    "dram_words": c.dram_words,
                }
                for c in r.choices
            ],
            "chosen": [g.candidate.name for g in r.chosen],
        }
        for r in plan.regions
    ]


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def _group_line(row: dict[str, object]) -> str:
    ops = row["operations"]
    assert isinstance(ops, list)
    block = f"{row['block']}." if row["block"] else ""
    last = str(ops[-1]).removeprefix(block)
    label = f"{row['kind']} {ops[0]}..{last}"
    apart = f"{row['apart_cycles']:,}"
    if row["fused_cycles"] is None:
        return f"{_short(label, 44):<44} {row['count']:>5} {'refused':<8} {apart:>14}  {row['refused']}"
    ratio = f"{row['ratio_to_bound']:.2f}"
    label_verified = str(row["verification"]).split(" ", 1)[0].rstrip(":")
    return (
        f"{_short(label, 44):<44} {row['count']:>5} {row['status']:<8} {apart:>14} "
        f"{row['fused_cycles']:>14,} {row['dram_words_saved']:>15,} {ratio:>6}  "
        f"{row['schedule']} [{label_verified}]"
    )


def format_report(plan: FusionPlan, oracle: str, machine: str) -> str:
    """The text report."""
    graph = plan.graph
    lines = [f"{graph.name} on {oracle} ({machine}), fusion searched by {plan.objective}"]
    lines += [f"  {graph.provenance}", ""] if graph.provenance else [""]
    lines.append(
        f"{'group (one run)':<44} {'count':>5} {'choice':<8} {'cycles apart':>14} "
        f"{'cycles fused':>14} {'DRAM words saved':>15} {'/bound':>6}  schedule [verification]"
    )
    for row in group_rows(plan):
        lines.append(_group_line(row))
    t = plan.totals()
    speedup = t["apart_cycles"] / t["fused_cycles"] if t["fused_cycles"] else float("nan")
    lines += [
        "",
        f"apart: {t['apart_cycles']:,.0f} cycles, {t['apart_energy_pj'] / 1e6:,.1f} uJ, "
        f"{t['apart_dram_words']:,.0f} DRAM words",
        f"fused: {t['fused_cycles']:,.0f} cycles, {t['fused_energy_pj'] / 1e6:,.1f} uJ, "
        f"{t['fused_dram_words']:,.0f} DRAM words ({speedup:.3f}x fewer cycles, "
        f"{t['apart_dram_words'] - t['fused_dram_words']:,.0f} DRAM words saved)",
    ]
    chosen = sum(len(r.chosen) for r in plan.regions)
    lines.append(f"groups fused: {chosen} of {sum(len(r.groups) for r in plan.regions)} found")
    return "\n".join(lines)
