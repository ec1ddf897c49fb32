"""The ties' log (simcore/ga1/engine/tielog.py): for how many periods a relabelling of the slots
repeats the evictions that went to the smaller slot, and the choices a jump passes, logged."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.ga1.engine.compile_state import HEADER, TIE_LOG_AT, TIES
from simcore.ga1.engine.evict import LOG_PAIRS
from simcore.ga1.engine.tielog import log_jumped, tie_periods


def logged(pairs: list[tuple[int, int]]) -> np.ndarray:
    """A state holding only the ties' log, with `pairs` logged (winner, loser)."""
    st = np.zeros(HEADER + 2 * LOG_PAIRS, dtype=np.int64)
    st[TIE_LOG_AT], st[TIES] = HEADER, len(pairs)
    for n, (winner, loser) in enumerate(pairs):
        st[HEADER + 2 * n], st[HEADER + 2 * n + 1] = winner, loser
    return st


def pairs_of(st: np.ndarray) -> list[tuple[int, int]]:
    return [(int(st[HEADER + 2 * n]), int(st[HEADER + 2 * n + 1])) for n in range(int(st[TIES]))]


@pytest.mark.parametrize(
    ("pairs", "moved", "expected"),
    [
        ([], [1, 0, 2], 50),  # no tie: any relabelling repeats the period
        ([(0, 1)], [0, 1, 2], 50),  # the same slots: the same choices
        ([(0, 1)], [1, 0, 2], 0),  # swapped: the other slot would win
        ([(0, 2)], [1, 0, 2], 50),  # slot 1 in the other's place: 1 < 2 still, and back to 0
        ([(0, 1)], [1, 2, 0], 1),  # a 3-cycle: (1, 2) in order, then (2, 0) not
        ([(0, 2), (1, 3)], [2, 3, 0, 1], 0),  # (2, 0) at once
        ([(0, 1)], [2, 3, 4, 5, 0, 1], 50),  # (2, 3), (4, 5), then the identity
    ],
)
def test_periods_whose_choices_the_relabelling_repeats(
    pairs: list[tuple[int, int]], moved: list[int], expected: int
) -> None:
    power = np.zeros(len(moved), dtype=np.int64)
    assert tie_periods(logged(pairs), 0, np.array(moved, dtype=np.int64), 50, power) == expected


def test_only_the_pairs_since_the_period_began_count() -> None:
    st, moved, power = logged([(1, 0), (0, 1)]), np.array([1, 0]), np.zeros(2, dtype=np.int64)
    assert tie_periods(st, 1, moved, 9, power) == 0 and tie_periods(st, 2, moved, 9, power) == 9


def test_a_period_the_ring_no_longer_holds_repeats_only_unrelabelled() -> None:
    st, power = logged([(0, 1)]), np.zeros(3, dtype=np.int64)
    st[TIES] = LOG_PAIRS + 1
    assert tie_periods(st, 0, np.array([0, 2, 1]), 9, power) == 0
    assert tie_periods(st, 0, np.array([0, 1, 2]), 9, power) == 9


def test_a_jump_logs_the_choices_it_passes_relabelled() -> None:
    st, power = logged([(0, 1)]), np.zeros(6, dtype=np.int64)
    log_jumped(st, 0, np.array([2, 3, 4, 5, 0, 1]), 5, power)
    # periods 2 and 3 choose (2, 3) and (4, 5); period 4 on repeats the first three
    assert pairs_of(st) == [(0, 1), (2, 3), (4, 5)]
    unmoved = logged([(0, 1)])
    log_jumped(unmoved, 0, np.arange(6), 5, power)
    assert pairs_of(unmoved) == [(0, 1)]


def test_a_jump_past_the_ring_forgets_every_older_period() -> None:
    pairs = [(0, 1)] * (LOG_PAIRS // 2)
    st, power = logged(pairs), np.zeros(8, dtype=np.int64)
    log_jumped(st, 0, np.array([1, 2, 3, 4, 5, 6, 7, 0]), 7, power)
    assert st[TIES] > LOG_PAIRS
    assert tie_periods(st, 0, np.array([1, 0, 2, 3, 4, 5, 6, 7]), 9, power) == 0
