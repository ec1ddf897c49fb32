"""`autotune plot`: PNG pictures of a study: optimisation history, Pareto front(s), and the
engine timeline of one leaderboard entry (for families that have one)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from autotune.cli.args import add_setting, add_source, positive_int
from autotune.cli.errors import UsageError, message
from autotune.cli.limits import add_limits, check_work
from autotune.oracles.capabilities import Reference
from simcore.shape import Shape

if TYPE_CHECKING:  # pandas, matplotlib, Optuna and numba load when the command runs
    import pandas as pd

    from autotune.oracles import Oracle
    from autotune.oracles.measures import Measure

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
    add_setting(
        parser,
        "out",
        type=Path,
        default=None,
        help="output folder (default plots/ beside the leaderboard, results/<study>/plots/: "
        "autotune's own pictures there are redrawn each time)",
    )
    add_setting(
        parser,
        "force",
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
    from autotune.results import load

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
    from autotune.results.files import check_output_folder, to_stdout
    from autotune.results.plots import drawn_by_autotune

    if to_stdout(out):
        raise UsageError("--out -: plot draws several pictures, give a folder to draw them in")
    if not given:
        from autotune.storage.names import refuse_link

        refuse_link(out, "the study's pictures folder")
    if not given and out.is_file():
        raise UsageError(
            f"{out} is a file, not a folder: the study's pictures go there; move it, or draw "
            "elsewhere with --out DIR"
        )
    # Study files, devices, folders: never. The default folder is named by no flag.
    check_output_folder(out, names, force or not given, "out" if given else None)
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
    from autotune.results.tables import oracle_of

    return oracle_of(metadata)


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
    hand = oracle.capability(Reference) if oracle else None
    found_best = [hand.reference(s, base) for s, _ in shapes] if hand else []
    best = [b for b in found_best if b is not None]
    if best and len(best) == len(shapes):
        label = "chapter's best, base machine" if codesign else f"chapter's best ({best[0][1]})"
        total = sum(w * b[0] for (_, w), b in zip(shapes, best))
        references.append(plots.Reference(label, total))
    found_bounds = [oracle.bound(s, base) for s, _ in shapes] if oracle else []
    bounds = [b for b in found_bounds if b is not None]
    if bounds and len(bounds) == len(shapes):
        label = "lower bound, base machine" if codesign else "lower bound"
        total = sum(w * b for (_, w), b in zip(shapes, bounds))
        references.append(plots.Reference(label, total, ":", "black"))
    return plots.history_png(
        trials,
        values,
        references,
        _title(metadata, frame),
        out / "history.png",
        y_label="weighted cycles" if codesign else "cycles",
    )


def pareto(frame: pd.DataFrame, metadata: dict, out: Path) -> Path | None:
    """One panel per objective after cycles, against cycles. A co-design also shows its machines'
    energy and area when they are measured, and energy against area: the cycles-energy-area
    front, with the budgets; the front marked is the one over the study's objectives. Axes and
    budgets are the oracle's measures' (autotune.oracles.measures)."""
    import pandas as pd

    from autotune.oracles.measures import AREA, ENERGY
    from autotune.results import plots
    from autotune.results.tables import oracle_of
    from autotune.search.codesign import machine_value
    from autotune.search.objectives import measures_of

    objectives = measures_of(oracle_of(metadata), metadata.get("objectives", ["cycles"]))
    if len(objectives) < 2:
        return None
    feasible = frame[frame["feasible"] == True]  # noqa: E712
    codesign = metadata.get("variant") == "codesign"
    if codesign:  # one point per machine, the workload's totals
        feasible = feasible.drop_duplicates("trial")
    if feasible.empty:
        return None
    rows = feasible.to_dict(orient="records")
    shown = list(objectives[1:]) + [
        m
        for m in (ENERGY, AREA)
        if codesign
        and m not in objectives
        and all(r.get(m.key) is not None and not pd.isna(r.get(m.key)) for r in rows)
    ]
    cycles = objectives[0]
    pairs = [(m, cycles) for m in shown] + (
        [(AREA, ENERGY)] if {ENERGY, AREA} <= set(shown) else []
    )
    checked = (
        frame[frame["pareto"].fillna(False).astype(bool)]
        .groupby("trial")["verified"]
        .apply(lambda v: bool(v.fillna(False).astype(bool).all()))
    )
    names = [m.name for m in objectives]
    about = (
        f"Pareto front over {', '.join(names)}: {len(checked)} points, "
        f"{'all' if checked.all() else int(checked.sum())} verified"
    )
    pareto_flags = tuple(bool(p) for p in feasible["pareto"])
    fronts = []
    for x, y in pairs:
        two = sorted(names) == sorted([x.name, y.name])  # the front is over exactly these axes
        label = "Pareto front" if two else "Pareto front (projected)"
        budget = metadata.get(x.budget) if x.budget else None
        fronts.append(
            plots.Front(
                _axis(x, codesign),
                _axis(y, codesign),
                tuple(machine_value(r, x) if codesign else x.value(r) for r in rows),
                tuple(machine_value(r, y) if codesign else y.value(r) for r in rows),
                pareto_flags,
                staircase=two,
                limit=float(budget) if budget is not None else None,
                front_label=label,
            )
        )
    return plots.pareto_png(fronts, f"{_title(metadata, frame)}\n{about}", out / "pareto.png")


def _axis(measure: Measure, codesign: bool) -> str:
    if measure.name == "cycles":
        return "weighted cycles" if codesign else "cycles"
    return measure.title


def timeline(
    frame: pd.DataFrame, rank: int, out: Path, args: argparse.Namespace, study_folder: Path
) -> Path | str:
    """The entry's engine timeline, or why there is none (an infeasible entry, an oracle without
    programs). `study_folder`: the results folder the leaderboard was read from."""
    from autotune.errors import WorkError
    from autotune.oracles.capabilities import Programs
    from autotune.results import leaderboard as board
    from autotune.results import plots

    row = frame.iloc[rank - 1].to_dict()
    if not row["feasible"]:
        return f"rank {rank} is infeasible: it was never simulated"
    found = board.family_of(str(row["family"]), study_folder=study_folder)
    if found is None:
        return f"unknown schedule family {row['family']!r}"
    oracle, family = found
    programs = oracle.capability(Programs)
    if programs is None:
        return f"the {oracle.name} oracle draws no engine timeline"
    shape = Shape(int(row["m"]), int(row["k"]), int(row["n"]))
    machine = board.machine_of(row, oracle)
    try:  # past the limits, the other pictures are still drawn
        check_work(args, oracle, shape, machine, verify=False, program=True)
    except WorkError as exc:
        return message(exc)
    program = programs.program(family, board.schedule_point(row), shape, machine)
    drawn = programs.timeline(program, machine, ZOOM_CYCLES)
    del program  # the picture needs only the spans
    params = {k: v for k, v in json.loads(str(row["params_json"])).items() if k != "family"}
    block = f" {params['bi']}x{params['bj']}" if "bi" in params else ""
    title = (
        f"rank {rank}: {row['family']}{block} on {shape}, {oracle.describe_machine(machine)}: "
        f"{drawn.cycles:,} cycles, busy {drawn.busy:.0%}"
    )
    return plots.timeline_png(drawn, title, out / f"timeline_rank{rank}.png")
