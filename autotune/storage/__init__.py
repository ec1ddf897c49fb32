"""Optuna behind one adapter: everything the tuner needs beyond Optuna's public study API.

Here and nowhere else: where a study's storage lives and how it is opened or read back
(`locations`), the default storage, a journal file written by our own backend (`journal`), the
kinds of storage behind one interface with their locks and dead-worker handling (`stores`,
`locks`), and one process's handle on a shared study with the exact global budget (`shared`).
Each Optuna behaviour this relies on has a test in tests/autotune/test_optuna_adapter.py;
pyproject pins the Optuna major version those tests passed with."""

from __future__ import annotations

import os
import socket

from autotune.storage.locations import (
    JOURNAL_FILE,
    MEMORY,
    SQLITE_FILE,
    default_storage,
    existing_study,
    is_memory,
    local_storage,
    local_storages,
    read_studies,
    read_study,
    study_names,
)
from autotune.storage.shared import (
    DONE,
    GRACE_SECONDS,
    HEARTBEAT_SECONDS,
    SharedStudy,
    finished_count,
    set_trial_user_attr,
)

WORKER = f"{socket.gethostname()}:{os.getpid()}"

__all__ = [
    "DONE",
    "GRACE_SECONDS",
    "HEARTBEAT_SECONDS",
    "JOURNAL_FILE",
    "MEMORY",
    "SQLITE_FILE",
    "WORKER",
    "SharedStudy",
    "default_storage",
    "existing_study",
    "finished_count",
    "is_memory",
    "local_storage",
    "local_storages",
    "read_studies",
    "read_study",
    "set_trial_user_attr",
    "study_names",
]
