"""`autotune check`: the regression check. Tunes 128x128x128 at 64 and 16 slots with a fixed seed
and budget, and fails if the best is worse than the chapter's best, worse than the committed
reference record, or not verified."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from simcore.ga1.machine import Machine
from simcore.shape import Shape

from search_spaces.registry import DEFAULT_SPACES, families

from autotune import leaderboard as board
from autotune.args import positive_int
from autotune.files import write_text
from autotune.limits import add_limits, check_work
from autotune.problem import Problem
from autotune.study import MEMORY, StudySettings, enqueue, load_or_create, optimize, seed_points

HELP = "regression check: tune 128x128x128 at 64 and 16 slots and compare with the chapter and the reference record"
REFERENCE = Path("results") / "reference" / "best.json"
CHAPTER_BEST = {64: (37440, "blocked 4x8, 2 buf"), 16: (76160, "blocked 2x4, 1 buf")}
SHAPE = Shape(128, 128, 128)
SEED = 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("check", help=HELP, description=HELP + ". Exits non-zero with a message on any regression.")
    parser.add_argument("--trials", type=positive_int, default=60, help="trials per scratchpad size, baseline included (default 60)")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help=f"the reference record file (default {REFERENCE})")
    parser.add_argument("--update", action="store_true", help="rewrite the reference record where this run did better")
    add_limits(parser)
    parser.set_defaults(run=run)


def reference_key(shape: Shape, machine: Machine) -> str:
    return f"{shape}|{machine.key()}"


def load_reference(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}
    return {record["key"]: record for record in json.loads(path.read_text())["records"]}


def best_of(slots: int, trials: int) -> dict[str, object]:
    machine = Machine(slots=slots)
    problem = Problem(SHAPE, machine, families(DEFAULT_SPACES))
    settings = StudySettings(name=f"check-{slots}", storage_url=MEMORY, sampler="tpe", seed=SEED,
                             objectives=("cycles",), identity={})
    study = load_or_create(settings)
    enqueue(study, seed_points(problem), "baseline")
    optimize(study, problem, settings, trials, None, progress=False)
    info = board.RunInfo(settings.name, "tpe", SEED, SHAPE, machine)
    names = sorted({p.name for params in problem.params_by_family().values() for p in params})
    rows = board.trial_rows(study, info, names)
    failures = board.annotate(rows, problem, verify_top=3)
    best = rows[0]
    return {"key": reference_key(SHAPE, machine), "shape": str(SHAPE), "slots": slots, "cycles": int(best["cycles"]),  # type: ignore[call-overload]
            "family": best["family"], "params": best["params_json"], "verified": best["verified"], "failures": failures}


def run(args: argparse.Namespace) -> int:
    reference = load_reference(args.reference)
    problems: list[str] = []
    updated = dict(reference)
    for slots in (64, 16):
        check_work(args, SHAPE, Machine(slots=slots))
        found = best_of(slots, args.trials)
        chapter_cycles, chapter_label = CHAPTER_BEST[slots]
        record = reference.get(str(found["key"]))
        line = f"{slots} slots: best {found['cycles']} cycles ({found['family']} {found['params']}); chapter {chapter_cycles} ({chapter_label})"
        if record:
            line += f"; reference {record['cycles']}"
        print(line)
        problems += [f"{slots} slots: {failure}" for failure in found["failures"]]  # type: ignore[union-attr]
        if found["verified"] is not True:
            problems.append(f"{slots} slots: the winner was not verified")
        if int(found["cycles"]) > chapter_cycles:  # type: ignore[call-overload]
            problems.append(f"{slots} slots: best {found['cycles']} is worse than the chapter's {chapter_cycles} ({chapter_label})")
        if record and int(found["cycles"]) > int(record["cycles"]):  # type: ignore[call-overload]
            problems.append(f"{slots} slots: best {found['cycles']} is worse than the reference record {record['cycles']} "
                            f"({record['family']} {record['params']})")
        if args.update and (record is None or int(found["cycles"]) < int(record["cycles"])) and found["verified"] is True:  # type: ignore[call-overload]
            updated[str(found["key"])] = {k: v for k, v in found.items() if k not in ("failures", "verified")}
    if args.update and updated != reference:
        text = json.dumps({"schema": 1, "records": sorted(updated.values(), key=lambda r: r["key"])}, indent=1) + "\n"
        write_text(text, args.reference)
        print(f"updated {args.reference}")
    for problem in problems:
        print(f"autotune: check failed: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("check passed")
    return 0
