"""autotune from Python: tune a product, read any leaderboard back.

`tune` runs what `autotune tune` runs (the same plan from the same settings, the same studies,
files and verification) and returns its results as objects; `load` reads what any run wrote.
Settings keep the plan's names: `autotune tune --space chapter --search-machine` is
`tune(shape, spaces="chapter", search_machine=True)`. Bad settings raise a domain error
(`autotune.errors.AutotuneError`, whose `setting` names the one at fault); an unknown keyword
raises TypeError.

Examples:
    Tune 128x128x128 on GA-1 with 64 scratchpad slots, then read the leaderboard back:

    >>> import tempfile
    >>> import autotune
    >>> folder = tempfile.mkdtemp()
    >>> result = autotune.tune("128x128x128", machine="slots=64", trials=20, results=folder)
    >>> result.best.cycles <= 37440  # the chapter's best hand-written schedule starts every study
    True
    >>> result.best.verified, result.best.verification  # the winner ran exactly and was checked
    (True, 'exact')
    >>> result.study.study_name
    'ga1-128x128x128-s64'
    >>> [path.name for path in result.paths]
    ['leaderboard.parquet']
    >>> result.leaderboard.equals(autotune.load(result.study.study_name, results=folder))
    True
"""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from autotune.environment import check_environment
from autotune.errors import SettingTypeError
from autotune.record import TrialRecord
from autotune.run.resolve import option_names, options_of, plan_of
from simcore.shape import Shape

if TYPE_CHECKING:
    import optuna
    import pandas as pd

    from autotune.oracles import Oracle
    from autotune.run.pipeline import Outcome, RunOptions

__all__ = ["LeaderboardEntry", "TuneResult", "load", "tune"]


@dataclass(frozen=True)
class LeaderboardEntry:
    """One leaderboard row: a schedule on a machine, its figures and how it was checked."""

    rank: int
    cycles: int | None  # None: infeasible, never simulated
    family: str | None  # the schedule family (search_spaces)
    schedule: Mapping[str, Any]  # the family's parameters
    machine: Mapping[str, int]  # the machine it ran on ({}: the schedule is the machine)
    verified: bool | None  # True only for an exact check (docs: how to trust results)
    verification: str  # exact, scaled, model, or none
    metrics: Mapping[str, Any] = field(default_factory=dict)  # every figure the oracle reported
    trial: int | None = None  # the study's trial that found it
    record: TrialRecord | None = None  # that trial as stored (evaluation, provenance, origin)

    @staticmethod
    def of_row(
        row: Mapping[str, Any], study: optuna.Study | None = None, oracle: Oracle | None = None
    ) -> LeaderboardEntry:
        """The entry of a leaderboard row (`autotune.results.leaderboard.json_rows`), with its
        trial's record when the study is given; its metrics are the row's figures among the
        measures of `oracle` (None: of every installed oracle)."""
        from autotune import oracles

        measures = (
            oracle.measures
            if oracle is not None
            else tuple(m for name in oracles.names() for m in oracles.get(name).measures)
        )
        machine = json.loads(str(row.get("machine_json") or "{}"))
        metrics = {
            m.key: row[m.key]
            for m in measures
            if m.key not in machine and row.get(m.key) is not None
        }
        schedule = json.loads(str(row["params_json"])) if row.get("params_json") else {}
        schedule.pop("family", None)
        trial = int(row["trial"]) if row.get("trial") is not None else None
        found = None
        if study is not None and trial is not None:
            trials = [t for t in study.get_trials(deepcopy=False) if t.number == trial]
            found = TrialRecord.of_trial(trials[0]) if trials else None
        cycles = row.get("cycles")
        return LeaderboardEntry(
            int(row.get("rank") or 0),
            int(cycles) if cycles is not None else None,
            row.get("family"),
            schedule,
            machine,
            row.get("verified"),
            str(row.get("verification") or "none"),
            metrics,
            trial,
            found,
        )


@dataclass(frozen=True, eq=False)
class TuneResult:
    """What `tune` found. `leaderboard` is the table written to `paths[0]` (one product or a
    co-design: every distinct candidate ranked; a workload: each GEMM's winner)."""

    leaderboard: pd.DataFrame
    best: LeaderboardEntry | None  # the top entry (None for a workload, or none feasible)
    studies: tuple[optuna.Study, ...]  # one per study the run made (a workload: one per GEMM)
    paths: tuple[Path, ...] = ()  # the files written
    notes: tuple[str, ...] = ()  # notes on the workload and the shapes (padding, ...)
    failures: tuple[str, ...] = ()  # verification failures (empty in a sound run)
    interrupted: bool = False  # stopped by Ctrl-C: what was done is ranked and written

    @property
    def study(self) -> optuna.Study:
        """The run's study (a workload: its first GEMM's)."""
        return self.studies[0]


def tune(
    shape: Shape | str | None = None,
    *,
    oracle: str | None = None,
    machine: Any = None,
    trials: int | None = None,
    sampler: str = "guided",
    seed: int = 0,
    storage: str | None = None,
    results: str | os.PathLike[str] = "results",
    verbose: bool = False,
    **settings: Any,
) -> TuneResult:
    """Search schedules for one product (`shape`, e.g. "128x128x128", A is M x K and B is K x N)
    or, with `workload=FILE`, for each GEMM of a workload, and return the verified leaderboard.

    `oracle` is the cost model (None: GA-1, or with `arch` the systolic oracle). `machine` is
    the oracle's machine (KEY=VALUE text such as "slots=16,dma_setup=8", a mapping or a machine
    object; None: the oracle's default). `arch` is a systolic machine with its memory system: a
    bundled architecture's name or a file, changed by `machine`'s KEY=VALUE overrides. `trials`
    is the finished trials each study holds when the run ends, the seeded baseline included
    (None: 1000 for one product, 40 per GEMM of a workload or for a co-design): a study that
    holds them already is returned as it is, an interrupted one is finished; `more_trials=N`
    instead runs N trials more. Studies live in `storage` (None: a journal per study under
    `results`; ":memory:" keeps nothing), and
    resume when run again with the same settings. Other settings, by the plan's names: `workload`,
    `spaces`, `objectives`, `search_machine`, `machine_range`, `max_scratchpad_words`,
    `max_dma_words_per_cycle`, `pe_budget`; and the run's: `more_trials`, `study`, `workers`, `timeout`,
    `heartbeat`, `verify_top`, `allow_sampler_change`, `transfer`. `verbose` keeps Optuna's log
    line per trial (off by default, as on the command line; the logging level is restored after).
    """
    check_environment()  # before numba loads
    from autotune.run import pipeline  # Optuna, pandas and numba load with the first run

    known = option_names()
    plan = plan_of(
        shape,
        oracle=oracle,
        machine=machine,
        **{k: v for k, v in settings.items() if k not in known},
    )
    options = options_of(
        plan,
        trials=trials,
        sampler=sampler,
        seed=seed,
        storage=storage,
        results=results,
        **{"worker_setup": None if verbose else _quiet_worker},
        **{k: v for k, v in settings.items() if k in known},
    )
    checked = pipeline.check(plan, options)  # the size guard's notices, the oracle's notes
    with _optuna_quiet(not verbose):
        outcome = pipeline.run_checked(checked)
    notes = (*plan.workload.warnings, *checked.notices, *checked.notes)
    return _result(outcome, options, notes, plan.the_oracle())


def load(
    path_or_study: str | os.PathLike[str] | optuna.Study,
    *,
    results: str | os.PathLike[str] = "results",
    storage: str | None = None,
) -> pd.DataFrame:
    """Any leaderboard autotune wrote, as a DataFrame: a parquet file, a results/<study>/
    folder, a study name (found under `results`, or in `storage`), or an Optuna study. A
    study's leaderboard is rebuilt from its storage when the file is missing or holds fewer
    trials than the storage."""
    _check_load(path_or_study, results, storage)
    if not isinstance(path_or_study, (str, os.PathLike)):
        from autotune.run.rebuild import rebuild

        return rebuild(path_or_study, None).frame
    from autotune.results.load import load as find

    return find(os.fspath(path_or_study), Path(results), storage).frame


def _check_load(path_or_study: object, results: object, storage: object) -> None:
    """load()'s arguments by type, before any work: SettingTypeError (a TypeError) naming one."""
    import optuna

    if not isinstance(path_or_study, (str, os.PathLike, optuna.Study)):
        raise SettingTypeError(
            "load() takes a leaderboard file, a results folder, a study name or an Optuna "
            f"study, got {type(path_or_study).__name__}"
        )
    if not isinstance(results, (str, os.PathLike)):
        raise SettingTypeError(
            f"results must be a folder's path, got {type(results).__name__}", setting="results"
        )
    if storage is not None and not isinstance(storage, str):
        raise SettingTypeError(
            f"storage must be a storage address, got {type(storage).__name__}", setting="storage"
        )


@contextlib.contextmanager
def _optuna_quiet(quiet: bool) -> Iterator[None]:
    """Optuna's per-trial log lines off for one run, and its notes on the experimental features
    autotune uses on purpose (grouped TPE, the heartbeat) hidden; the caller's levels restored."""
    import optuna

    if not quiet:
        yield
        return
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(level)


def _quiet_worker() -> None:
    """A worker process's logging, as `tune(verbose=False)` keeps its own (no per-trial lines)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)


def _result(
    outcome: Outcome, options: RunOptions, notes: tuple[str, ...], oracle: Oracle
) -> TuneResult:
    from autotune.results.leaderboard import json_rows

    studies = tuple(_readable(s.study, s.name, options) for s in outcome.studies)
    if outcome.summary is not None:
        frame, best = outcome.summary, None
    else:
        frame = outcome.studies[0].frame
        rows = json_rows(frame.head(1)) if not frame.empty else []
        feasible = bool(rows) and bool(rows[0].get("feasible"))
        best = LeaderboardEntry.of_row(rows[0], studies[0], oracle) if feasible else None
    return TuneResult(
        frame,
        best,
        studies,
        tuple(outcome.paths),
        notes,
        tuple(outcome.failures),
        outcome.interrupted,
    )


def _readable(run_study: optuna.Study | None, name: str, options: RunOptions) -> optuna.Study:
    """The study to read after the run: the run's own in memory, else read back from storage
    (the run's handle closed with its storage)."""
    from autotune.storage import is_memory, local_storage, read_study

    address = options.storage or local_storage(options.results, name)
    if address is None or is_memory(address):
        assert run_study is not None
        return run_study
    found = read_study(address, name)
    assert found is not None, f"study {name!r} is not in {address!r} after its run"
    return found
