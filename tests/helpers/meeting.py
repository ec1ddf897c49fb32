"""Worker processes that meet before their first evaluation, so that a test of concurrent workers
sees them overlap however loaded the machine is (a spawned worker can otherwise run the whole
budget before the next one has started); and command-line processes that meet once each has
joined its study's run."""

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
        if not (folder / str(os.getpid())).exists():
            _meet(folder, self.workers, self.patience)
        return super().evaluate(candidate)


def meeting(search: Problem, folder: Path, workers: int = 2) -> MeetingProblem:
    """`search` as a MeetingProblem whose workers meet in `folder` (created here)."""
    folder.mkdir(parents=True, exist_ok=True)
    same = {f.name: getattr(search, f.name) for f in fields(Problem)}
    return MeetingProblem(**same, meeting=str(folder), workers=workers)


def _meet(folder: Path, workers: int, patience: float) -> None:
    """Arrive in `folder`, then wait until `workers` processes have (or the patience is spent)."""
    (folder / str(os.getpid())).touch()
    deadline = time.monotonic() + patience
    while len(list(folder.iterdir())) < workers and time.monotonic() < deadline:
        time.sleep(0.05)


def main_meeting_after_begin(folder: str, workers: int, argv: list[str]) -> int:
    """The command line, in a process whose run, once it has set or joined its study's target
    (`SharedStudy.begin`), waits for `workers` such processes before its first trial: processes
    started together are then all in the run before any of them can finish it."""
    from autotune.cli.main import main
    from autotune.storage import SharedStudy

    begin = SharedStudy.begin

    def begin_then_meet(self: SharedStudy, study: object, trials: int) -> int:
        target = begin(self, study, trials)  # type: ignore[arg-type]
        _meet(Path(folder), workers, patience=600.0)
        return target

    SharedStudy.begin = begin_then_meet  # type: ignore[method-assign]
    return main(argv)
