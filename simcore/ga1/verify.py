"""Verification of a matmul program: the functional result equals numpy's product and the
independent hazard replay of its trace is clean."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.ga1.hazards import Hazard, replay
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.simulator import SimResult, matmul_inputs, simulate
from simcore.shape import Shape


@dataclass(frozen=True)
class Verification:
    result_ok: bool
    hazards: tuple[Hazard, ...]
    cycles: int
    max_abs_error: float
    hazards_found: int | None = None  # all hazards found, when `hazards` keeps only the first ones

    @property
    def ok(self) -> bool:
        return self.result_ok and not self.hazards

    @property
    def hazard_count(self) -> int:
        return len(self.hazards) if self.hazards_found is None else self.hazards_found

    def describe(self) -> str:
        if self.ok:
            return "verified: result equals numpy's product, hazard replay clean"
        problems = []
        if not self.result_ok:
            problems.append(
                f"result differs from numpy's product (max error {self.max_abs_error:g})"
            )
        if self.hazards:
            problems.append(f"{self.hazard_count} hazard(s), first: {self.hazards[0]}")
        return "; ".join(problems)


def random_operands(shape: Shape, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Small integer operands: every product and sum is exact in float64, so equality is exact."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=(shape.m, shape.k)).astype(np.float64)
    b = rng.integers(-3, 4, size=(shape.k, shape.n)).astype(np.float64)
    return a, b


def verify_matmul(
    machine: Machine, program: Program, shape: Shape, seed: int = 1
) -> tuple[Verification, SimResult]:
    """Run `program` functionally with a trace; compare C with numpy and replay the hazards."""
    a, b = random_operands(shape, seed)
    result = simulate(machine, program, inputs=matmul_inputs(a, b), trace=True)
    assert result.outputs is not None and result.trace is not None
    expected = a @ b
    got = result.outputs["C"]
    error = float(np.max(np.abs(got - expected))) if expected.size else 0.0
    return Verification(
        result_ok=bool(np.array_equal(got, expected)),
        hazards=tuple(replay(result.trace)),
        cycles=result.cycles,
        max_abs_error=error,
    ), result
