"""The tables benchmarks/scale/bench_scale.py prints, and its goal table: each goal's measured value
beside the goal, met or missed, from one run's figures."""

from __future__ import annotations

Row = dict[str, object]
LLM_RUN = "4096x4096x11008"
BIG_RUN = "16384x16384x16384"


def print_scale(rows: list[Row]) -> None:
    print(
        f"{'shape':>18} {'tile products':>14} {'simulated':>10} {'signatures':>10} "
        f"{'jumps (bands, blocks, steps)':>28} {'periodic ms':>11} {'full ms':>9}"
    )
    for row in rows:
        full = f"{row['full_ms']:9.1f}" if row["full_ms"] is not None else f"{'-':>9}"
        print(
            f"{row['shape']:>18} {row['products']:>14.3e} {row['simulated']:>10} "
            f"{row['signatures']:>10} {row['jumps']!s:>28} {row['ms']:>11.2f} {full}"
        )


def print_differential(found: Row) -> None:
    print(
        f"differential: {found['cases']} random cases up to 1024 a side, "
        f"{found['differences']} differences, {found['fallbacks']} timed in full "
        f"({found['fallback_rate']:.1%}); CPU {found['periodic_seconds']:.1f} s periodic, "
        f"{found['full_seconds']:.1f} s full"
    )
    for name, counts in sorted(found["by_family"].items()):  # type: ignore[attr-defined]
        print(f"  {name:>18}: {counts}")
    for example in found["examples"]:  # type: ignore[attr-defined]
        print("  DIFFERENCE", example)


def print_runs(runs: list[Row]) -> None:
    print(
        f"{'default run':>18} {'trials':>6} {'wall s':>7} {'CPU s':>7} {'peak MiB':>8} {'best cycles':>14} "
        f"{'lower bound':>14} {'/bound':>7} {'verified':>9} {'timing':>9}  plot"
    )
    for run in runs:
        tune = run["tune"]
        if "error" in run:
            print(f"{run['shape']:>18} FAILED (exit {tune['returncode']}): {tune['output'][-3:]}")  # type: ignore[index]
            continue
        plot = run["plot"]
        print(
            f"{run['shape']:>18} {run['convergence']['trials']:>6} {tune['wall_s']:>7.1f} {tune['cpu_s']:>7.1f} "  # type: ignore[index]
            f"{tune['peak_rss_mb']:>8.0f} {run['cycles']:>14,} {run['lower_bound']:>14,} "  # type: ignore[index]
            f"{run['ratio_to_bound']:>7.4f} {run['verification']:>9} {run['timing']:>9}  "
            f"exit {plot['returncode']}, {', '.join(run['plots_written']) or 'none'}"  # type: ignore[index, arg-type]
        )
    for run in runs:
        timed = run.get("convergence", {}).get("timed", {})  # type: ignore[union-attr]
        spent = ", ".join(f"{m} {n} ({s:.0f} s)" for m, (n, s) in sorted(timed.items()))
        print(f"{run['shape']:>18} trials timed: {spent}")
    for run in runs:
        for line in run.get("plot", {}).get("output", []):  # type: ignore[union-attr]
            if line.startswith("skipped"):
                print(f"{run['shape']:>18} plot: {line}")
    print(
        f"{'convergence':>18} "
        + " ".join(f"{'@' + str(n):>7}" for n in (10, 50, 100, 200, 300, 500, 1000))
    )
    for run in runs:
        at = run.get("convergence", {}).get("at", {})  # type: ignore[union-attr]
        print(f"{run['shape']:>18} " + " ".join(f"{at[n]:>7.4f}" for n in sorted(at)))


def print_zigzag(runs: list[Row]) -> None:
    print(
        f"{'ZigZag layer':>18} {'search CPU s':>12} {'wall s':>7} {'mappings':>8} "
        f"{'ms/mapping':>10} {'one mapping ms':>14} {'ours/ZigZag wall':>16} {'CPU':>6}"
    )
    for run in runs:
        zz = run.get("zigzag", {})
        if not zz.get("installed"):  # type: ignore[union-attr]
            print(f"{run['shape']:>18} not measured: {zz.get('reason')}")  # type: ignore[union-attr]
            continue
        search, one = zz["search"], zz["one"]  # type: ignore[index]
        print(
            f"{run['shape']:>18} {search['cpu_s']:>12.2f} {search['wall_s']:>7.2f} "
            f"{search['mappings']:>8} {search['cost_model_ms_per_mapping']:>10.2f} "
            f"{one['cost_model_ms_per_mapping']:>14.2f} {zz['wall_ratio']:>16.1f} "  # type: ignore[index]
            f"{zz['cpu_ratio']:>6.1f}"  # type: ignore[index]
        )


def print_bounds(rows: list[Row]) -> None:
    print(
        f"{'bound check':>18} {'slots':>5} {'lower bound':>12} {'bound ms':>8} "
        f"{'cycles full':>12} {'periodic':>12} {'full s':>7} {'periodic ms':>11} holds"
    )
    for row in rows:
        print(
            f"{row['shape']:>18} {row['slots']:>5} {row['lower_bound']:>12,} "
            f"{row['bound_ms']:>8.2f} {row['cycles_full']:>12,} {row['cycles_periodic']:>12,} "
            f"{row['full_s']:>7.2f} {row['periodic_ms']:>11.2f} {row['bound_holds']}"
        )


def attach_zigzag_ratios(runs: list[Row]) -> None:
    """Our tuned run's time over ZigZag's per-layer search, in wall and in CPU time."""
    for run in runs:
        zz = run.get("zigzag")
        if isinstance(zz, dict) and zz.get("installed") and "tune" in run:
            zz["wall_ratio"] = run["tune"]["wall_s"] / zz["search"]["wall_s"]  # type: ignore[index]
            zz["cpu_ratio"] = run["tune"]["cpu_s"] / zz["search"]["cpu_s"]  # type: ignore[index]


def goal(measure: str, measured: str, target: str, met: bool | None) -> Row:
    return {"measure": measure, "measured": measured, "goal": target, "met": met}


def goal_rows(report: Row) -> list[Row]:
    """Every goal of the scale table that this run measured."""
    rows: list[Row] = []
    scale = {str(r["shape"]): r for r in report.get("scale", [])}  # type: ignore[attr-defined]
    runs = {str(r["shape"]): r for r in report.get("runs", [])}  # type: ignore[attr-defined]
    for shape, limit in (("4096x4096x4096", 5.0), (LLM_RUN, 5.0), (BIG_RUN, 10.0)):
        if shape in scale:
            ms = float(scale[shape]["ms"])  # type: ignore[arg-type]
            rows.append(
                goal(f"one evaluation, {shape}", f"{ms:.2f} ms", f"<= {limit:g} ms", ms <= limit)
            )
    zz = runs.get(LLM_RUN, {}).get("zigzag", {})  # type: ignore[union-attr]
    if LLM_RUN in scale and zz.get("installed"):  # type: ignore[union-attr]
        theirs = float(zz["one"]["cost_model_ms_per_mapping"])  # type: ignore[index]
        ratio = float(scale[LLM_RUN]["ms"]) / theirs  # type: ignore[arg-type]
        rows.append(
            goal(
                f"one evaluation {LLM_RUN} / ZigZag one mapping ({theirs:.2f} ms)",
                f"{ratio:.2f}x",
                "<= 2x",
                ratio <= 2,
            )
        )
    if "growth" in report:
        growth = float(report["growth"])  # type: ignore[arg-type]
        rows.append(
            goal(
                f"evaluation time growth, {report['scale'][0]['shape']} to "  # type: ignore[index]
                f"{report['scale'][-1]['shape']}",  # type: ignore[index]
                f"{growth:.2f}x",
                "<= 4x",
                growth <= 4,
            )
        )
    rows += _run_goals(runs)
    found = report.get("differential")
    if isinstance(found, dict):
        rows.append(
            goal(
                "periodic vs full, random cases <= 1024^3",
                f"{found['cases']} cases, {found['differences']} differences",
                ">= 2000 cases, 0 differences",
                found["cases"] >= 2000 and found["differences"] == 0,
            )
        )
    for row in report.get("bounds", []):  # type: ignore[attr-defined]
        rows.append(
            goal(
                f"lower_bound <= cycles, {row['shape']} at {row['slots']} slots",
                f"{row['lower_bound']:,} <= {row['cycles_full']:,}, {row['bound_ms']:.1f} ms",
                "holds, in milliseconds",
                bool(row["bound_holds"] and row["methods_agree"]) and row["bound_ms"] < 1000,
            )
        )
    return rows


def _run_goals(runs: dict[str, Row]) -> list[Row]:
    llm = runs.get(LLM_RUN)
    rows = _llm_goals(llm) if llm and "error" not in llm else []
    rows += _zigzag_goals(runs)
    big = runs.get(BIG_RUN)
    if big and "tune" in big:
        mib = float(big["tune"]["peak_rss_mb"])  # type: ignore[index]
        rows.append(
            goal(
                f"peak memory, default run {BIG_RUN}",
                f"{mib:.0f} MiB",
                "<= 1 GiB",
                mib <= 1024 and "error" not in big,
            )
        )
    return rows


def _llm_goals(llm: Row) -> list[Row]:
    """The goals of the LLaMA-7B feed-forward layer's default run."""
    rows: list[Row] = []
    wall = float(llm["tune"]["wall_s"])  # type: ignore[index]
    ratio = float(llm["ratio_to_bound"])  # type: ignore[arg-type]
    rows.append(
        goal(
            f"default run {LLM_RUN}: wall",
            f"{wall:.1f} s (CPU {llm['tune']['cpu_s']:.1f} s)",
            "<= 60 s",
            wall <= 60,
        )
    )  # type: ignore[index]
    rows.append(
        goal(f"default run {LLM_RUN}: best / bound", f"{ratio:.4f}", "<= 1.01", ratio <= 1.01)
    )
    rows.append(
        goal(
            f"default run {LLM_RUN}: winner",
            str(llm["verification"]),
            "scaled (verified-reduced)",
            llm["verification"] == "scaled",
        )
    )
    written = "history.png" in llm["plots_written"]  # type: ignore[operator]
    rows.append(
        goal(
            f"default run {LLM_RUN}: leaderboard and plots",
            ", ".join(["leaderboard.parquet", *llm["plots_written"]]),
            "written",
            written,
        )
    )  # type: ignore[list-item]
    return rows


def _zigzag_goals(runs: dict[str, Row]) -> list[Row]:
    rows: list[Row] = []
    for shape, run in runs.items():
        zz = run.get("zigzag", {})
        if isinstance(zz, dict) and zz.get("installed") and "wall_ratio" in zz:
            ratio = float(zz["wall_ratio"])
            rows.append(
                goal(
                    f"tuned run / ZigZag search, {shape}",
                    f"{ratio:.1f}x wall, {zz['cpu_ratio']:.1f}x CPU, "
                    f"{run.get('convergence', {}).get('trials')} trials",  # type: ignore[union-attr]
                    "<= 30x",
                    ratio <= 30,
                )
            )
        elif isinstance(zz, dict) and zz:
            rows.append(
                goal(
                    f"tuned run / ZigZag search, {shape}",
                    f"not measured: {zz.get('reason')}",
                    "<= 30x",
                    None,
                )
            )
    return rows


def print_goals(rows: list[Row]) -> None:
    print(f"{'measure':<62} {'measured':<40} {'goal':<26} verdict")
    for row in rows:
        verdict = {True: "met", False: "MISSED", None: "-"}[row["met"]]  # type: ignore[index]
        print(f"{row['measure']:<62} {row['measured']!s:<40} {row['goal']!s:<26} {verdict}")
