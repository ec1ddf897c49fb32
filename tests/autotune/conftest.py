"""The tuner's tests' shared fixture `stored`: a study read back from its default journal with
Optuna's own reader. The storage tests' PostgreSQL server is in storage/conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import pytest

if TYPE_CHECKING:
    import optuna


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


@pytest.fixture(autouse=True)
def no_stop_left() -> Iterator[None]:
    """A test that interrupted a run in this process leaves the process's stop request as a run
    leaves it (a command exits then): the next test starts without it."""
    yield
    from autotune.interrupt import STOP

    STOP.reset()
