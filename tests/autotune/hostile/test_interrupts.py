"""Fault injection: a run interrupted (Ctrl-C once, twice, or SIGKILL) at seeded points of
sampling, evaluation, verification, the leaderboard write and the journal append (a torn
record included). After each: no traceback and no raw Optuna warning, every trial the run
completed is still in storage, and the next commands (the leaderboard, then the resume to the
same budget) give the same leaderboard as an uninterrupted run.

The run is a forked child of the test process (modules and the compiled engine already
loaded), whose named functions are wrapped to signal it at their n-th call."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pytest

from autotune.cli.main import main
from tests.helpers.waiting import PATIENCE, signal_taken, wait_until

GRID = 27  # the chapter space's schedules at 16x16x16 (T=8): the grid sampler runs each once
RUN = ["--shape", "16x16x16", "--space", "chapter", "--sampler", "grid", "--study", "f"]
COMPARED = [
    "rank",
    "params_json",
    "machine_json",
    "cycles",
    "feasible",
    "verified",
    "verification",
    "chapter_best_cycles",
    "pareto",
]
ROOT = Path(__file__).resolve().parents[3]


def _target(point: str) -> tuple[Any, str]:
    """The object and attribute name a fault point wraps."""
    if point == "sampling":
        from autotune.search.problem import Problem

        return Problem, "sample"
    if point in ("evaluation", "verification"):
        from autotune.oracles.ga1 import GA1Oracle

        return GA1Oracle, "evaluate" if point == "evaluation" else "verify"
    if point == "leaderboard-write":
        from autotune.results import files

        return files, "_replace"
    if point == "parquet-write":
        import pyarrow.parquet

        return pyarrow.parquet, "write_table"
    from autotune.storage.journal import JournalFile

    return JournalFile, "append_logs"  # journal-append, journal-torn


def _fire(action: str) -> None:
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGINT)  # the handler runs before os.kill returns: a request
    if action == "int-int":
        os.kill(os.getpid(), signal.SIGINT)  # the second interrupts here


def _wrap(point: str, n: int, action: str) -> None:
    owner, name = _target(point)
    original = getattr(owner, name)
    calls = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == n:
            if point == "journal-torn":  # half of the records reach the file, then the process dies
                import json as _json

                data = b"".join(
                    _json.dumps(log, separators=(",", ":")).encode() + b"\n" for log in args[1]
                )
                os.write(args[0]._fd, data[: max(1, len(data) // 2)])
                os.kill(os.getpid(), signal.SIGKILL)
            _fire(action)
        return original(*args, **kwargs)

    setattr(owner, name, wrapped)


def _log_completions(log: Path) -> None:
    """Append each trial id the storage marks COMPLETE to `log` (written at once: survives kill)."""
    from optuna.storages import JournalStorage
    from optuna.trial import TrialState

    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    original = JournalStorage.set_trial_state_values

    def logged(self: Any, trial_id: int, state: TrialState, values: Any = None) -> bool:
        done = original(self, trial_id, state, values)
        if done and state == TrialState.COMPLETE:
            os.write(fd, f"{trial_id}\n".encode())
        return done

    JournalStorage.set_trial_state_values = logged  # type: ignore[method-assign]


def run_forked(
    folder: Path, argv: list[str], prepare: Callable[[], None]
) -> tuple[int | None, int | None, str]:
    """`main(argv)` in a forked child in `folder`: (exit code, killing signal, stderr)."""
    err_path = folder / "child.err"
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            os.chdir(folder)
            sys.stdout = open(folder / "child.out", "w")  # noqa: SIM115
            sys.stderr = open(err_path, "w")  # noqa: SIM115
            prepare()
            code = main(argv)
        except BaseException:  # noqa: BLE001 - reported to the parent through stderr
            traceback.print_exc(file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    err = err_path.read_text() if err_path.exists() else ""
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status), err
    return os.WEXITSTATUS(status), None, err


def leaderboard_of(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "results" / "f" / "leaderboard.parquet")[COMPARED].reset_index(
        drop=True
    )


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    folder = tmp_path_factory.mktemp("uninterrupted")
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        assert main([*RUN, "--trials", str(GRID)]) == 0
    finally:
        os.chdir(cwd)
    frame = leaderboard_of(folder)
    assert len(frame) == GRID and frame["verified"].head(10).all()
    return frame


def _points() -> list[tuple[str, int, str]]:
    """The seeded fault points: (where, at which call, what)."""
    rng = random.Random(26)
    calls = {
        "sampling": GRID,
        "evaluation": GRID,
        "verification": 10,
        "leaderboard-write": 1,
        "parquet-write": 1,
        "journal-append": 150,
        "journal-torn": 150,
    }
    found = []
    for point, actions, seeds in (
        ("sampling", ("int", "int-int", "kill"), 1),
        ("evaluation", ("int", "int-int", "kill"), 2),
        ("verification", ("int", "int-int", "kill"), 2),
        ("leaderboard-write", ("int", "int-int", "kill"), 1),
        ("parquet-write", ("int", "kill"), 1),
        ("journal-append", ("int", "int-int", "kill"), 2),
        ("journal-torn", ("kill",), 3),
    ):
        for action in actions:
            for _ in range(seeds):
                found.append((point, rng.randint(1, calls[point]), action))
    return found


POINTS = _points()


def completed_ids(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


@pytest.mark.parametrize(
    ("point", "n", "action"), POINTS, ids=[f"{p}-{n}-{a}" for p, n, a in POINTS]
)
def test_an_interrupted_run_loses_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    uninterrupted: pd.DataFrame,
    point: str,
    n: int,
    action: str,
) -> None:
    log = tmp_path / "completed.log"

    def prepare() -> None:
        _log_completions(log)
        _wrap(point, n, action)

    code, killed, err = run_forked(tmp_path, [*RUN, "--trials", str(GRID)], prepare)
    assert "Traceback" not in err and "[W " not in err, err
    if action == "kill" or point == "journal-torn":
        assert killed == signal.SIGKILL, (code, err)
    else:  # a Ctrl-C anywhere is reported as an interrupted run
        assert killed is None and code == 130, (code, err)

    # Every trial the run completed is in the storage, completed.
    from optuna.trial import TrialState

    from autotune.storage.locations import read_storage

    journal = tmp_path / "results" / "f" / "study.journal"
    done = completed_ids(log)
    if done:
        storage = read_storage(str(journal))
        assert all(storage.get_trial(i).state == TrialState.COMPLETE for i in done)

    # The next commands: the leaderboard of what is stored, then the resume to the same budget.
    monkeypatch.chdir(tmp_path)
    out, errs = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errs):
        stored = len(done)
        if journal.exists() and stored:
            assert main(["leaderboard", "f", "--json", "--top", "100"]) == 0, errs.getvalue()
            assert len(out.getvalue().splitlines()) == stored
        remaining = GRID - _finished(journal)
        if remaining:
            assert main([*RUN, "--trials", str(GRID)]) == 0, errs.getvalue()
        assert main(["leaderboard", "f"]) == 0, errs.getvalue()
    assert "Traceback" not in errs.getvalue()
    pd.testing.assert_frame_equal(leaderboard_of(tmp_path), uninterrupted)
    assert not (tmp_path / "results" / "f" / "leaderboard.parquet").read_bytes() == b""


def _finished(journal: Path) -> int:
    from autotune.storage.locations import finished_trials

    return finished_trials(str(journal), "f") if journal.exists() else 0


def test_there_are_at_least_twenty_seeded_points() -> None:
    assert len(POINTS) >= 20
    assert {p for p, _, _ in POINTS} >= {
        "sampling",
        "evaluation",
        "verification",
        "leaderboard-write",
        "journal-append",
    }


# --- Ctrl-C from a terminal: the whole process group, workers included -----------------------


def _group_run(
    tmp_path: Path, argv: list[str], moment: Callable[[int], bool], presses: int
) -> tuple[int, str]:
    """Run the CLI in its own process group; once `moment(pid)` holds, press Ctrl-C `presses`
    times as a terminal does (the whole group), each once the run has taken the one before."""
    return _pressed_run(tmp_path, argv, [moment] + [_AT_ONCE] * (presses - 1))


def _AT_ONCE(pid: int) -> bool:
    return True


def _pressed_run(
    tmp_path: Path, argv: list[str], moments: list[Callable[[int], bool]]
) -> tuple[int, str]:
    """Run the CLI in its own process group and press Ctrl-C (the whole group) once per moment,
    each once its moment holds and the run has taken the one before. Returns once the run and
    every process it started are gone: a worker left behind is a failure, not a hang."""
    with (tmp_path / "run.err").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "autotune", *argv],
            cwd=tmp_path,
            start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    group = process.pid
    try:
        for moment in moments:
            wait_until(
                lambda: process.poll() is not None or moment(process.pid),
                "the moment to press Ctrl-C",
            )
            _ctrl_c(process)
            # An exited run (reaped by poll) has taken it: a zombie keeps it pending forever.
            wait_until(
                lambda: process.poll() is not None or signal_taken(process.pid),
                "the run to take the Ctrl-C",
            )
        process.wait(timeout=PATIENCE)
        wait_until(lambda: not _members(group), "every worker of the run to leave")
    finally:
        if process.poll() is None or _members(group):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
            process.wait()
    return process.returncode, (tmp_path / "run.err").read_text()


def _members(group: int) -> list[int]:
    """The live processes of process group `group` (zombies are gone), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def _ctrl_c(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGINT)
    except ProcessLookupError:
        pass


WORKERS = [
    "--shape",
    "64x64x64",
    "--space",
    "chapter,general",
    "--trials",
    "400",
    "--study",
    "w",
    "--workers",
    "2",
]


def _children(pid: int) -> int:
    """How many processes `pid` has started (its workers, multiprocessing's helper), from /proc;
    2 where /proc cannot say."""
    try:
        return len(Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    except OSError:
        return 2


def _moments(folder: Path) -> dict[str, Callable[[int], bool]]:
    """Moments of a run with two workers, each an event seen from outside the process."""
    journal = folder / "results" / "w" / "study.journal"

    def leases() -> int:  # the run's own, then one per worker that has opened the study
        return len(list(journal.parent.glob(journal.name + ".worker-*")))

    def trials() -> int:
        return journal.read_text().count('"state":1') if journal.exists() else 0

    return {
        "opening": lambda pid: journal.exists(),  # the run opens its study: no worker yet
        "spawning": lambda pid: leases() >= 1 and _children(pid) >= 2,  # a worker starts
        "workers-started": lambda pid: leases() >= 2,
        "running": lambda pid: trials() >= 5,
        "running-twice": lambda pid: trials() >= 5,
    }


MOMENTS = ["opening", "spawning", "workers-started", "running", "running-twice"]


@pytest.mark.slow  # a tuning process with two workers for each moment
@pytest.mark.parametrize("when", MOMENTS)
def test_ctrl_c_with_workers_is_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """A Ctrl-C at any moment of a run with workers, its start-up included, is never lost: the
    run exits 130 without a traceback, and the next reader finds what it kept."""
    presses = 2 if when == "running-twice" else 1
    code, err = _group_run(tmp_path, WORKERS, _moments(tmp_path)[when], presses)
    _check_interrupted(tmp_path, monkeypatch, code, err)


def _check_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, err: str
) -> None:
    """Status 130, no traceback, and what the run kept is read back (and verified) by the next
    reader."""
    assert code == 130, err
    assert "Traceback" not in err and "[W " not in err and "KeyboardInterrupt" not in err, err
    kept = tmp_path / "results" / "w" / "leaderboard.parquet"
    journal = tmp_path / "results" / "w" / "study.journal"
    if not (kept.exists() or "autotune leaderboard w" in err or "leaving at once" in err):
        assert err.strip().splitlines()[-1] == "autotune: interrupted", err  # before any trial
        return
    if not kept.exists() and not _finished_in(journal):
        return  # left at once before a trial was stored: nothing to read back
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["leaderboard", "w", "--json", "--top", "5"]) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all(
        row["verified"] is True for row in rows
    )  # the next reader verifies what the run did not


def _finished_in(journal: Path) -> int:
    from autotune.storage.locations import finished_trials

    return finished_trials(str(journal), "w") if journal.exists() else 0


def _press_moments(folder: Path) -> dict[str, list[Callable[[int], bool]]]:
    """Ctrl-C pressed again at moments of the run's leaving, each an event seen from outside: the
    moments of the presses, in turn."""
    moments = _moments(folder)
    journal = folder / "results" / "w" / "study.journal"

    def workers_gone(pid: int) -> bool:  # the workers left after the first Ctrl-C (leases gone)
        return len(list(journal.parent.glob(journal.name + ".worker-*"))) <= 1

    return {
        "spawning-twice": [moments["spawning"], _AT_ONCE],  # a worker still imports
        "started-twice": [moments["workers-started"], _AT_ONCE],
        "after-the-workers-left": [moments["running"], workers_gone],  # ranking, verifying
        "three-times": [moments["running"], _AT_ONCE, _AT_ONCE],  # leaving at once
        "spawning-three-times": [moments["spawning"], _AT_ONCE, _AT_ONCE],
    }


PRESSES = [
    "spawning-twice",
    "started-twice",
    "after-the-workers-left",
    "three-times",
    "spawning-three-times",
]


@pytest.mark.slow  # a tuning process with two workers for each case
@pytest.mark.parametrize("presses", PRESSES)
def test_ctrl_c_again_while_the_run_leaves_leaves_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presses: str
) -> None:
    """A second (and third) Ctrl-C at any moment of the leaving: the run exits 130 without a
    traceback from it or a worker, no worker outlives it (`_pressed_run` waits for the whole
    process group), and what it stored is read back."""
    code, err = _pressed_run(tmp_path, WORKERS, _press_moments(tmp_path)[presses])
    _check_interrupted(tmp_path, monkeypatch, code, err)


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--trials", "4", "--update", "--reference", "ref.json"],
        [
            "sweep",
            "--shape",
            "16x16x16",
            "--machine-grid",
            "dma_setup=4,16",
            "--schedules",
            "1x1:1",
            "--tuned",
            "--trials",
            "4",
            "--out",
            "sweep.parquet",
        ],
    ],
    ids=["check", "sweep-tuned"],
)
@pytest.mark.parametrize("action", ["int", "int-int"])
def test_an_interrupted_short_run_writes_nothing(
    tmp_path: Path, argv: list[str], action: str
) -> None:
    """check and sweep --tuned tune in memory: interrupted, they report it (status 130) and
    write neither a reference record nor a table from a shortened run."""
    code, killed, err = run_forked(tmp_path, argv, lambda: _wrap("evaluation", 2, action))
    assert killed is None and code == 130, (code, err)
    assert "Traceback" not in err and "[W " not in err, err
    assert err.strip().splitlines()[-1] == "autotune: interrupted"
    assert not (tmp_path / "ref.json").exists() and not (tmp_path / "sweep.parquet").exists()
