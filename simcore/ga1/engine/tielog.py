"""The one decision of the compiler that depends on slot numbers, as the periodic timing sees it.

An eviction whose farthest next use is tied goes to the smaller slot. The compiler logs each such
choice as pairs (winner, loser), in the slots' own numbers (evict.py's log_ties, in a ring of
LOG_PAIRS pairs in the state; st[TIES] counts the pairs logged). A period from boundary x to
boundary x' whose signatures match maps slot s at x to slot moved[s] at x' (clocksnap.py). The
state at the start of the period j periods on is the state at x with its slots relabelled by
moved^j; its choices are the first period's, relabelled, exactly when moved^j keeps every
winner of the first period's pairs before its loser. `tie_periods` says for how many periods
that holds: moved^j for j = 1, 2, ... until it is the identity again (later periods repeat
earlier ones), at most MOST_PERIODS of them.

A jump passes whole periods whose choices are the first one's relabelled: `log_jumped` logs
them, relabelled, so that a period at an outer level that holds the jump knows every choice in
it. A period whose pairs the ring no longer holds (more than LOG_PAIRS of them) repeats only
with no slot relabelled.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.compile_state import TIE_LOG_AT, TIES
from simcore.ga1.engine.evict import LOG_PAIRS
from simcore.ga1.engine.jit import callee

MOST_PERIODS = 4096  # powers of a relabelling checked at most (its order is usually small)


@callee
def _is_identity(moved: np.ndarray) -> bool:
    for s in range(moved.shape[0]):
        if moved[s] != s:
            return False
    return True


@callee
def _next_power(moved: np.ndarray, power: np.ndarray) -> bool:
    """power = moved applied after power (the next power of moved); whether it is the identity."""
    identity = True
    for s in range(moved.shape[0]):
        power[s] = moved[power[s]]
        identity = identity and power[s] == s
    return identity


@callee
def _keeps_order(st: np.ndarray, since: int, now: int, power: np.ndarray) -> bool:
    """Whether the relabelling `power` keeps each pair logged from `since` to `now` in order."""
    at = st[TIE_LOG_AT]
    for n in range(since, now):
        place = at + 2 * (n % LOG_PAIRS)
        if power[st[place]] > power[st[place + 1]]:
            return False
    return True


@callee
def tie_periods(
    st: np.ndarray, since: int, moved: np.ndarray, periods: int, power: np.ndarray
) -> int:
    """How many of the next `periods` periods make the choices of the one whose pairs were logged
    from `since` on (now st[TIES]), relabelled by moved once more each period."""
    now = st[TIES]
    if now == since or _is_identity(moved):
        return periods
    if now - since > LOG_PAIRS:
        return 0  # the ring no longer holds them all
    for s in range(moved.shape[0]):
        power[s] = s
    for j in range(1, min(periods, MOST_PERIODS) + 1):
        if _next_power(moved, power):
            return periods  # period j + 1 on repeats period 1 on
        if not _keeps_order(st, since, now, power):
            return j - 1
    return min(periods, MOST_PERIODS)


@callee
def log_jumped(
    st: np.ndarray, since: int, moved: np.ndarray, periods: int, power: np.ndarray
) -> None:
    """Log the choices of the `periods` periods a jump passes: those of the period logged from
    `since` on (to st[TIES]), relabelled by moved^j in period j + 1."""
    now = st[TIES]
    if now == since or _is_identity(moved):
        return  # none, or the same pairs again: logged already
    at, count = st[TIE_LOG_AT], now
    for s in range(moved.shape[0]):
        power[s] = s
    for _j in range(min(periods, MOST_PERIODS)):
        if _next_power(moved, power):
            break  # the same pairs as a period before
        if count + (now - since) - since > LOG_PAIRS:
            count = since + 2 * LOG_PAIRS  # more than the ring holds: no older period is known
            break
        for n in range(since, now):
            place, target = at + 2 * (n % LOG_PAIRS), at + 2 * (count % LOG_PAIRS)
            st[target], st[target + 1] = power[st[place]], power[st[place + 1]]
            count += 1
    st[TIES] = count
