"""One vector operation's program on one machine under one schedule: built, timed, verified.

`vector_program(op, machine, params)` returns a VectorProgram. `timing()` times it from its
timing tree (memory for the tree, never for the whole program); `program()` materialises the
flat program the reference simulator runs; `verify()` runs that program functionally on random
inputs and requires all three of: the outputs equal numpy's within the stated tolerance, the
independent hazard replay of its trace is clean, and the compiled engine's timing, the tree's
periodic timing and its full timing all equal the reference simulator's, cycle for cycle. An
operation too large to run functionally is verified on its reduced stand-in, and labelled so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from simcore.energy.cost import Cost
from simcore.energy.technology import Technology
from simcore.ga1.engine.programs import time_program
from simcore.ga1.hazards import Hazard, replay
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.simulator import simulate
from simcore.ga1.timing import Timing
from simcore.ga1.vector import reference
from simcore.ga1.vector.build import emit_program
from simcore.ga1.vector.costs import vector_cost
from simcore.ga1.vector.emit import Emitter, Tree, tree_rows
from simcore.ga1.vector.kernels import kernel_for
from simcore.ga1.vector.ops import VectorOp
from simcore.ga1.vector.params import VectorParams
from simcore.ga1.vector.plan import Plan
from simcore.ga1.vector.reduced import MOST_VERIFIED, reduced_op
from simcore.ga1.vector.timing import FULL, PERIODIC, time_tree

ROOMY = 1 << 30  # a slot count no schedule reaches


@dataclass(frozen=True)
class VectorVerification:
    """A verification's three checks. `worst` is the largest error as a share of the
    tolerance's allowance (at most 1.0 passes); `timings` are (cycles, loads, stores) of the
    reference simulator, the compiled engine, the tree timed periodically and in full."""

    result_ok: bool
    worst: float
    hazards: tuple[Hazard, ...]
    timings: tuple[tuple[int, int, int], ...]
    reduced: VectorOp | None = None  # the stand-in verified, when the operation was too large

    @property
    def timing_ok(self) -> bool:
        return len(set(self.timings)) == 1

    @property
    def ok(self) -> bool:
        return self.result_ok and not self.hazards and self.timing_ok

    @property
    def cycles(self) -> int:
        return self.timings[0][0]

    @property
    def label(self) -> str:
        """ "verified", "verified-reduced" (the checks passed on the reduced stand-in), or
        "failed"."""
        if not self.ok:
            return "failed"
        return "verified" if self.reduced is None else "verified-reduced"

    def describe(self) -> str:
        if self.ok:
            where = "" if self.reduced is None else f" on its stand-in {self.reduced.describe()}"
            return (
                f"{self.label}{where}: outputs equal numpy's within tolerance, hazard replay "
                "clean, engine and tree timings equal the reference"
            )
        problems = []
        if not self.result_ok:
            problems.append(f"outputs differ from numpy's ({self.worst:.3g} x the tolerance)")
        if self.hazards:
            problems.append(f"{len(self.hazards)} hazard(s), first: {self.hazards[0]}")
        if not self.timing_ok:
            problems.append(f"timings differ (reference, engine, periodic, full): {self.timings}")
        return "; ".join(problems)


def _counts(timing: Timing) -> tuple[int, int, int]:
    return (timing.cycles, timing.loads, timing.stores)


class VectorProgram:
    """A vector operation's program (see the module's note)."""

    def __init__(self, op: VectorOp, machine: Machine, params: VectorParams | None = None) -> None:
        self.op, self.machine = op, machine
        self.params = params if params is not None else VectorParams()
        self.plan = Plan(op, self.params, machine, kernel_for(op))
        self._tree: Tree | None = None

    @property
    def slots_needed(self) -> int:
        return self.plan.slots_needed

    def program(self) -> Program:
        e = Emitter()
        emit_program(e, self.plan)
        return e.program()

    def tree(self) -> Tree:
        """The timing tree (built once)."""
        if self._tree is None:
            e = Emitter(compress=True)
            emit_program(e, self.plan)
            self._tree = e.tree()
        return self._tree

    def timing(self, method: str = PERIODIC) -> Timing:
        """Cycles, busy times, loads and stores; "periodic" (exact, jumps repeated periods) or
        "full" (every instruction)."""
        return time_tree(self.machine, self.tree(), method)

    def cost(self, tech: Technology | None = None, timing: Timing | None = None) -> Cost:
        """Energy by category (the vector unit's lane operations and scratchpad accesses, the
        DMA's traffic) and area, from the technology table (the default when None)."""
        timing = timing if timing is not None else self.timing()
        return vector_cost(self.machine, timing, self.tree(), tech)

    def inputs(self, seed: int = 1) -> dict[str, np.ndarray]:
        return reference.program_inputs(self.plan, seed)

    def verify(self, seed: int = 1, most: int = MOST_VERIFIED) -> VectorVerification:
        """The three checks on the program, or (more than `most` instructions) on its reduced
        stand-in (simcore/ga1/vector/reduced.py), which the result names."""
        if tree_rows(self.tree()) <= most:
            return self._verify(seed)
        small = reduced_op(self.op, self.params, self.machine.T)
        found = VectorProgram(small, self.machine, self.params)._verify(seed)
        return dataclasses.replace(found, reduced=small)

    def _verify(self, seed: int) -> VectorVerification:
        program, dram = self.program(), self.inputs(seed)
        result = simulate(self.machine, program, inputs=dram, trace=True)
        assert result.outputs is not None and result.trace is not None
        expected = reference.expected_outputs(self.plan, dram)
        verdicts = [reference.within_tolerance(result.outputs[n], w) for n, w in expected.items()]
        tree = self.tree()
        timings = (
            (result.cycles, result.loads, result.stores),
            _counts(time_program(self.machine, program)),
            _counts(time_tree(self.machine, tree, PERIODIC)),
            _counts(time_tree(self.machine, tree, FULL)),
        )
        return VectorVerification(
            result_ok=all(ok for ok, _ in verdicts),
            worst=max(worst for _, worst in verdicts),
            hazards=tuple(replay(result.trace)),
            timings=timings,
        )


def slots_needed(op: VectorOp, machine: Machine, params: VectorParams | None = None) -> int:
    """The slots the schedule needs on a machine like `machine` (any slot count)."""
    roomy = machine.replace(slots=ROOMY)
    return Plan(op, params or VectorParams(), roomy, kernel_for(op)).slots_needed


def vector_program(
    op: VectorOp, machine: Machine, params: VectorParams | None = None
) -> VectorProgram:
    """The program of `op` on `machine` under `params` (the defaults when None)."""
    return VectorProgram(op, machine, params)
