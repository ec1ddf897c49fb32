"""What can go wrong around a study's storage, end to end through the command line: an
in-memory study, processes creating one study at the same moment or joining a run in progress,
a damaged storage file, a read-only results folder, and the files a clean exit must not leave."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from optuna.trial import TrialState

from autotune.cli.main import main
from autotune.errors import AutotuneError
from autotune.storage import SharedStudy, read_study
from tests.helpers.waiting import PATIENCE, wait_until, waiting_for_a_lock

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--shape", "64x64x64", "--space", "chapter"]


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def address(root: Path, study: str, kind: str) -> str:
    return (
        str(root / "results" / study / "study.journal")
        if kind == "journal"
        else f"sqlite:///{root / (study + '.db')}"
    )


def where(root: Path, study: str, kind: str) -> list[str]:
    return [] if kind == "journal" else ["--storage", address(root, study, kind)]


def tune(root: Path, study: str, trials: int, *extra: str) -> subprocess.Popen[str]:
    shape = [] if "--shape" in extra else SMALL
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autotune",
            *shape,
            "--trials",
            str(trials),
            "--study",
            study,
            *extra,
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 0 and "Traceback" not in err, err
    return out


def states(root: Path, study: str, kind: str = "journal") -> list[TrialState]:
    found = read_study(address(root, study, kind), study)
    assert found is not None
    return [t.state for t in found.get_trials()]


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, (argv, code, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("autotune: error: "), err
    return err


@pytest.mark.parametrize("storage", [":memory:", "sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_study_runs_and_is_ranked(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, storage: str
) -> None:
    """The run and its leaderboard share one study object (SQLite's in-memory names included)."""
    assert main([*SMALL, "--trials", "12", "--study", "m", "--storage", storage]) == 0
    captured = capsys.readouterr()
    assert (
        "12 trials in storage" in captured.out
        and "Traceback" not in captured.err
        and captured.err == ""
    )
    frame = pd.read_parquet(in_tmp / "results" / "m" / "leaderboard.parquet")
    assert len(frame) >= 5 and bool(frame["verified"].iloc[0])
    assert sorted(p.name for p in (in_tmp / "results" / "m").iterdir()) == ["leaderboard.parquet"]


SLOW = ["--shape", "128x128x128", "--space", "general"]  # about 20 ms a trial: runs overlap


@pytest.mark.slow  # three processes racing, twice
@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_processes_creating_one_study_together_never_fail_and_share_its_budget(
    tmp_path: Path, kind: str
) -> None:
    """Three processes create one new study at the same moment: the test holds the storage's
    study lock until all three wait for it, then lets go. Each, once in the run, waits for the
    others before its first trial, so that none can finish the budget before all have joined."""
    (tmp_path / "results" / "together").mkdir(parents=True)
    gate = SharedStudy(address(tmp_path, "together", kind), "together")
    gate.acquire()
    (tmp_path / "meeting").mkdir()
    argv = [*SLOW, "--trials", "40", "--study", "together", *where(tmp_path, "together", kind)]
    program = (
        "import sys; from tests.helpers.meeting import main_meeting_after_begin as run; "
        "sys.exit(run(sys.argv[1], 3, sys.argv[2:]))"
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", program, str(tmp_path / "meeting"), *argv],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    if Path("/proc/locks").is_file():
        pids = {process.pid for process in processes}
        wait_until(lambda: waiting_for_a_lock(pids) == pids, "all three waiting for the lock")
    gate.release()
    gate.close()
    for process in processes:
        assert "40 trials in storage" in finish(process)
    assert states(tmp_path, "together", kind) == [TrialState.COMPLETE] * 40


@pytest.mark.slow  # twelve processes racing
def test_tables_created_by_several_processes_at_once(tmp_path: Path) -> None:
    """Optuna's RDB storage creates its tables and version rows on first use; our processes doing
    it at once, with a plain Optuna process (optuna-dashboard, say: no lock of ours) among them,
    must not fail (the plain one may: that race is Optuna's)."""
    ours = (
        "import sys; from autotune.storage.locations import open_store; "
        "open_store(sys.argv[1], 'x', 5, 20).close()"
    )
    foreign = "import sys, optuna; optuna.storages.RDBStorage(sys.argv[1])"  # no lock of ours
    for attempt in range(3):
        url = f"sqlite:///{tmp_path / f'fresh{attempt}.db'}"
        openers = [
            subprocess.Popen(
                [sys.executable, "-c", code, url],
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stderr=subprocess.PIPE,
                text=True,
            )
            for code in (ours, ours, ours, foreign)
        ]
        for opener in openers[:3]:
            _, err = opener.communicate(timeout=PATIENCE)
            assert opener.returncode == 0, err
        openers[3].communicate(timeout=PATIENCE)


def completed(root: Path, study: str) -> int:
    """COMPLETE trials in the study's journal (0 before the study exists)."""
    try:
        return states(root, study).count(TrialState.COMPLETE)
    except (AutotuneError, AssertionError):  # not created yet
        return 0


@pytest.mark.slow  # three tuning processes, one after another
def test_a_process_started_later_joins_the_run_in_progress(tmp_path: Path) -> None:
    """A second process asking for 150 trials while a first run of 150 is in progress joins
    that run (the study ends with 150); a run started after both ended adds its own trials.
    The first is stopped (SIGSTOP, outside the study lock: the test holds it) once it has
    finished a few trials, and continued once the second has run a trial of its own, so that
    the first is in progress however fast or slow either process is."""
    first = tune(tmp_path, "apart", 150, *SLOW)
    wait_until(lambda: completed(tmp_path, "apart") >= 3, "the first run's trials", first)
    gate = SharedStudy(address(tmp_path, "apart", "journal"), "apart")
    gate.acquire()
    os.kill(first.pid, signal.SIGSTOP)
    gate.release()
    gate.close()
    try:
        assert first.poll() is None, "the first run ended before the second could join it"
        before = completed(tmp_path, "apart")
        second = tune(tmp_path, "apart", 150, *SLOW)
        wait_until(lambda: completed(tmp_path, "apart") > before, "a trial of the second run")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    finish(first)
    assert "150 trials in storage" in finish(second)
    assert states(tmp_path, "apart") == [TrialState.COMPLETE] * 150
    finish(tune(tmp_path, "apart", 5, *SLOW))
    assert states(tmp_path, "apart") == [TrialState.COMPLETE] * 155


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_a_damaged_storage_file_is_one_line(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, kind: str
) -> None:
    assert main([*SMALL, "--trials", "20", "--study", "hurt", *where(in_tmp, "hurt", kind)]) == 0
    path = (
        in_tmp / "results" / "hurt" / "study.journal" if kind == "journal" else in_tmp / "hurt.db"
    )
    size = path.stat().st_size
    with open(path, "r+b") as handle:  # 8 KiB of garbage in the middle
        handle.seek(size // 3)
        handle.write(bytes(range(256)) * 32)
    (
        in_tmp / "results" / "hurt" / "leaderboard.parquet"
    ).unlink()  # reading back must use the storage
    capsys.readouterr()
    storage = where(in_tmp, "hurt", kind)
    for argv in (
        [*SMALL, "--trials", "5", "--study", "hurt", *storage],
        ["leaderboard", "hurt", *storage],
        ["plot", "hurt", *storage],
        *([["studies", *storage]] if storage else []),
    ):
        assert "storage" in one_line_error(capsys, argv)
    if (
        not storage
    ):  # the default storages: the damaged one is listed as damaged, the others as usual
        assert main(["studies"]) == 0
        line = next(
            line for line in capsys.readouterr().out.splitlines() if line.startswith("hurt")
        )
        assert "damaged: cannot read storage" in line


def _read_only_runner(results: Path) -> list[str] | None:
    """A command prefix under which `results` is read-only: chmod for an ordinary user; for root
    (whom permissions do not stop), a read-only bind mount in a private mount namespace."""
    if os.geteuid() != 0:
        for folder, _, _ in os.walk(results):
            os.chmod(folder, 0o555)
        return []
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            f"mount --bind -o ro '{results}' '{results}' && ! touch '{results}/probe'",
        ],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        return None
    return [
        "unshare",
        "-m",
        "sh",
        "-c",
        f"mount --bind -o ro '{results}' '{results}' && exec \"$0\" \"$@\"",
    ]


@pytest.mark.slow  # five command-line processes
def test_a_read_only_results_folder_is_one_line(in_tmp: Path) -> None:
    assert main([*SMALL, "--trials", "10", "--study", "kept"]) == 0
    assert main(["baseline", "--shape", "64x64x64"]) == 0
    prefix = _read_only_runner(in_tmp / "results")
    if prefix is None:
        pytest.skip("cannot make a folder read-only for root here (no unshare or mount)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        for argv in (
            [*SMALL, "--trials", "5", "--study", "new"],
            [*SMALL, "--trials", "5", "--study", "kept"],
            ["plot", "kept"],
            ["baseline", "--shape", "64x64x64"],
            ["sweep", "--shape", "64x64x64"],
        ):
            done = subprocess.run(
                [*prefix, sys.executable, "-m", "autotune", *argv],
                cwd=in_tmp,
                env=env,
                capture_output=True,
                text=True,
                timeout=PATIENCE,
                check=False,
            )
            assert done.returncode == 2, (argv, done.returncode, done.stderr)
            assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith(
                "autotune: error: cannot"
            ), (argv, done.stderr)
    finally:
        for folder, _, _ in os.walk(in_tmp / "results"):
            os.chmod(folder, 0o755)


def _refuse_writes_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attempt to create or write a file or folder below `folder` fails with EACCES, as on
    a read-only folder (in-process, so it holds for root and needs no mount namespace)."""
    import builtins
    import errno

    inside = lambda path: str(Path(os.fsdecode(path)).resolve()).startswith(str(folder.resolve()))  # noqa: E731
    real_open, real_os_open, real_mkdir = builtins.open, os.open, os.mkdir

    def deny(path: object) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))  # type: ignore[arg-type]

    def guarded_open(file, mode="r", *rest, **options):  # type: ignore[no-untyped-def]
        if (
            isinstance(file, (str, bytes, os.PathLike))
            and any(c in mode for c in "wax+")
            and inside(file)
        ):
            deny(file)
        return real_open(file, mode, *rest, **options)

    def guarded_os_open(path, flags, *rest, **options):  # type: ignore[no-untyped-def]
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and inside(path):
            deny(path)
        return real_os_open(path, flags, *rest, **options)

    def guarded_mkdir(path, *rest, **options):  # type: ignore[no-untyped-def]
        if inside(path) and not os.path.isdir(path):
            deny(path)
        return real_mkdir(path, *rest, **options)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(os, "open", guarded_os_open)
    monkeypatch.setattr(os, "mkdir", guarded_mkdir)


def test_refused_writes_are_one_line_in_process(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-only results folder, in-process: runs for root too (where the test above may skip)."""
    assert main([*SMALL, "--trials", "10", "--study", "kept"]) == 0
    capsys.readouterr()
    _refuse_writes_under(in_tmp / "results", monkeypatch)
    for argv in (
        [*SMALL, "--trials", "5", "--study", "new"],
        [*SMALL, "--trials", "5", "--study", "kept"],
        ["baseline", "--shape", "64x64x64"],
        ["sweep", "--shape", "64x64x64"],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("autotune: error: cannot"), (argv, err)


@pytest.mark.parametrize(
    "extra",
    [
        [],
        pytest.param(["--workers", "2"], marks=pytest.mark.slow),  # two worker processes, twice
        ["--storage", "sqlite:///results/s.db"],
    ],
)
def test_a_clean_exit_leaves_no_lock_or_lease_file(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, extra: list[str]
) -> None:
    (in_tmp / "results").mkdir()
    assert main([*SMALL, "--trials", "12", "--study", "s", *extra]) == 0
    assert main([*SMALL, "--trials", "3", "--study", "s", *extra]) == 0  # a resume too
    left = sorted(p.name for p in (in_tmp / "results").rglob("*") if p.is_file())
    assert not [n for n in left if n.endswith((".lock", ".new")) or ".worker-" in n], left
    assert [n for n in left if "study" in n or n.endswith(".db")] == (
        ["s.db"] if extra[:1] == ["--storage"] else ["study.journal"]
    )


def test_a_study_begun_before_the_journal_resumes_in_its_sqlite_file(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    """results/<study>/study.db, the default storage before the journal: a run without --storage
    resumes it there, and the commands that read back find it."""
    (in_tmp / "results" / "old").mkdir(parents=True)
    assert (
        main(
            [
                *SMALL,
                "--trials",
                "12",
                "--study",
                "old",
                "--storage",
                f"sqlite:///{in_tmp / 'results' / 'old' / 'study.db'}",
            ]
        )
        == 0
    )
    assert main([*SMALL, "--trials", "3", "--study", "old"]) == 0
    assert "15 trials in storage" in capsys.readouterr().out
    assert sorted(p.name for p in (in_tmp / "results" / "old").iterdir()) == [
        "leaderboard.parquet",
        "study.db",
    ]
    (in_tmp / "results" / "old" / "leaderboard.parquet").unlink()
    assert main(["leaderboard", "old", "--top", "1"]) == 0
    assert "15 finished trials" in capsys.readouterr().err
    assert main(["studies", "--json"]) == 0
    assert '"trials": 15' in capsys.readouterr().out
