"""Worker processes that meet before their first evaluation, so that a test of concurrent workers
sees them overlap however loaded the machine is (a spawned worker can otherwise run the whole
budget before the next one has started)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, fields
from pathlib import Path

from autotune.record import Evaluation
from autotune.search.problem import Candidate, Problem


@dataclass(frozen=True)
class MeetingProblem(Problem):
    """A `Problem` whose first evaluation in each process waits until `workers` processes have
    reached theirs: each worker then holds a running trial while the others propose."""

    meeting: str = ""  # a folder every worker sees, empty at the start
    workers: int = 2
    patience: float = 120.0  # seconds to wait before going on alone (the test then fails)

    def evaluate(self, candidate: Candidate) -> Evaluation:
        folder = Path(self.meeting)
        arrived = folder / str(os.getpid())
        if not arrived.exists():
            arrived.touch()
            deadline = time.monotonic() + self.patience
            while len(list(folder.iterdir())) < self.workers and time.monotonic() < deadline:
                time.sleep(0.05)
        return super().evaluate(candidate)


def meeting(search: Problem, folder: Path, workers: int = 2) -> MeetingProblem:
    """`search` as a MeetingProblem whose workers meet in `folder` (created here)."""
    folder.mkdir(parents=True, exist_ok=True)
    same = {f.name: getattr(search, f.name) for f in fields(Problem)}
    return MeetingProblem(**same, meeting=str(folder), workers=workers)
