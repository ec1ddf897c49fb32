"""Studies: storage, samplers, the seeded baseline, and running workers against one study."""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import optuna
from sqlalchemy import event
from sqlalchemy.engine import Engine
from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.study import MaxTrialsCallback
from optuna.trial import TrialState

from search_spaces.base import canonical_json
from search_spaces.domains import grid

from autotune.errors import UsageError
from autotune.interrupt import STOP, graceful_stop
from autotune.objective import Objective
from autotune.problem import Candidate, Problem, assess

SAMPLERS: tuple[str, ...] = ("tpe", "random", "grid", "nsga2")
RESULTS = Path("results")
HEARTBEAT_SECONDS = 5
GRACE_SECONDS = 20
GRID_LIMIT = 200_000


@dataclass(frozen=True)
class StudySettings:
    name: str
    storage_url: str
    sampler: str
    seed: int
    objectives: tuple[str, ...]
    identity: dict  # what the study is about; a resumed study must match it
    heartbeat_seconds: int = HEARTBEAT_SECONDS  # RDB heartbeat; a RUNNING trial silent past grace is failed and retried
    grace_seconds: int = GRACE_SECONDS


def default_storage(name: str) -> str:
    """An embedded SQLite file under results/: no server, and optuna-dashboard opens it."""
    path = RESULTS / name / "study.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _sqlite_pragmas(connection, _record) -> None:
    # WAL and relaxed syncing: a commit per trial no longer waits for the disk, and readers
    # (other workers, optuna-dashboard) don't block the writer. A crash loses at most the last
    # commits of the OS buffer, never the file's consistency.
    if type(connection).__module__.startswith("sqlite3"):
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


event.listen(Engine, "connect", _sqlite_pragmas)


def open_storage(url: str, heartbeat_seconds: int = HEARTBEAT_SECONDS, grace_seconds: int = GRACE_SECONDS) -> RDBStorage:
    """Connect (creating tables if needed); an unreachable URL is a one-line usage error."""
    engine_kwargs = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    try:
        return RDBStorage(
            url, engine_kwargs=engine_kwargs, heartbeat_interval=heartbeat_seconds, grace_period=grace_seconds,
            heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=3),
        )
    except Exception as exc:  # sqlalchemy raises many kinds; all mean the same thing here
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot open storage {url!r}: {reason[:200]}") from None


def make_sampler(name: str, seed: int, n_objectives: int) -> optuna.samplers.BaseSampler:
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True, n_startup_trials=20)
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=40)
    if name in ("random", "grid"):  # grid: every feasible point is enqueued; random fills gaps
        return optuna.samplers.RandomSampler(seed=seed)
    raise UsageError(f"unknown sampler {name!r} (known: {', '.join(SAMPLERS)})")


MEMORY = ":memory:"


def load_or_create(settings: StudySettings, sampler_seed_offset: int = 0) -> optuna.Study:
    storage: optuna.storages.BaseStorage
    storage = optuna.storages.InMemoryStorage() if settings.storage_url == MEMORY else open_storage(settings.storage_url, settings.heartbeat_seconds, settings.grace_seconds)
    sampler = make_sampler(settings.sampler, settings.seed + sampler_seed_offset, len(settings.objectives))
    directions = ["minimize"] * len(settings.objectives)
    study = optuna.create_study(storage=storage, study_name=settings.name, sampler=sampler,
                                directions=directions, load_if_exists=True)
    recorded = study.user_attrs.get("identity")
    if recorded is None:
        study.set_user_attr("identity", settings.identity)
    elif recorded != settings.identity:
        differs = sorted(k for k in set(recorded) | set(settings.identity) if recorded.get(k) != settings.identity.get(k))
        raise UsageError(f"study {settings.name!r} already exists with a different {', '.join(differs)} "
                         f"({'; '.join(f'{k}: {recorded.get(k)}' for k in differs)}); choose another --study")
    return study


def seed_points(problem: Problem) -> list[Candidate]:
    """The chapter's sweep (and each family's own defaults), on the base machine."""
    machine_point = problem.machine_space.seed_point(problem.machine) if problem.machine_space else {}
    found: list[Candidate] = []
    for family in problem.families:
        for point in family.seed_points(problem.shape, problem.machine):
            found.append(Candidate(family.name, point, machine_point))
    return found


def grid_points(problem: Problem) -> list[Candidate]:
    """Every feasible point of the space (for --sampler grid), the most promising first by the
    families' analytic estimates (the tile model), so a budget smaller than the grid simulates
    the best-looking points; ties keep a fixed order."""
    machine_points = list(grid(problem.machine_params())) if problem.machine_space else [{}]
    found: list[Candidate] = []
    for family in problem.families:
        for point in grid(family.params(problem.shape, problem.machine.T)):
            for machine_point in machine_points:
                candidate = Candidate(family.name, point, machine_point)
                if assess(problem, candidate).feasible:
                    found.append(candidate)
                if len(found) > GRID_LIMIT:
                    raise UsageError(f"the space has more than {GRID_LIMIT} feasible points: use --sampler tpe or random")
    return sorted(found, key=lambda c: (_estimate(problem, c), c.key()))


def _estimate(problem: Problem, candidate: Candidate) -> float:
    machine = assess(problem, candidate).machine
    value = problem.family(candidate.family).estimate(candidate.point, problem.shape, machine)
    return float("inf") if value is None else value


def enqueue(study: optuna.Study, candidates: list[Candidate], source: str) -> int:
    """Enqueue candidates not yet in the study; returns how many were added. Under the study's
    lock: workers starting together would otherwise each enqueue the same baseline."""
    from autotune.budget import locked

    with locked(study, study.study_name):
        return _enqueue(study, candidates, source)


def _enqueue(study: optuna.Study, candidates: list[Candidate], source: str) -> int:
    # A WAITING trial holds its parameters as fixed_params until it runs.
    waiting = {canonical_json(t.system_attrs.get("fixed_params", t.params)) for t in study.get_trials(deepcopy=False, states=(TrialState.WAITING,))}
    done = {canonical_json(t.system_attrs.get("fixed_params", t.params)) for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))}
    added = 0
    for candidate in candidates:
        key = candidate.key()
        if key in waiting or key in done:
            continue
        study.enqueue_trial(candidate.params(), user_attrs={"source": source})
        waiting.add(key)
        added += 1
    return added


def finished_count(study: optuna.Study) -> int:
    # A FAILed trial (a worker died; the heartbeat retries it) does not consume the budget.
    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))


def _worker(settings: StudySettings, problem: Problem, target: int, timeout: float | None, index: int, progress: bool) -> None:
    with graceful_stop():
        _work(settings, problem, target, timeout, index, progress)


def _work(settings: StudySettings, problem: Problem, target: int, timeout: float | None, index: int, progress: bool) -> None:
    # A spawned worker starts with default filters: quiet it as the command line quiets itself
    # (without this, every worker printed Optuna's "experimental" warnings).
    from autotune.cli import _quiet_libraries

    _quiet_libraries()
    study = load_or_create(settings, sampler_seed_offset=index)
    optimize(study, problem, settings, target, timeout, progress)


def optimize(study: optuna.Study, problem: Problem, settings: StudySettings, target: int, timeout: float | None, progress: bool) -> None:
    """Run trials until the study holds `target` finished trials (a global budget shared by
    every worker) or the timeout passes."""
    remaining = target - finished_count(study)
    if remaining <= 0:
        return
    if settings.storage_url != MEMORY:  # shared storage: the exact budget (autotune.budget)
        from autotune.budget import SharedObjective, StudyLock, run_budget

        lock = StudyLock(settings.storage_url, settings.name)
        try:
            run_budget(study, SharedObjective(problem, study, settings.objectives, lock), target, timeout, progress)
        finally:
            lock.close()
        return
    objective = Objective(problem, study, settings.objectives)
    study.optimize(objective, n_trials=remaining, timeout=timeout,
                   callbacks=[MaxTrialsCallback(target, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)),
                              _stop_if_requested],
                   show_progress_bar=progress, gc_after_trial=False)


def _stop_if_requested(study: optuna.Study, _trial: optuna.trial.FrozenTrial) -> None:
    if STOP.requested:
        study.stop()


def run_workers(settings: StudySettings, problem: Problem, target: int, timeout: float | None, workers: int, progress: bool) -> None:
    """N processes on this machine against one study; each opens its own storage connection."""
    if workers == 1:
        study = load_or_create(settings)
        optimize(study, problem, settings, target, timeout, progress)
        return
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(settings, problem, target, timeout, i, progress and i == 0), daemon=False)
                 for i in range(workers)]
    for process in processes:
        process.start()
    try:
        forwarded = False
        while any(p.is_alive() for p in processes):
            for process in processes:
                process.join(timeout=0.2)
            if STOP.requested and not forwarded:  # Ctrl-C reached only us: pass the request on
                forwarded = True
                for process in processes:
                    if process.is_alive() and process.pid is not None:
                        os.kill(process.pid, signal.SIGINT)
    except KeyboardInterrupt:
        for process in processes:
            process.join(timeout=10)
        raise
    failed = [p.exitcode for p in processes if p.exitcode not in (0, None)]
    if failed:
        print(f"autotune: warning: {len(failed)} worker(s) exited with status {failed}", file=sys.stderr)
