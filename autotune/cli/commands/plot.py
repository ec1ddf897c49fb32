"""`autotune plot`: PNG pictures of a study: optimisation history, Pareto front(s), and the
engine timeline of one leaderboard entry (for families that have one)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from autotune import oracles
from autotune.cli.args import add_source, positive_int
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, check_work
from autotune.errors import AutotuneError
from simcore.shape import Shape

if TYPE_CHECKING:  # pandas, matplotlib, Optuna and numba load when the command runs
    import pandas as pd

    from autotune.oracles import Oracle

HELP = (
    "draw a study's optimisation history, Pareto front and an entry's engine timeline as PNG files "
    "(a workload run: its per-layer bars)"
)
ZOOM_CYCLES = 1500


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "plot",
        help=HELP,
        description=HELP + " (history.png, pareto.png, timeline_rank<N>.png; report.png).",
    )
    add_source(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default plots/ beside the leaderboard, results/<study>/plots/: "
        "autotune's own pictures there are redrawn each time)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace pictures that exist in the --out folder, or files autotune did not draw",
    )
    parser.add_argument(
        "--rank",
        type=positive_int,
        default=1,
        help="leaderboard entry whose timeline to draw (default 1)",
    )
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from autotune.run import load

    loaded = load.load(args.path_or_study, args.results, args.storage)
    frame, metadata, path = loaded.frame, loaded.metadata, loaded.path
    if metadata.get("kind") == "workload":
        out = args.out or path.parent / "plots"
        check_pictures(out, ["report.png"], args.force, given=args.out is not None)
        return layers(frame, metadata, out)
    if metadata.get("kind") not in ("leaderboard", "pareto") or frame.empty:
        raise UsageError(f"{path} is not a non-empty autotune leaderboard")
    if args.rank > len(frame):
        raise UsageError(
            f"rank {args.rank} is past the end of the leaderboard ({len(frame)} entries)"
        )
    out = args.out or path.parent / "plots"
    names = ["history.png", f"timeline_rank{args.rank}.png"]
    names += ["pareto.png"] if len(metadata.get("objectives", [])) > 1 else []  # type: ignore[arg-type]
    check_pictures(out, names, args.force, given=args.out is not None)
    written = [history(frame, metadata, path.parent, out, args.storage)]
    front = pareto(frame, metadata, out)
    if front is not None:
        written.append(front)
    drawn = timeline(frame, args.rank, out, args, path.parent)
    written += [drawn] if isinstance(drawn, Path) else []
    for item in written:
        print(f"wrote {item}")
    if len(metadata.get("objectives", [])) > 1 and front is None:  # type: ignore[arg-type]
        print("skipped pareto.png: no feasible point to draw")
    if not isinstance(drawn, Path):
        print(f"skipped timeline_rank{args.rank}.png: {drawn}")
    return 0


def check_pictures(out: Path, names: list[str], force: bool, given: bool) -> None:
    """Refuse, before drawing, to replace what is not ours: in an --out folder any existing file
    needs --force; in the default plots/ folder autotune's own earlier pictures (told by their
    PNG mark) are redrawn, and anything else needs --force."""
    from autotune.results.files import check_output_folder
    from autotune.results.plots import drawn_by_autotune

    check_output_folder(out, names, force or not given)  # study files, devices, folders: never
    if given or force:
        return
    for name in names:
        path = out / name
        if (path.exists() or path.is_symlink()) and not drawn_by_autotune(path):
            raise UsageError(
                f"{path} exists and autotune did not draw it: replacing it needs --force"
            )


def layers(frame: pd.DataFrame, metadata: dict, out: Path) -> int:
    """A workload run's per-layer bars (share of the weighted cycles, cycles over the bound)."""
    from autotune.results import report

    frame = report.with_report_columns(frame)
    if frame.empty or not bool(frame["share"].notna().any()):
        raise UsageError(
            f"workload run {metadata.get('study')!r} has no GEMM with a feasible schedule to plot"
        )
    print(f"wrote {report.chart(frame, metadata, out / 'report.png')}")
    return 0


def _oracle(metadata: dict) -> Oracle | None:
    try:
        return oracles.get(str(metadata.get("oracle") or oracles.DEFAULT_ORACLE))
    except AutotuneError:
        return None


def _title(metadata: dict, frame: pd.DataFrame) -> str:
    oracle = _oracle(metadata)
    record = metadata.get("base_machine")
    base = oracle.machine_from_record(record) if oracle is not None and record else None
    codesign = metadata.get("variant") == "codesign"
    what = f"workload {metadata['workload']}" if codesign else f"{metadata.get('shape')}"
    machine = (
        "" if base is None or oracle is None else f", base machine {oracle.describe_machine(base)}"
    )
    searched = (
        " (machine searched)" if codesign or len(frame.drop_duplicates("machine_json")) > 1 else ""
    )
    return f"{metadata.get('study')}: {what}{machine}{searched}"


def _trial_values(
    frame: pd.DataFrame, metadata: dict, folder: Path, storage: str | None
) -> tuple[list[int], list[float]]:
    """(trial, cycles) of every feasible trial: from the study storage when it is there (every
    trial, duplicates included), else from the leaderboard (one row per distinct candidate)."""
    from autotune.search.objectives import INFEASIBLE_VALUE
    from autotune.storage import local_storage, read_study

    url = storage or local_storage(folder.parent, folder.name)
    study = read_study(url, str(metadata.get("study"))) if url and metadata.get("study") else None
    if study is not None:
        pairs = [
            (t.number, float(t.values[0]))
            for t in study.get_trials(deepcopy=False)
            if t.values and t.values[0] < INFEASIBLE_VALUE
        ]
        if pairs:
            return [p[0] for p in pairs], [p[1] for p in pairs]
    column = "total_cycles" if "total_cycles" in frame else "cycles"
    rows = frame[frame["feasible"] == True].drop_duplicates("trial").sort_values("trial")  # noqa: E712
    return [int(t) for t in rows["trial"]], [float(v) for v in rows[column]]


def history(
    frame: pd.DataFrame, metadata: dict, folder: Path, out: Path, storage: str | None = None
) -> Path:
    from autotune.results import leaderboard as board
    from autotune.results import plots

    trials, values = _trial_values(frame, metadata, folder, storage)
    if not trials:
        raise UsageError("the leaderboard has no feasible trial to plot")
    codesign = metadata.get("variant") == "codesign"
    gemms = frame.drop_duplicates("gemm") if codesign and "gemm" in frame else frame.head(1)
    shapes = [
        (Shape(int(r.m), int(r.k), int(r.n)), float(getattr(r, "weight", 1.0) if codesign else 1.0))
        for r in gemms.itertuples()
    ]
    found = (
        board.family_of(str(frame["family"].dropna().iloc[0]), oracle=_oracle(metadata))
        if frame["family"].notna().any()
        else None
    )
    oracle = found[0] if found else None
    base = oracle.machine_from_record(metadata.get("base_machine") or {}) if oracle else None
    references = []
    best = [oracle.reference(s, base) for s, _ in shapes] if oracle else []
    if best and all(best):
        label = "chapter's best, base machine" if codesign else f"chapter's best ({best[0][1]})"  # type: ignore[index]
        references.append(plots.Reference(label, sum(w * b[0] for (_, w), b in zip(shapes, best))))  # type: ignore[index]
    bounds = [oracle.bound(s, base) for s, _ in shapes] if oracle else []
    if bounds and all(b is not None for b in bounds):
        label = "lower bound, base machine" if codesign else "lower bound"
        references.append(
            plots.Reference(label, sum(w * b for (_, w), b in zip(shapes, bounds)), ":", "black")
        )  # type: ignore[misc]
    return plots.history_png(
        trials,
        values,
        references,
        _title(metadata, frame),
        out / "history.png",
        y_label="weighted cycles" if codesign else "cycles",
    )


# Axes of a Pareto panel, by objective: the label, and the budget drawn on it.
AXES: dict[str, tuple[str, str | None]] = {
    "energy": ("energy (pJ)", "energy_budget"),
    "edp": ("EDP (pJ x cycles)", None),
    "area": ("area (mm2)", "area_budget"),
}


def pareto(frame: pd.DataFrame, metadata: dict, out: Path) -> Path | None:
    """One panel per objective after cycles, against cycles. A co-design also shows its machines'
    energy and area when they are measured, and energy against area: the cycles-energy-area
    front, with the budgets; the front marked is the one over the study's objectives."""
    import pandas as pd

    from autotune.results import plots
    from autotune.search.codesign import machine_value
    from autotune.search.objectives import COLUMNS, objective_value

    objectives = list(metadata.get("objectives", ["cycles"]))
    if len(objectives) < 2:
        return None
    feasible = frame[frame["feasible"] == True]  # noqa: E712
    codesign = metadata.get("variant") == "codesign"
    if codesign:  # one point per machine, the workload's totals
        feasible = feasible.drop_duplicates("trial")
    if feasible.empty:
        return None
    value = machine_value if codesign else objective_value
    rows = feasible.to_dict(orient="records")
    shown = objectives[1:] + [
        n
        for n in ("energy", "area")
        if codesign
        and n not in objectives
        and all(r.get(COLUMNS[n]) is not None and not pd.isna(r.get(COLUMNS[n])) for r in rows)
    ]
    pairs = [(name, "cycles") for name in shown] + (
        [("area", "energy")] if {"energy", "area"} <= set(shown) else []
    )
    checked = (
        frame[frame["pareto"].fillna(False).astype(bool)]
        .groupby("trial")["verified"]
        .apply(lambda v: bool(v.fillna(False).astype(bool).all()))
    )
    about = (
        f"Pareto front over {', '.join(objectives)}: {len(checked)} points, "
        f"{'all' if checked.all() else int(checked.sum())} verified"
    )
    pareto_flags = tuple(bool(p) for p in feasible["pareto"])
    fronts = []
    for x, y in pairs:
        two = sorted(objectives) == sorted([x, y])  # the front is over exactly these axes
        label = "Pareto front" if two else "Pareto front (projected)"
        budget = metadata.get(AXES.get(x, ("", None))[1] or "")
        fronts.append(
            plots.Front(
                _axis(x, codesign),
                _axis(y, codesign),
                tuple(value(r, x) for r in rows),
                tuple(value(r, y) for r in rows),
                pareto_flags,
                staircase=two,
                limit=float(budget) if budget is not None else None,
                front_label=label,
            )
        )
    return plots.pareto_png(fronts, f"{_title(metadata, frame)}\n{about}", out / "pareto.png")


def _axis(name: str, codesign: bool) -> str:
    if name == "cycles":
        return "weighted cycles" if codesign else "cycles"
    return AXES.get(name, (name.replace("_", " "), None))[0]


def timeline(
    frame: pd.DataFrame, rank: int, out: Path, args: argparse.Namespace, study_folder: Path
) -> Path | str:
    """The entry's engine timeline, or why there is none (an infeasible entry, an oracle without
    one). `study_folder`: the results folder the leaderboard was read from."""
    from autotune.results import leaderboard as board
    from autotune.results import plots
    from simcore.ga1.engine import time_program
    from simcore.ga1.engine.spans import busy_spans, first_instructions

    row = frame.iloc[rank - 1].to_dict()
    if not row["feasible"]:
        return f"rank {rank} is infeasible: it was never simulated"
    found = board.family_of(str(row["family"]), study_folder=study_folder)
    if found is None:
        return f"unknown schedule family {row['family']!r}"
    oracle, family = found
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))
    machine = board.machine_of(row, oracle)
    work = oracle.work(shape, machine)
    if work is None:
        return f"the {oracle.name} oracle draws no engine timeline"
    try:  # past the limits, the other pictures are still drawn
        check_work(args, shape, machine, verify=False, program=True, work=work)
    except UsageError as exc:
        return str(exc)
    program = oracle.program(family, board.schedule_point(row), shape, machine)
    assert program is not None  # a family has a program exactly when it has a work estimate
    timing = time_program(machine, program, record=True)  # starts and finishes, no Python trace
    assert timing.starts is not None and timing.finishes is not None
    utilization = timing.mxu_util(machine)
    drawn = plots.Timeline(
        timing.cycles,
        tuple(busy_spans(program, timing.starts, timing.finishes, most=4096)),
        tuple(first_instructions(program, timing.starts, timing.finishes, ZOOM_CYCLES)),
        ZOOM_CYCLES,
    )
    del program, timing  # the picture needs only the spans
    params = {k: v for k, v in json.loads(str(row["params_json"])).items() if k != "family"}
    block = f" {params['bi']}x{params['bj']}" if "bi" in params else ""
    title = (
        f"rank {rank}: {row['family']}{block} on {shape}, {machine.slots} slots, setup {machine.dma_setup}, "
        f"{machine.dma_words_per_cycle} words/cycle: {drawn.cycles:,} cycles, MXU {utilization:.0%}"
    )
    return plots.timeline_png(drawn, title, out / f"timeline_rank{rank}.png")
