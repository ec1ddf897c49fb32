"""The tolerance a fused program's results are held to, and the verdict of a verification.

Programs and numpy both compute in float64. They differ in the order of additions (a tile
product sums T terms, a k loop adds tile products in turn; numpy's matmul blocks its own way),
in where a scale is applied (attention scales Q's tiles, not Q K^T), in how GELU and SiLU are
composed (x / (1 + exp(-2u)) for 0.5 x (1 + tanh u)) and, in attention, in the online softmax
(a running maximum, the sum rescaled by exp(m_old - m_new), the output divided at the end).
Each costs a few units in the last place per operation, growing with the length of a sum.
A result passes when, everywhere,

    |got - want| <= RTOL * (|want| + max |want|) + ATOL

with RTOL = 1e-9 and ATOL = 1e-12: relative to the entry, and, for entries that are zero up to
rounding (an output that cancels), relative to the largest entry of the tensor; the absolute
part covers a tensor whose entries are all that small (GELU's far negative tail, where numpy's
own 1 + tanh(u) has cancelled). A mistake in a program (a missing rescale, a wrong mask, a tile
left out) errs by far more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simcore.ga1.hazards import Hazard

RTOL = 1e-9
ATOL = 1e-12


def within_tolerance(got: np.ndarray, want: np.ndarray) -> tuple[bool, float]:
    """Whether got equals want within the tolerance, and the largest error as a share of the
    allowance (1.0 is the edge)."""
    if got.shape != want.shape:
        return False, math.inf
    if want.size == 0:
        return True, 0.0
    scale = float(np.max(np.abs(want)))
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
    error = np.where(got == want, 0.0, error)
    allowance = RTOL * (np.abs(want) + scale) + ATOL
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(error == 0.0, 0.0, error / allowance)
    worst = float(np.max(np.where(np.isnan(share), np.inf, share)))
    return worst <= 1.0, worst


@dataclass(frozen=True)
class FusedVerification:
    """The three checks of a fused program: results within the tolerance (`worst` is the
    largest error as a share of the allowance), a clean hazard replay, and the timings
    (cycles, loads, stores) of the reference simulator, the compiled engine, and the tree
    timed periodically and in full, all equal. `reduced` names the stand-in verified when the
    group was too large to run functionally."""

    result_ok: bool
    worst: float
    hazards: tuple[Hazard, ...]
    timings: tuple[tuple[int, int, int], ...]
    reduced: str | None = None

    @property
    def timing_ok(self) -> bool:
        return len(set(self.timings)) == 1

    @property
    def ok(self) -> bool:
        return self.result_ok and not self.hazards and self.timing_ok

    @property
    def label(self) -> str:
        """ "verified", "verified-reduced" (the checks passed on the reduced stand-in), or
        "failed"."""
        if not self.ok:
            return "failed"
        return "verified" if self.reduced is None else "verified-reduced"

    def describe(self) -> str:
        if self.ok:
            where = "" if self.reduced is None else f" on its stand-in {self.reduced}"
            return (
                f"{self.label}{where}: outputs equal numpy's within tolerance "
                f"({self.worst:.2g} of it), hazard replay clean, engine and tree timings "
                f"equal the reference ({self.timings[0][0]} cycles)"
            )
        problems = []
        if not self.result_ok:
            problems.append(f"outputs differ from numpy's ({self.worst:.3g} x the tolerance)")
        if self.hazards:
            problems.append(f"{len(self.hazards)} hazard(s), first: {self.hazards[0]}")
        if not self.timing_ok:
            problems.append(f"timings differ (reference, engine, periodic, full): {self.timings}")
        return "; ".join(problems)
