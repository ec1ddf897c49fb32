"""Checks shared by the schedule tests: an exact run of a program, and equal timings."""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore import Machine, Program, Shape, matmul_inputs, replay, simulate


def run_exact(shape: Shape, machine: Machine, program: Program, seed: int = 0) -> tuple[int, list]:
    """Simulate with integer-valued data; assert numpy's exact product; return cycles, hazards."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, size=(shape.m, shape.k)).astype(float)
    b = rng.integers(-4, 5, size=(shape.k, shape.n)).astype(float)
    result = simulate(machine, program, inputs=matmul_inputs(a, b), trace=True)
    assert result.outputs is not None
    np.testing.assert_array_equal(result.outputs["C"], a @ b)
    assert result.trace is not None
    return result.cycles, replay(result.trace)


def same_timing(ours: Any, reference: Any) -> None:
    """Two timings (engine and reference) agree on cycles, busy times and counts."""
    assert (ours.cycles, ours.busy, ours.loads, ours.stores, ours.products) == (
        reference.cycles,
        reference.busy,
        reference.loads,
        reference.stores,
        reference.products,
    )
