"""A network's fusion, searched: every operation timed apart (the network report,
autotune.results.network), every fusible group of the graph (workloads.fusion_groups) timed
fused at its best schedule by the oracle's `Fusion` capability, and for each region of
overlapping groups the choice of which edges fuse (search_spaces.fusion) that is best by the
objective: the fewest cycles (then DRAM words, then energy) by default, or the least energy, or
the fewest DRAM words. Each group's schedule is the best by the same objective. A group that does not fit the machine, or whose
verification fails, is never chosen; the report says why.

"Apart" is the network report's timing of each operation, a product taking the better of its
own schedule and the epilogue kind's plain product (the same engine with no step fused), so that
a group's saving is fusion's. The network's fused schedule is each region's best choice plus every operation outside the
regions as it runs apart. Totals apply each operation's count (runs per network step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune.oracles.fusion import OBJECTIVES, FusedTime, Fusion, FusionRefused, rank
from autotune.oracles.operations import OperationTime
from autotune.results.network import Timed, time_graph
from search_spaces.fusion import fuse_param
from simcore.fusion.groups import EpilogueGemm, FusedGroup
from workloads.fusion_groups import KINDS, Candidate, Region, regions
from workloads.graph import Graph


@dataclass(frozen=True)
class GroupResult:
    """One candidate: fused (None when refused, `refused` says why) and its operations apart."""

    candidate: Candidate
    fused: FusedTime | None
    refused: str
    apart_cycles: int
    apart_energy_pj: float
    apart_words: int

    @property
    def usable(self) -> bool:
        return self.fused is not None and self.fused.verified

    def saved(self) -> tuple[int, float, int]:
        """Cycles, energy and DRAM words one run saves fused (negative: fused costs more)."""
        f = self.fused
        if f is None:
            return 0, 0.0, 0
        energy = self.apart_energy_pj - (f.energy_pj or 0.0)
        return self.apart_cycles - f.cycles, energy, self.apart_words - f.dram_words


@dataclass(frozen=True)
class Choice:
    """One choice of a region (one run): which edges fuse and what the region then costs."""

    fuse: str
    cycles: int
    energy_pj: float
    dram_words: int


@dataclass(frozen=True)
class RegionResult:
    """A region: its groups, every feasible choice (one run), the best choice's groups."""

    region: Region
    groups: tuple[GroupResult, ...]
    choices: tuple[Choice, ...]  # the feasible ones, in declaration order
    chosen: tuple[GroupResult, ...]

    @property
    def count(self) -> float:
        return self.region.candidates[0].count


@dataclass(frozen=True)
class FusionPlan:
    """The network apart (`rows`) and fused where it wins (`regions`' choices)."""

    graph: Graph
    rows: tuple[Timed, ...]
    regions: tuple[RegionResult, ...]
    objective: str = "cycles"

    def _apart(self, names: set[str]) -> tuple[float, float, float]:
        rows = [r for r in self.rows if r.operation.name in names]
        return (
            sum(r.cycles for r in rows),
            sum(r.energy_pj for r in rows),
            sum(r.dram_words for r in rows),
        )

    def totals(self, block: str | None = None) -> dict[str, float]:
        """Cycles, energy and DRAM words of the network (or of one block's operations) apart
        and fused, counts applied."""
        inside = {
            r.operation.name for r in self.rows if block is None or r.operation.block == block
        }
        cycles, energy, words = self._apart(inside)
        fused_cycles, fused_energy, fused_words = cycles, energy, words
        for region in self.regions:
            if region.region.operations[0] not in inside:
                continue
            for group in region.chosen:
                assert group.fused is not None
                n = region.count
                fused_cycles += n * (group.fused.cycles - group.apart_cycles)
                fused_energy += n * ((group.fused.energy_pj or 0.0) - group.apart_energy_pj)
                fused_words += n * (group.fused.dram_words - group.apart_words)
        return {
            "apart_cycles": cycles,
            "apart_energy_pj": energy,
            "apart_dram_words": words,
            "fused_cycles": fused_cycles,
            "fused_energy_pj": fused_energy,
            "fused_dram_words": fused_words,
        }


@dataclass(frozen=True)
class _Search:
    capable: Fusion
    machine: Any
    objective: str

    def fused(self, group: FusedGroup) -> FusedTime:
        return self.capable.time_fused(group, self.machine, self.objective)


def _group(candidate: Candidate, by_name: dict[str, Timed], how: _Search) -> GroupResult:
    parts = [by_name[name] for name in candidate.operations]
    untimed = [p.operation.name for p in parts if p.time is None]
    apart = (
        sum(p.time.cycles for p in parts if p.time),
        sum(p.time.energy_pj or 0.0 for p in parts if p.time),
        sum(p.time.dram_words for p in parts if p.time),
    )
    if untimed:
        return GroupResult(candidate, None, f"{untimed[0]} is untimed apart", *apart)
    try:
        fused = how.fused(candidate.group)
    except FusionRefused as exc:
        return GroupResult(candidate, None, str(exc), *apart)
    refused = "" if fused.verified else f"verification {fused.verification}"
    return GroupResult(candidate, fused, refused, *apart)


def _region(region: Region, by_name: dict[str, Timed], how: _Search) -> RegionResult:
    groups = {c: _group(c, by_name, how) for c in region.candidates}
    apart = [by_name[name].time for name in region.operations]
    base = (
        sum(t.cycles for t in apart if t),
        sum(t.energy_pj or 0.0 for t in apart if t),
        sum(t.dram_words for t in apart if t),
    )
    found = []
    choices = region.choices()
    labels = fuse_param(choices).domain.values()
    for label, chosen in zip(labels, choices):
        results = tuple(groups[c] for c in chosen)
        if not all(g.usable for g in results):
            continue
        cycles, energy, words = (base[i] - sum(g.saved()[i] for g in results) for i in range(3))
        key = rank(how.objective, cycles, energy, words)
        found.append((key, Choice(str(label), int(cycles), energy, int(words)), results))
    best = min(found, key=lambda f: f[0])  # the empty choice is always there
    return RegionResult(region, tuple(groups.values()), tuple(f[1] for f in found), best[2])


def _best_apart(row: Timed, how: _Search) -> Timed:
    """A product at the better (by the objective) of its schedule apart and the epilogue kind's
    plain product (no step fused): a group's saving is then fusion's alone, not a better product
    schedule's."""
    op, time = row.operation, row.time
    if time is None or op.kind not in ("gemm", "matmul"):
        return row
    if "epilogue" not in how.capable.fusion_kinds:
        return row
    batch, m, k, n = (1, *op.dims) if op.kind == "gemm" else op.dims
    try:
        plain = how.fused(EpilogueGemm(m, k, n, (), batch))
    except FusionRefused:
        return row
    mine = rank(how.objective, plain.cycles, plain.energy_pj or 0.0, plain.dram_words)
    theirs = rank(how.objective, time.cycles, time.energy_pj or 0.0, time.dram_words)
    if not plain.verified or mine >= theirs:
        return row
    better = OperationTime(
        plain.cycles,
        plain.energy_pj,
        plain.dram_words,
        f"plain product: {plain.schedule}",
        "exact",
        time.bound_cycles,
    )
    return Timed(op, better)


def search(
    graph: Graph,
    oracle: Any,
    machine: Any,
    kinds: tuple[str, ...] = KINDS,
    objective: str = "cycles",
) -> FusionPlan:
    """The network's fusion searched on `oracle` by `objective` (cycles, energy or dram_words;
    module doc). ValueError for an oracle without the Fusion capability or an unknown
    objective."""
    capable = oracle.capability(Fusion)
    if capable is None:
        raise ValueError(f"oracle {oracle.name!r} does not time fused groups")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    how = _Search(capable, machine, objective)
    rows = [_best_apart(row, how) for row in time_graph(graph, oracle, machine)]
    by_name = {r.operation.name: r for r in rows}
    kinds = tuple(k for k in kinds if k in capable.fusion_kinds)
    found = tuple(_region(r, by_name, how) for r in regions(graph, kinds))
    return FusionPlan(graph, tuple(rows), found, objective)
