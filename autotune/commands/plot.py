"""`autotune plot`: PNG pictures of a study: optimisation history, Pareto front(s), and the
engine timeline of one leaderboard entry."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from simcore.ga1.lower_bounds import lower_bound
from simcore.ga1.machine import Machine
from simcore.ga1.program import LOAD
from simcore.shape import parse_shape
from simcore.ga1.engine import simulate

from search_spaces.base import GA1Family
from search_spaces.registry import SpaceError, find_family

from autotune import leaderboard as board
from autotune import plots
from autotune.args import positive_int
from autotune.errors import UsageError
from autotune.limits import add_limits, check_work
from autotune.files import read_parquet
from autotune.problem import INFEASIBLE_VALUE, chapter_best

HELP = "draw a study's optimisation history, Pareto front and an entry's engine timeline as PNG files"
ZOOM_CYCLES = 1500


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("plot", help=HELP, description=HELP + " (history.png, pareto.png, timeline_rank<N>.png).")
    parser.add_argument("path_or_study", metavar="STUDY_OR_PATH", help="a study name, a results/<study>/ folder, or a leaderboard/pareto parquet file")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default results/<study>/plots/)")
    parser.add_argument("--rank", type=positive_int, default=1, help="leaderboard entry whose timeline to draw (default 1)")
    add_limits(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = board.resolve(args.path_or_study)
    try:
        frame, metadata = read_parquet(path)
    except Exception as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    if metadata.get("kind") != "leaderboard" or frame.empty:
        raise UsageError(f"{path} is not a non-empty autotune leaderboard")
    if args.rank > len(frame):
        raise UsageError(f"rank {args.rank} is past the end of the leaderboard ({len(frame)} entries)")
    out = args.out or path.parent / "plots"
    written = [history(frame, metadata, path.parent, out)]
    pareto_path = path.parent / "pareto.parquet"
    front = pareto(frame, metadata, out)
    if front is not None:
        written.append(front)
    written.append(timeline(frame, metadata, args.rank, out, args))
    for item in written:
        print(f"wrote {item}")
    if len(metadata.get("objectives", [])) > 1 and front is None and pareto_path.is_file():
        print(f"note: {pareto_path} has no feasible point to draw")
    return 0


def _title(metadata: dict, frame: pd.DataFrame) -> str:
    base = Machine(**metadata["base_machine"]) if metadata.get("base_machine") else None
    what = f"workload {metadata['workload']}" if metadata.get("workload") else f"{metadata.get('shape')}"
    machine = "" if base is None else (f", base machine {base.slots} slots, setup {base.dma_setup}, "
                                       f"{base.dma_words_per_cycle} words/cycle, mxu {base.mxu_cycles}")
    searched = " (machine searched)" if metadata.get("variant") or len(frame.drop_duplicates("machine_json")) > 1 else ""
    return f"{metadata.get('study')}: {what}{machine}{searched}"


def _trial_values(frame: pd.DataFrame, metadata: dict, folder: Path) -> tuple[list[int], list[float]]:
    """(trial, cycles) of every feasible trial: from the study storage when it is there (every
    trial, duplicates included), else from the leaderboard (one row per distinct candidate)."""
    db = folder / "study.db"
    if db.is_file() and metadata.get("study"):
        try:
            import optuna

            study = optuna.load_study(study_name=str(metadata["study"]), storage=f"sqlite:///{db}")
            pairs = [(t.number, float(t.values[0])) for t in study.get_trials(deepcopy=False)
                     if t.values and t.values[0] < INFEASIBLE_VALUE]
            if pairs:
                return [p[0] for p in pairs], [p[1] for p in pairs]
        except Exception:  # an unreadable or foreign database: the leaderboard still has the data
            pass
    column = "total_cycles" if "total_cycles" in frame else "cycles"
    rows = frame[frame["feasible"] == True].drop_duplicates("trial").sort_values("trial")  # noqa: E712
    return [int(t) for t in rows["trial"]], [float(v) for v in rows[column]]


def history(frame: pd.DataFrame, metadata: dict, folder: Path, out: Path) -> Path:
    trials, values = _trial_values(frame, metadata, folder)
    if not trials:
        raise UsageError("the leaderboard has no feasible trial to plot")
    references = []
    base = Machine(**metadata["base_machine"]) if metadata.get("base_machine") else None
    gemms = frame.drop_duplicates("gemm")[["m", "k", "n", "weight"]] if "gemm" in frame else None
    if base is not None and gemms is not None:  # a workload: weighted totals on the base machine
        shapes = [(parse_shape(f"{r.m}x{r.k}x{r.n}"), float(r.weight)) for r in gemms.itertuples()]
        chapter = [chapter_best(s, base) for s, _ in shapes]
        if all(chapter):
            references.append(plots.Reference("chapter's best, base machine", sum(w * c[0] for (_, w), c in zip(shapes, chapter))))
        references.append(plots.Reference("lower bound, base machine", sum(w * lower_bound(s, base) for s, w in shapes), ":", "black"))
    elif base is not None and metadata.get("shape"):
        shape = parse_shape(str(metadata["shape"]))
        best = chapter_best(shape, base)
        if best:
            references.append(plots.Reference(f"chapter's best ({best[1]})", best[0]))
        references.append(plots.Reference("lower bound", lower_bound(shape, base), ":", "black"))
    label = "weighted cycles" if gemms is not None else "cycles"
    return plots.history_png(trials, values, references, _title(metadata, frame), out / "history.png", y_label=label)


def pareto(frame: pd.DataFrame, metadata: dict, out: Path) -> Path | None:
    objectives = list(metadata.get("objectives", ["cycles"]))
    if len(objectives) < 2:
        return None
    feasible = frame[frame["feasible"] == True]  # noqa: E712
    if "gemm" in frame:  # co-design: one point per machine
        feasible = feasible.drop_duplicates("trial")
    if feasible.empty:
        return None
    y_column = "total_cycles" if "total_cycles" in frame else "cycles"
    fronts = []
    for name in objectives[1:]:
        x = [board.objective_value(r, name) for r in feasible.to_dict(orient="records")]
        fronts.append(plots.Front(name.replace("_", " "), "weighted cycles" if y_column == "total_cycles" else "cycles",
                                  tuple(x), tuple(float(v) for v in feasible[y_column]), tuple(bool(p) for p in feasible["pareto"])))
    return plots.pareto_png(fronts, _title(metadata, frame), out / "pareto.png")


def timeline(frame: pd.DataFrame, metadata: dict, rank: int, out: Path, args: argparse.Namespace) -> Path:
    row = frame.iloc[rank - 1].to_dict()
    if not row["feasible"]:
        raise UsageError(f"rank {rank} is infeasible: it was never simulated, there is no timeline")
    try:
        family = find_family(str(row["family"]))
    except SpaceError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(family, GA1Family):
        raise UsageError(f"family {family.name!r} has no GA-1 timeline")
    shape = parse_shape(f"{row['m']}x{row['k']}x{row['n']}")
    machine = board.machine_of(row)
    check_work(args, shape, machine, verify=False, program=True)
    program = family.build(board.schedule_point(row), shape, machine)
    result = simulate(machine, program, trace=True)
    loads = [r[0] == LOAD for r in program.rows]
    params = {k: v for k, v in json.loads(str(row["params_json"])).items() if k != "family"}
    block = f" {params['bi']}x{params['bj']}" if "bi" in params else ""
    title = (f"rank {rank}: {row['family']}{block} on {shape}, {machine.slots} slots, setup {machine.dma_setup}, "
             f"{machine.dma_words_per_cycle} words/cycle: {result.cycles:,} cycles, MXU {result.mxu_util:.0%}")
    return plots.timeline_png(result, loads, title, out / f"timeline_rank{rank}.png", zoom=ZOOM_CYCLES)
