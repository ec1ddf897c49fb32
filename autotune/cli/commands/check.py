"""`autotune check`: the regression check. Tunes 128x128x128 at 64 and 16 slots with a fixed seed
and budget, and fails if the best is worse than the chapter's best, worse than the committed
reference record, or not verified."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from autotune.cli.args import add_json, add_results, add_setting, positive_int
from autotune.cli.errors import UsageError
from autotune.cli.limits import add_limits, check_work
from simcore.ga1.machine import Machine
from simcore.shape import Shape

SLOTS = (64, 16)  # the slot counts checked
HELP = "regression check: tune 128x128x128 at 64 and 16 slots and compare with the chapter and the reference record"
REFERENCE = Path("reference") / "best.json"  # under --results
CHAPTER_BEST = {64: (37440, "blocked 4x8, 2 buf"), 16: (76160, "blocked 2x4, 1 buf")}
SHAPE = Shape(128, 128, 128)
SEED = 0
TRIALS = 150
RECORD_KEYS = ("key", "cycles", "family", "params")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help=HELP, description=HELP + ". Exits non-zero with a message on any regression."
    )
    add_setting(
        parser,
        "trials",
        type=positive_int,
        default=TRIALS,
        help=f"trials per scratchpad size, baseline included (default {TRIALS})",
    )
    add_results(parser)
    add_setting(
        parser,
        "reference",
        type=Path,
        default=None,
        help=f"the reference record file (default <results>/{REFERENCE})",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rewrite the reference record where this run did better (creates it if missing)",
    )
    add_json(parser, "one JSON object per scratchpad size")
    add_limits(parser)
    parser.set_defaults(run=run)


def reference_key(shape: Shape, machine: Machine) -> str:
    return f"{shape}|{machine.key()}"


REFERENCE_BYTES = 64 << 20  # a record per checked case, a few hundred bytes each


def load_reference(path: Path, update: bool) -> dict[str, dict]:
    """The committed record; a missing one is an error (a check that skips it could not fail),
    unless --update is about to create it."""
    if path.is_dir():
        raise UsageError(f"reference record {path} is a directory, not a file")
    if not path.exists():
        if update:
            return {}
        raise UsageError(
            f"reference record {path} not found (give --reference FILE or --results DIR; --update creates it)"
        )
    from simcore import files

    try:  # a regular file within the limit, UTF-8, JSON nested at most MOST_NESTING deep
        data = files.parse_json(files.read_text(path, "it", REFERENCE_BYTES), "it")
    except files.FileError as exc:
        reason = str(exc).removeprefix("it: ").removeprefix(f"it {path} ")
        raise UsageError(f"reference record {path} is unreadable: {reason}") from None
    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list):
        raise UsageError(
            f"reference record {path} is malformed: expected an object with a 'records' list "
            f"(write one with `autotune check --update`)"
        )
    for number, item in enumerate(records, start=1):
        missing = [k for k in RECORD_KEYS if not isinstance(item, dict) or k not in item]
        if missing or not isinstance(item["key"], str) or not _integer(item["cycles"]):
            what = f"lacks {', '.join(missing)}" if missing else "has a malformed key or cycles"
            raise UsageError(f"reference record {path} is malformed: record {number} {what}")
    return {record["key"]: record for record in records}


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def best_of(slots: int, trials: int) -> dict[str, Any]:
    """The winner of a short in-memory study at this slot count, verified."""
    from autotune.results.leaderboard import json_rows
    from autotune.run import pipeline
    from autotune.run.plan import RunPlan
    from autotune.storage import MEMORY

    machine = Machine(slots=slots)
    outcome = pipeline.run(
        RunPlan.of_shape(SHAPE, machine),
        pipeline.RunOptions(
            trials=trials,
            seed=SEED,
            study=f"check-{slots}",
            storage=MEMORY,
            verify_top=3,
            write=False,
        ),
    )
    if outcome.interrupted:  # a shortened run proves nothing either way
        raise KeyboardInterrupt
    best = json_rows(outcome.studies[0].frame.head(1))[0]
    return {
        "key": reference_key(SHAPE, machine),
        "shape": str(SHAPE),
        "slots": slots,
        "cycles": int(best["cycles"]),
        "family": best["family"],
        "params": best["params_json"],
        "verified": best["verified"] is True,
        "failures": outcome.failures,
    }


def run(args: argparse.Namespace) -> int:
    from autotune.oracles.ga1 import ORACLE
    from autotune.storage.names import blocking_file

    path = args.reference or args.results / REFERENCE
    reference = load_reference(path, args.update)
    if not reference and not args.update:  # a check that compares nothing proves nothing
        raise UsageError(
            f"reference record {path} holds no records: nothing to compare (write them with --update)"
        )
    blocked = blocking_file(path.parent) if args.update else None
    if blocked is not None:
        raise UsageError(f"reference record {path}: {blocked} is a file, not a folder")
    problems: list[str] = []
    unmatched: list[str] = []
    updated = dict(reference)
    for slots in SLOTS:
        check_work(args, ORACLE, SHAPE, Machine(slots=slots))
        found = best_of(slots, args.trials)
        chapter_cycles, chapter_label = CHAPTER_BEST[slots]
        record = reference.get(str(found["key"]))
        if args.json:
            print(
                json.dumps(
                    {
                        **found,
                        "chapter_cycles": chapter_cycles,
                        "reference_cycles": record["cycles"] if record else None,
                    }
                )
            )
        else:
            line = f"{slots} slots: best {found['cycles']} cycles ({found['family']} {found['params']}); chapter {chapter_cycles} ({chapter_label})"
            print(line + (f"; reference {record['cycles']}" if record else ""))
        if record is None:
            unmatched.append(str(found["key"]))
        problems += [f"{slots} slots: {failure}" for failure in found["failures"]]  # type: ignore[union-attr]
        if found["verified"] is not True:
            problems.append(f"{slots} slots: the winner was not verified")
        if int(found["cycles"]) > chapter_cycles:  # type: ignore[call-overload]
            problems.append(
                f"{slots} slots: best {found['cycles']} is worse than the chapter's {chapter_cycles} ({chapter_label})"
            )
        if record and int(found["cycles"]) > int(record["cycles"]):  # type: ignore[call-overload]
            problems.append(
                f"{slots} slots: best {found['cycles']} is worse than the reference record {record['cycles']} "
                f"({record['family']} {record['params']})"
            )
        if (
            args.update
            and (record is None or int(found["cycles"]) < int(record["cycles"]))
            and found["verified"] is True
        ):  # type: ignore[call-overload]
            updated[str(found["key"])] = {
                k: v for k, v in found.items() if k not in ("failures", "verified")
            }
    if len(unmatched) == len(SLOTS) and not args.update:  # nothing was compared
        problems.append(f"reference record {path} holds no record for {', '.join(unmatched)}")
    if args.update and updated != reference and not problems:
        from autotune.results.files import write_text

        write_text(
            json.dumps(
                {"schema": 1, "records": sorted(updated.values(), key=lambda r: r["key"])}, indent=1
            )
            + "\n",
            path,
        )
        if not args.json:
            print(f"updated {path}")
    for problem in problems:
        print(f"autotune: check failed: {problem}", file=sys.stderr)
    if problems:
        if args.update:
            print(f"autotune: {path} not updated: the check failed", file=sys.stderr)
        return 1
    if not args.json:
        print("check passed")
    return 0
