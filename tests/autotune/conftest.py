"""The tuner's tests' shared fixture `stored`: a study read back from its default journal with
Optuna's own reader. The storage tests' PostgreSQL server is in storage/conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

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
