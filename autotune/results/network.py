"""A network's end-to-end report on one oracle: every operation of its graph timed (or named
as untimed), per operation and per block (layer), with cycles, share of the total, energy, DRAM
traffic and, where the oracle proves one (its products), the ratio to a lower bound; the non-GEMM share; a stacked bar chart per block by kind of operation.

An operation's total is its count (runs per network step) times one run. Views and shape
arithmetic are free. An oracle with the Operations capability times the rest; a tune run's
winners (`tuned`) time the products whose shapes it tuned, so an oracle that times GEMMs only
gives a report too, its other operations untimed. An operation the oracle cannot time is listed by name with its tensor
sizes and left out of the totals, which say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from autotune.oracles.operations import Operations, OperationTime, is_free, timed_by
from workloads.graph import Graph, Operation

CHART_BLOCKS = 40  # blocks drawn; repeated blocks are drawn once (their count applied)


@dataclass(frozen=True)
class Timed:
    """One operation and one run's timing (None: untimed)."""

    operation: Operation
    time: OperationTime | None

    @property
    def cycles(self) -> float:
        return self.operation.count * self.time.cycles if self.time else 0.0

    @property
    def energy_pj(self) -> float:
        if self.time is None or self.time.energy_pj is None:
            return 0.0
        return self.operation.count * self.time.energy_pj

    @property
    def dram_words(self) -> float:
        return self.operation.count * self.time.dram_words if self.time else 0.0


Tuned = Mapping[tuple[int, int, int], OperationTime]
FREE = OperationTime(0, 0.0, 0, "view", "free: no word moves")
CACHE_READ = OperationTime(0, 0.0, 0, "view", "free: the attention products load the cache")


def time_graph(graph: Graph, oracle: Any, machine: Any, tuned: Tuned | None = None) -> list[Timed]:
    """Every operation timed by `oracle` (its Operations capability) or untimed; a product
    whose shape a tune run found a schedule for takes that run's winner (`tuned`)."""
    capable = oracle.capability(Operations)
    found = []
    for op in graph.operations:
        if op.family == "product" and tuned and op.dims[-3:] in tuned:
            found.append(Timed(op, _runs(op, tuned[op.dims[-3:]])))  # type: ignore[index]
        elif is_free(op):
            found.append(Timed(op, FREE if op.kind != "kv_read" else CACHE_READ))
        elif capable is not None and timed_by(oracle, op):
            found.append(Timed(op, capable.time_operation(op, machine)))
        else:
            found.append(Timed(op, None))
    return found


def _runs(op: Operation, one: OperationTime) -> OperationTime:
    """One product's timing for a batched product's or grouped convolution's products."""
    runs = 1 if op.kind == "gemm" else op.dims[0]
    return OperationTime(
        runs * one.cycles,
        None if one.energy_pj is None else runs * one.energy_pj,
        runs * one.dram_words,
        one.schedule,
        one.method,
        None if one.bound_cycles is None else runs * one.bound_cycles,
    )


def tuned_products(frame: Any) -> dict[tuple[int, int, int], OperationTime]:
    """A tune run's winners by shape, from its per-layer summary (workload.parquet)."""
    found: dict[tuple[int, int, int], OperationTime] = {}
    for row in frame.to_dict("records"):
        cycles = row.get("cycles")
        if cycles is None or cycles != cycles or not row.get("feasible", True):
            continue  # no feasible schedule found
        shape = (int(row["m"]), int(row["k"]), int(row["n"]))
        energy = row.get("energy_pj")
        tile = int(row.get("T") or 0)
        words = int(row.get("tiles_moved") or 0) * tile * tile  # GA-1's tiles
        dram = row.get("dram_words")  # an oracle that counts its DRAM words
        if dram is not None and dram == dram:
            words = int(dram)
        bound = row.get("bound_cycles")
        how = "tuned, verified" if row.get("verified") is True else "tuned, unverified"
        found[shape] = OperationTime(
            int(cycles),
            None if energy is None or energy != energy else float(energy),
            words,
            f"{row.get('family')}: {row.get('study')}",
            how,
            None if bound is None or bound != bound else int(bound),
        )
    return found


def _share(part: float, total: float) -> float:
    return part / total if total > 0 else 0.0


def operation_rows(rows: list[Timed]) -> list[dict[str, object]]:
    total = sum(r.cycles for r in rows)
    found = []
    for r in rows:
        op, t = r.operation, r.time
        found.append(
            {
                "name": op.name,
                "kind": op.kind,
                "block": op.block,
                "dims": list(op.dims),
                "count": op.count,
                "macs": op.macs,
                "elements": op.elements,
                "layers": list(op.layers),
                "timed": t is not None,
                "cycles": t.cycles if t else None,
                "total_cycles": r.cycles if t else None,
                "share": _share(r.cycles, total) if t else None,
                "energy_pj": r.energy_pj if t else None,
                "dram_words": r.dram_words if t else None,
                "bound_cycles": t.bound_cycles if t else None,
                "ratio_to_bound": t.cycles / t.bound_cycles if t and t.bound_cycles else None,
                "schedule": t.schedule if t else None,
                "method": t.method if t else "untimed",
            }
        )
    return found


def block_rows(rows: list[Timed]) -> list[dict[str, object]]:
    """Per block, in order of first appearance: cycles, share, energy, cycles by kind."""
    total = sum(r.cycles for r in rows)
    blocks: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = blocks.setdefault(
            r.operation.block or "(network)",
            {"count": r.operation.count, "cycles": 0.0, "energy_pj": 0.0, "by_kind": {}},
        )
        entry["cycles"] += r.cycles
        entry["energy_pj"] += r.energy_pj
        if r.cycles:
            kinds = entry["by_kind"]
            kinds[r.operation.kind] = kinds.get(r.operation.kind, 0.0) + r.cycles
    return [
        {"block": name, **entry, "share": _share(entry["cycles"], total)}
        for name, entry in blocks.items()
    ]


def summary(graph: Graph, rows: list[Timed]) -> dict[str, object]:
    total = sum(r.cycles for r in rows)
    products = sum(r.cycles for r in rows if r.operation.family == "product")
    untimed = [r.operation for r in rows if r.time is None]
    return {
        "network": graph.name,
        "provenance": graph.provenance,
        "total_cycles": total,
        "gemm_cycles": products,
        "non_gemm_share": _share(total - products, total),
        "energy_pj": sum(r.energy_pj for r in rows),
        "dram_words": sum(r.dram_words for r in rows),
        "untimed": [
            {
                "name": op.name,
                "kind": op.kind,
                "source": op.source,
                "count": op.count,
                "tensors": {t: list(graph.tensors[t].shape) for t in (*op.inputs, *op.outputs)},
            }
            for op in untimed
        ],
    }


def format_report(graph: Graph, rows: list[Timed], oracle: str, machine: str) -> str:
    head = summary(graph, rows)
    lines = [f"{graph.name} on {oracle} ({machine})"]
    lines += [f"  {graph.provenance}", ""] if graph.provenance else [""]
    lines.append(
        f"{'operation':<34} {'kind':<10} {'dims':<18} {'count':>5} {'cycles/run':>12} "
        f"{'share':>7} {'uJ, all':>10} {'DRAM words':>14}  schedule"
    )
    for row in operation_rows(rows):
        free = row["timed"] and not row["total_cycles"] and str(row["method"]).startswith("free")
        if free and row["kind"] != "kv_read":  # the cache read is the products' loads: shown
            continue
        dims = "x".join(map(str, row["dims"]))  # type: ignore[call-overload]
        if not row["timed"]:
            cycles, share, energy, words, how = "untimed", "", "", "", ""
        else:
            cycles = f"{row['cycles']:,}"
            share = f"{row['share']:.1%}"
            energy = f"{row['energy_pj'] / 1e6:,.2f}"  # type: ignore[operator]
            words = f"{row['dram_words']:,.0f}"
            how = str(row["schedule"])
            if row["ratio_to_bound"] is not None:
                how += f" ({row['ratio_to_bound']:.2f}x bound)"
            if row["method"] != "exact":
                how += f" [{row['method']}]"
        lines.append(
            f"{str(row['name'])[:34]:<34} {row['kind']:<10} {dims[:18]:<18} "
            f"{row['count']:>5} {cycles:>12} {share:>7} {energy:>10} {words:>14}  {how}"
        )
    lines += ["", f"{'block':<24} {'count':>5} {'cycles':>16} {'share':>7}  by kind"]
    for block in block_rows(rows):
        kinds = ", ".join(
            f"{k} {_share(v, block['cycles']):.0%}"  # type: ignore[arg-type]
            for k, v in sorted(block["by_kind"].items(), key=lambda kv: -kv[1])  # type: ignore[attr-defined]
        )
        lines.append(
            f"{str(block['block'])[:24]:<24} {block['count']:>5} {block['cycles']:>16,.0f} "
            f"{block['share']:>7.1%}  {kinds}"
        )
    lines += [
        "",
        f"total: {head['total_cycles']:,.0f} cycles, {head['energy_pj'] / 1e6:,.1f} uJ, "  # type: ignore[operator]
        f"{head['dram_words']:,.0f} DRAM words; non-GEMM share of cycles "
        f"{head['non_gemm_share']:.1%}",
    ]
    untimed = head["untimed"]
    if untimed:
        names = ", ".join(f"{u['name']} ({u['source'] or u['kind']})" for u in untimed)  # type: ignore[attr-defined]
        lines.append(f"untimed ({len(untimed)}, not in the total): {names}")  # type: ignore[arg-type]
    else:
        lines.append("untimed: none (every operation timed)")
    return "\n".join(lines)


def chart_png(rows: list[Timed], title: str, path: Path) -> Path:
    """One stacked bar per block (its count applied): cycles by kind of operation."""
    from autotune.results.plots import _pyplot, _save

    plt = _pyplot()
    blocks = block_rows(rows)[:CHART_BLOCKS]
    kinds = sorted({k for b in blocks for k in b["by_kind"]})  # type: ignore[attr-defined]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.5 * len(blocks) + 3), 5))
    bottom = [0.0] * len(blocks)
    colors = plt.get_cmap("tab20")
    for index, kind in enumerate(kinds):
        heights = [b["by_kind"].get(kind, 0.0) for b in blocks]  # type: ignore[attr-defined]
        ax.bar(range(len(blocks)), heights, bottom=bottom, label=kind, color=colors(index % 20))
        bottom = [b + h for b, h in zip(bottom, heights)]
    labels = [f"{b['block']} x{b['count']}" if b["count"] != 1 else str(b["block"]) for b in blocks]
    ax.set_xticks(range(len(blocks)), labels, rotation=60, ha="right")
    ax.set_ylabel("cycles (count applied)")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title)
    return _save(fig, plt, path)


def rates(rows: list[Timed], clock_hz: float, tokens: int | None) -> dict[str, object]:
    """The run at a clock: its seconds, and with the tokens one run produces, tokens per second
    and joules per token (untimed operations left out, as in the totals). `kv_cache_words`: the
    KV cache the run reads, part of the attention products' DRAM traffic."""
    cycles = sum(r.cycles for r in rows)
    joules = sum(r.energy_pj for r in rows) * 1e-12
    seconds = cycles / clock_hz
    cache = sum(
        r.operation.count * r.operation.elements for r in rows if r.operation.kind == "kv_read"
    )
    found: dict[str, object] = {
        "clock_hz": clock_hz,
        "seconds": seconds,
        "joules": joules,
        "kv_cache_words": cache,
        "tokens": tokens,
        "tokens_per_second": None,
        "joules_per_token": None,
        "seconds_per_token": None,
    }
    if tokens:
        found["tokens_per_second"] = tokens / seconds if seconds > 0 else None
        found["joules_per_token"] = joules / tokens
        found["seconds_per_token"] = seconds / tokens
    return found


def format_rates(found: Mapping[str, Any]) -> str:
    clock = float(found["clock_hz"])
    line = f"at {clock / 1e9:g} GHz: {float(found['seconds']) * 1e3:,.3f} ms, {float(found['joules']):,.4g} J a run"
    if found["tokens"]:
        line += (
            f"; {found['tokens']} token(s) a run: {float(found['tokens_per_second']):,.4g} "
            f"tokens/s, {float(found['joules_per_token']):.4g} J/token, "
            f"{float(found['seconds_per_token']) * 1e3:,.4g} ms/token"
        )
    if found["kv_cache_words"]:
        line += (
            f"\nKV cache read a run: {float(found['kv_cache_words']):,.0f} words (in the "
            "attention products' DRAM traffic above)"
        )
    return line
