"""A workload run's summary: each GEMM's winner from its shape's study, weighted, with the
per-layer report's columns (results/<run>/workload.parquet) and its bar chart (report.png)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from autotune.results import leaderboard as board
from autotune.results import report, tables
from autotune.results.owner import claim, storage_key
from autotune.run.plan import RunPlan
from autotune.storage.names import study_folder

if TYPE_CHECKING:
    from autotune.run.jobs import StudyOutcome


def summarise(
    plan: RunPlan,
    name: str,
    outcomes: list[StudyOutcome],
    results: Path | None,
    storage: str | None = None,
) -> tuple[pd.DataFrame, dict[str, object], list[Path]]:
    """A workload tuned GEMM by GEMM: each GEMM's winner, weighted, and the per-layer report
    (results/<run>/workload.parquet and report.png). GEMMs of one shape share one study."""
    by_shape = {o.gemm.shape: o for o in outcomes if o.gemm is not None}
    oracle, rows = plan.the_oracle(), []
    for gemm in plan.workload.gemms:
        if gemm.shape not in by_shape:
            continue  # interrupted before its study ran
        outcome = by_shape[gemm.shape]
        frame = outcome.frame
        top = (
            board.json_rows(frame.head(1))[0]
            if not frame.empty and bool(frame["feasible"].iloc[0])
            else {}
        )
        shape, cycles = gemm.shape, top.get("cycles")
        rows.append(
            {
                "name": gemm.name,
                "shape": str(shape),
                "m": shape.m,
                "k": shape.k,
                "n": shape.n,
                **top,
                "gemm": gemm.name,
                "weight": gemm.weight,
                "weighted_cycles": gemm.weight * cycles if cycles is not None else None,  # type: ignore[operator]
                "bound_cycles": oracle.bound(shape, plan.machine),
                "layers": ", ".join(gemm.layers) or None,
                "schedule": top.get("params_json"),
                "study": outcome.name,
                "trials": outcome.trials,
            }
        )
    frame = report.with_report_columns(tables.typed(pd.DataFrame(rows)))
    total = float(frame["weighted_cycles"].sum()) if "weighted_cycles" in frame else 0.0
    chapter = (
        float((frame["weight"] * frame["chapter_best_cycles"].astype("Float64")).sum())
        if "chapter_best_cycles" in frame
        else 0.0
    )
    metadata = {
        "study": name,
        "workload": plan.workload.name,
        "oracle": plan.oracle,
        "machine": plan.machine.as_dict(),
        "base_machine": plan.machine.as_dict(),
        "objectives": list(plan.objectives),
        "gemms": len(plan.workload.gemms),  # the workload's; fewer rows: an interrupted run
        "weighted_cycles": total,
        "chapter_weighted_cycles": chapter,
        "unverified": not all(o.verified for o in outcomes),
        **tables.workload_costs(frame),
        **plan.costing_metadata(),
    }
    if results is None:
        return frame, metadata, []
    folder = study_folder(results, name)
    if storage is not None:
        claim(folder, storage, lambda: 0)
        metadata["storage"] = storage_key(storage, results)
    paths = [tables.write("workload", frame, folder / "workload.parquet", metadata)]
    if bool(frame["share"].notna().any()):
        paths.append(report.chart(frame, metadata, folder / "report.png"))
    return frame, metadata, paths
