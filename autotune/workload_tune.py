"""`autotune --workload FILE`: tune every GEMM of a workload, or co-design the machine for it.

Without --search-machine: one study per GEMM (named <study>-<gemm>, same machine); the
workload's objective is the weighted total of the per-GEMM best cycles, written to
results/<study>/workload.parquet and compared with the chapter's hand-written schedules.
With --search-machine: an outer study over machine parameters (autotune.codesign), writing
results/<study>/leaderboard.parquet (rows per machine and GEMM) and pareto.parquet."""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import optuna
import pandas as pd
from optuna.study import MaxTrialsCallback
from optuna.trial import TrialState

from simcore.ga1.machine import Machine

from search_spaces.domains import grid
from search_spaces.machine import MachineSpace, parse_ranges
from search_spaces.registry import SpaceError, available, families
from search_spaces.workload import Workload, WorkloadError, load_workload

from autotune import __version__
from autotune import leaderboard as board
from autotune.args import build_machine
from autotune.codesign import OBJECTIVES, Codesign, MachineObjective, machine_records, machine_rows, pareto_flags, sort_key
from autotune.errors import UsageError
from autotune.limits import check_work
from autotune.files import write_parquet
from autotune.problem import Problem, chapter_best
from autotune.study import RESULTS, StudySettings, default_storage, enqueue, finished_count, load_or_create, make_sampler, open_storage, optimize, run_workers, seed_points, MEMORY

DEFAULT_TRIALS = 40           # per GEMM study (tuning) or machines (co-design)
VERIFY_TOP = 1                # per-GEMM leaderboards: the winner is what the workload uses


def run_workload(args: argparse.Namespace, trials: int) -> int:
    """Validate everything, then tune or co-design."""
    try:
        workload = load_workload(args.workload)
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None
    if args.target != "ga1":
        raise UsageError("--workload is for the ga1 target")
    try:
        found = families([n.strip() for n in args.space.split(",") if n.strip()])
    except SpaceError as exc:
        raise UsageError(f"{exc}; available spaces: {', '.join(available())}") from None
    machine = build_machine(args.machine, args.slots)
    for gemm in workload.gemms:
        check_work(args, gemm.shape, machine)
    objectives = tuple(n.strip() for n in (args.objectives or "cycles").split(",") if n.strip())
    if args.search_machine:
        return _codesign(args, workload, machine, found, objectives, trials)
    if objectives != ("cycles",):
        raise UsageError("--objectives other than cycles need --search-machine (a machine to trade against)")
    for given, flag in ((args.machine_range, "--machine-range"), (args.max_scratchpad_words, "--max-scratchpad-words"),
                        (args.max_dma_words_per_cycle, "--max-dma-words-per-cycle")):
        if given:
            raise UsageError(f"{flag} needs --search-machine")
    if machine.slots < 3:
        raise UsageError(f"a scratchpad of {machine.slots} slots is too small for any schedule (a product needs 3: C, A and B)")
    return _tune_each(args, workload, machine, found, trials)


def _study_name(args: argparse.Namespace, workload: Workload, machine: Machine, extra: dict) -> str:
    if args.study:
        return args.study
    ident = {"machine": machine.key(), "spaces": args.space, **extra}
    suffix = hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:8]
    return f"workload-{workload.name}-s{machine.slots}-{suffix}"


# --- one study per GEMM -------------------------------------------------------------------


def _tune_each(args: argparse.Namespace, workload: Workload, machine: Machine, found: tuple, trials: int) -> int:
    name = _study_name(args, workload, machine, {})
    rows, failures = [], []
    started = time.perf_counter()
    for gemm in workload.gemms:
        problem = Problem(gemm.shape, machine, found)
        ident = {"oracle": "ga1", "shape": str(gemm.shape), "machine": machine.key(), "spaces": args.space,
                 "machine_space": None, "objectives": ["cycles"], "workload": workload.name, "gemm": gemm.name}
        study_name = f"{name}-{gemm.name}"
        settings = StudySettings(study_name, args.storage or default_storage(study_name), args.sampler, args.seed,
                                 ("cycles",), ident, *_heartbeat(args))
        study = load_or_create(settings)
        enqueue(study, seed_points(problem), "baseline")
        target = finished_count(study) + trials
        print(f"tuning {gemm.label}: {trials} trials in study {study_name!r}", file=sys.stderr)
        if args.workers == 1:  # this study object (an in-memory study exists only here)
            optimize(study, problem, settings, target, args.timeout, sys.stderr.isatty())
        else:
            run_workers(settings, problem, target, args.timeout, args.workers, progress=sys.stderr.isatty())
        info = board.RunInfo(study_name, args.sampler, args.seed, gemm.shape, machine, ("cycles",))
        names = sorted({p.name for params in problem.params_by_family().values() for p in params})
        entries = board.trial_rows(study, info, names)
        failures += [f"{gemm.name}: {f}" for f in board.annotate(entries, problem, VERIFY_TOP)]
        board.write(board.to_frame(entries), RESULTS / study_name / "leaderboard.parquet", info)
        top = entries[0] if entries and entries[0]["feasible"] else None
        chapter = chapter_best(gemm.shape, machine)
        rows.append(_workload_row(gemm, top, chapter, study_name, len(study.trials)))
    frame = pd.DataFrame(rows)
    for column in ("cycles", "chapter_best_cycles", "lower_bound", "trials"):
        frame[column] = frame[column].astype("Int64")
    frame["verified"] = frame["verified"].astype("boolean")
    total = float(frame["weighted_cycles"].sum())
    chapter_total = float((frame["weight"] * frame["chapter_best_cycles"].astype("Float64")).sum())
    metadata = {"schema": 1, "kind": "workload", "study": name, "workload": workload.name, "machine": machine.as_dict(),
                "weighted_cycles": total, "chapter_weighted_cycles": chapter_total, "autotune_version": __version__}
    path = write_parquet(frame, RESULTS / name / "workload.parquet", metadata)
    print(format_workload(frame, workload, machine))
    print(f"weighted total {total:.0f} cycles; the chapter's families (best hand-written schedule per GEMM) "
          f"{chapter_total:.0f}: {chapter_total / total:.2f}x  ({time.perf_counter() - started:.1f} s)")
    print(f"wrote {path}")
    return _finish(failures, frame["verified"])


def _heartbeat(args: argparse.Namespace) -> tuple[int, int]:
    from autotune.study import GRACE_SECONDS, HEARTBEAT_SECONDS

    beat = getattr(args, "heartbeat", None)
    return (HEARTBEAT_SECONDS, GRACE_SECONDS) if beat is None else (beat, 2 * beat)


def _workload_row(gemm, top: dict | None, chapter: tuple[int, str] | None, study: str, trials: int) -> dict[str, object]:
    cycles = int(top["cycles"]) if top else None  # type: ignore[call-overload]
    return {"name": gemm.name, "shape": str(gemm.shape), "m": gemm.shape.m, "k": gemm.shape.k, "n": gemm.shape.n,
            "weight": gemm.weight, "cycles": cycles, "weighted_cycles": gemm.weight * cycles if cycles else None,
            "family": top["family"] if top else None, "params_json": top["params_json"] if top else None,
            "schedule": top["params_json"] if top else None,
            "verified": top["verified"] if top else None, "lower_bound": top.get("lower_bound") if top else None,
            "chapter_best_cycles": chapter[0] if chapter else None, "chapter_best_schedule": chapter[1] if chapter else None,
            "ratio_to_chapter_best": cycles / chapter[0] if cycles and chapter else None, "study": study, "trials": trials}


def format_workload(frame: pd.DataFrame, workload: Workload, machine: Machine) -> str:
    lines = [f"workload {workload.name!r} on {machine.slots} slots ({machine.key()})",
             f"{'gemm':<12}{'shape':>14}{'weight':>8}{'cycles':>10}{'weighted':>12}{'chapter':>10}{'vs ch.':>8}{'verified':>9}  schedule"]
    for _, r in frame.iterrows():
        ratio = f"{1 / r['ratio_to_chapter_best']:.2f}x" if pd.notna(r["ratio_to_chapter_best"]) else "-"
        verified = "yes" if r["verified"] is True else "NO" if r["verified"] is False else "-"
        cycles, weighted, chapter = (_text(r[c]) for c in ("cycles", "weighted_cycles", "chapter_best_cycles"))
        lines.append(f"{r['name']:<12}{r['shape']:>14}{r['weight']:>8g}{cycles:>10}{weighted:>12}"
                     f"{chapter:>10}{ratio:>8}{verified:>9}  {r['schedule'] or 'no feasible schedule'}")
    return "\n".join(lines)


def _text(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.0f}"  # type: ignore[arg-type]


def _finish(failures: list[str], verified: pd.Series) -> int:
    for failure in failures:
        print(f"autotune: error: verification failed: {failure}", file=sys.stderr)
    return 1 if failures or (verified == False).any() else 0  # noqa: E712  (a boolean column)


# --- co-design ----------------------------------------------------------------------------


def _codesign(args: argparse.Namespace, workload: Workload, machine: Machine, found: tuple,
              objectives: tuple[str, ...], trials: int) -> int:
    unknown = [n for n in objectives if n not in OBJECTIVES]
    if unknown or not objectives:
        raise UsageError(f"unknown objective(s) {', '.join(unknown) or '(none)'} for --workload --search-machine "
                         f"(known: {', '.join(OBJECTIVES)})")
    if objectives[0] != "cycles":
        raise UsageError("the first objective must be cycles")
    if args.workers != 1:
        raise UsageError("co-design runs in one process; --workers is for per-GEMM tuning")
    try:
        space = MachineSpace.create(machine, parse_ranges(args.machine_range), args.max_scratchpad_words)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    problem = Codesign(workload, machine, found, space, objectives, args.max_dma_words_per_cycle, args.pe_budget)
    ident = {"oracle": "ga1-codesign", "workload": [[g.name, str(g.shape), g.weight] for g in workload.gemms],
             "machine": machine.key(), "spaces": args.space, "machine_space": repr(space), "objectives": list(objectives),
             "max_dma_words_per_cycle": args.max_dma_words_per_cycle, "pe_budget": args.pe_budget}
    name = args.study or _study_name(args, workload, machine, ident).replace("workload-", "codesign-", 1)
    url = args.storage or default_storage(name)
    storage = optuna.storages.InMemoryStorage() if url == MEMORY else open_storage(url, *_heartbeat(args))
    study = optuna.create_study(storage=storage, study_name=name, directions=problem.directions(), load_if_exists=True,
                                sampler=make_sampler(args.sampler, args.seed, len(objectives)))
    recorded = study.user_attrs.get("identity")
    if recorded is None:
        study.set_user_attr("identity", ident)
    elif recorded != ident:
        raise UsageError(f"study {name!r} already exists with different settings; choose another --study")
    _enqueue_machines(study, problem, args.sampler == "grid")
    target = finished_count(study) + trials
    started = time.perf_counter()
    print(f"co-design of {workload.name!r}: {trials} machines in study {name!r}", file=sys.stderr)
    study.optimize(MachineObjective(problem, study), n_trials=target - finished_count(study), timeout=args.timeout,
                   callbacks=[MaxTrialsCallback(target, states=(TrialState.COMPLETE, TrialState.FAIL))],
                   show_progress_bar=sys.stderr.isatty(), gc_after_trial=False)
    return _codesign_report(study, problem, name, args, time.perf_counter() - started)


def _enqueue_machines(study: optuna.Study, problem: Codesign, every: bool) -> None:
    """The base machine first (so the chapter's machine is always a trial); with the grid
    sampler, every machine of the space in order."""
    points = [problem.space.seed_point(problem.base)]
    if every:
        points += list(grid(problem.space.params()))
    seen = {json.dumps(t.params, sort_keys=True) for t in study.get_trials(deepcopy=False)}
    for point in points:
        key = json.dumps(point, sort_keys=True)
        if key not in seen:
            study.enqueue_trial(point, user_attrs={"source": "baseline" if not seen else "grid"})
            seen.add(key)


def _codesign_report(study: optuna.Study, problem: Codesign, name: str, args: argparse.Namespace, elapsed: float) -> int:
    records = machine_records(study)
    records.sort(key=lambda tr: sort_key(problem, tr[1]))
    flags = pareto_flags(problem, [r for _, r in records])
    rows: list[dict[str, object]] = []
    failures: list[str] = []
    by_name = {f.name: f for f in problem.families}
    for (trial, record), pareto in zip(records, flags):
        machine_part = machine_rows(problem, trial, record, pareto)
        if pareto:  # every Pareto point is re-run functionally and hazard-replayed
            for row, gemm in zip(machine_part, problem.workload.gemms):
                point = json.loads(str(row["params_json"]))
                verdict = by_name[str(row["family"])].verify(point, gemm.shape, Machine(**record["machine"]))  # type: ignore[arg-type]
                row["verified"] = verdict.ok
                if not verdict.ok:
                    failures.append(f"machine {row['machine_json']}, {gemm.name}: {verdict.detail}")
        rows += machine_part
    common = {"sampler": args.sampler, "seed": args.seed, "study": name, "workload": problem.workload.name,
              "autotune_version": __version__}
    frame = board.to_frame([{**row, **common} for row in rows])
    metadata = {"schema": board.SCHEMA_VERSION, "kind": "leaderboard", "variant": "codesign", "study": name,
                "shape": str(problem.workload.gemms[0].shape), "workload": problem.workload.name,
                "base_machine": problem.base.as_dict(), "objectives": list(problem.objectives)}
    out = RESULTS / name
    write_parquet(frame, out / "leaderboard.parquet", metadata)
    front = frame[frame["pareto"] == True].copy() if rows else frame  # noqa: E712
    if rows:
        front["rank"] = list(range(1, len(front) + 1))
    write_parquet(front, out / "pareto.parquet", {**metadata, "variant": "pareto"})
    print(f"done: study {name!r}, {len(study.trials)} trials ({len(records)} distinct machines), {elapsed:.1f} s")
    print(format_front(front, problem))
    print(f"wrote {out / 'leaderboard.parquet'} and {out / 'pareto.parquet'}")
    return _finish(failures, front["verified"] if rows else pd.Series(dtype="boolean"))


def format_front(front: pd.DataFrame, problem: Codesign) -> str:
    """One line per Pareto machine: its parameters, objectives and the chapter's total there."""
    note = "; mxu_cycles maximised: a slower unit is cheaper" if "mxu_cycles" in problem.objectives else ""
    lines = [f"Pareto front ({', '.join(problem.objectives)}{note}) for workload {problem.workload.name!r}:",
             f"{'slots':>5}{'spad words':>11}{'setup':>6}{'words/cyc':>10}{'mxu_cyc':>8}{'cycles':>11}{'chapter':>11}{'gain':>7}{'verified':>9}"]
    for _, machine in front.groupby("trial", sort=False):
        r = machine.iloc[0]
        verified = "yes" if bool(machine["verified"].fillna(False).all()) else "NO"
        gain = f"{r['chapter_total_cycles'] / r['total_cycles']:.2f}x" if pd.notna(r["chapter_total_cycles"]) else "-"
        lines.append(f"{r['slots']:>5}{r['scratchpad_words']:>11}{r['dma_setup']:>6}{r['dma_words_per_cycle']:>10}"
                     f"{r['mxu_cycles']:>8}{r['total_cycles']:>11.0f}{r['chapter_total_cycles']:>11.0f}{gain:>7}{verified:>9}")
    return "\n".join(lines)
