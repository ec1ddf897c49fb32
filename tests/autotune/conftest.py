"""Fixtures for the tuner's tests: a throwaway PostgreSQL server on loopback, `--require-postgres`
(CI) which turns the skip into a failure when the server binaries are missing, and `stored`, a
study read back from its default journal with Optuna's own reader. The option itself is
declared in tests/conftest.py: pytest reads command-line options only from the top conftest."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

from tests.helpers.waiting import PATIENCE

if TYPE_CHECKING:
    import optuna


def _binaries() -> tuple[str, str] | None:
    for folder in sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    ):
        initdb, pg_ctl = os.path.join(folder, "initdb"), os.path.join(folder, "pg_ctl")
        if os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK):
            return initdb, pg_ctl
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(args: list[str]) -> list[str]:
    """initdb and the server refuse to run as root: run them as the `postgres` OS user."""
    if os.geteuid() != 0:
        return args
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--", *args]
    return ["su", "postgres", "-c", " ".join(args)]


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """postgresql://postgres@127.0.0.1:PORT/autotune on a server this fixture starts and stops."""
    found = _binaries()
    if found is None:
        reason = "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); apt-get install postgresql"
        if request.config.getoption("--require-postgres"):
            pytest.fail(reason + " (--require-postgres)")
        pytest.skip(reason)
    initdb, pg_ctl = found
    root = Path(tempfile.mkdtemp(prefix="autotune-pg-"))
    data, port = root / "data", _free_port()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            _as_postgres(args), check=True, capture_output=True, text=True, cwd=root
        )

    try:
        run([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        run(
            [
                pg_ctl,
                "-D",
                str(data),
                "-l",
                str(root / "server.log"),
                "-w",
                "-t",
                "30",
                "-o",
                f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} -c fsync=off",
                "start",
            ]
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {exc.stderr or exc.stdout}")
    try:
        import psycopg2

        deadline = time.monotonic() + PATIENCE  # the server accepts connections
        while True:
            try:
                conn = psycopg2.connect(
                    host="127.0.0.1", port=port, user="postgres", dbname="postgres"
                )
                break
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        conn.autocommit = True
        conn.cursor().execute("CREATE DATABASE autotune")
        conn.close()
        yield f"postgresql://postgres@127.0.0.1:{port}/autotune"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            cwd=root,
        )
        shutil.rmtree(root, ignore_errors=True)


def stored_study(root: Path, study: str) -> optuna.Study:
    """Study `study` from its default storage under <root>/results/, read with Optuna's own journal
    reader: the tuner's journal is Optuna's format, so any Optuna tool reads it."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = root / "results" / study / "study.journal"
    assert path.is_file(), f"no journal at {path}"
    return optuna.load_study(
        study_name=study, storage=JournalStorage(JournalFileBackend(str(path)))
    )


@pytest.fixture()
def stored() -> Callable[[Path, str], optuna.Study]:
    return stored_study


_STOP_AT_BOUND = [False]  # set for the tests marked `stops_at_bound`


@pytest.fixture(autouse=True, scope="session")
def whole_budgets() -> Iterator[None]:
    """In-process runs use their whole trial budgets (the tests count trials on small shapes,
    which reach their bounds in a few), session fixtures' runs included, unless the test is
    marked `stops_at_bound`."""
    import autotune.run.optimise as optimise

    real = optimise.proven_bound
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(optimise, "proven_bound", lambda s: real(s) if _STOP_AT_BOUND[0] else None)
        yield


@pytest.fixture(autouse=True)
def stops_at_bound(request: pytest.FixtureRequest) -> Iterator[None]:
    _STOP_AT_BOUND[0] = request.node.get_closest_marker("stops_at_bound") is not None
    yield
    _STOP_AT_BOUND[0] = False
