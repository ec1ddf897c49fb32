"""One fused group's program on one machine under one schedule: built, timed, costed, verified.

`fused_program(group, machine, params)` checks the slots by arithmetic (a ScheduleError names
the slots over) and returns a FusedProgram. `timing()` times its compact tree with the compiled
engine, jumping repeated periods (memory for the tree, never for the whole program);
`program()` is the flat program the reference simulator runs; `verify()` runs it on random
inputs and requires the results within the tolerance (check.py), a clean hazard replay, and
equal timings from the reference simulator, the compiled engine and the tree (periodic and
full). A group whose program is too large to run functionally is verified on its reduced
stand-in (reduced.py), and labelled so.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from simcore.energy.cost import Cost
from simcore.energy.technology import Technology
from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.ga1.engine.programs import time_program
from simcore.ga1.fused.attention import AttentionBuilder
from simcore.ga1.fused.check import FusedVerification, within_tolerance
from simcore.ga1.fused.emit import FusedEmitter, Layout
from simcore.ga1.fused.gemm import GemmBuilder
from simcore.ga1.fused.mlp import MlpBuilder
from simcore.ga1.fused.params import FusedParams, check_params, default_params
from simcore.ga1.fused.reduced import reduced_group
from simcore.ga1.hazards import replay
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.simulator import simulate
from simcore.ga1.timing import Timing
from simcore.ga1.vector.costs import vector_cost
from simcore.ga1.vector.emit import Tree, tree_rows
from simcore.ga1.vector.reduced import MOST_VERIFIED
from simcore.ga1.vector.timing import FULL, PERIODIC, time_tree

ROOMY = 1 << 30  # a slot count no schedule reaches


class Builder(Protocol):
    layout: Layout

    def emit(self, e: FusedEmitter) -> None: ...

    def inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]: ...

    def expected(self, dram: dict[str, np.ndarray]) -> dict[str, np.ndarray]: ...


def builder_for(group: FusedGroup, params: FusedParams, machine: Machine) -> Builder:
    check_params(group, params)
    if isinstance(group, EpilogueGemm):
        return GemmBuilder(group, params, machine)  # type: ignore[arg-type]
    if isinstance(group, FusedMlp):
        return MlpBuilder(group, params, machine)  # type: ignore[arg-type]
    assert isinstance(group, FusedAttention)
    return AttentionBuilder(group, params, machine)  # type: ignore[arg-type]


def _counts(timing: Timing) -> tuple[int, int, int]:
    return (timing.cycles, timing.loads, timing.stores)


class FusedProgram:
    """A fused group's program (see the module's note)."""

    def __init__(
        self, group: FusedGroup, machine: Machine, params: FusedParams | None = None
    ) -> None:
        self.group, self.machine = group, machine
        self.params = params if params is not None else default_params(group)
        self.builder = builder_for(group, self.params, machine)
        self._tree: Tree | None = None

    @property
    def slots_needed(self) -> int:
        return self.builder.layout.size

    def program(self) -> Program:
        e = FusedEmitter()
        self.builder.emit(e)
        return e.program()

    def tree(self) -> Tree:
        """The timing tree (built once)."""
        if self._tree is None:
            e = FusedEmitter(compress=True)
            self.builder.emit(e)
            self._tree = e.tree()
        return self._tree

    def instructions(self) -> int:
        return tree_rows(self.tree())

    def timing(self, method: str = PERIODIC) -> Timing:
        """Cycles, busy times, loads and stores; "periodic" (exact, jumps repeated periods) or
        "full" (every instruction)."""
        return time_tree(self.machine, self.tree(), method)

    def cost(self, tech: Technology | None = None, timing: Timing | None = None) -> Cost:
        """Energy by category and area, from the technology table (the default when None)."""
        timing = timing if timing is not None else self.timing()
        return vector_cost(self.machine, timing, self.tree(), tech)

    def inputs(self, seed: int = 1) -> dict[str, np.ndarray]:
        return self.builder.inputs(np.random.default_rng(seed))

    def verify(self, seed: int = 1, most: int = MOST_VERIFIED) -> FusedVerification:
        """The three checks on the program, or (more than `most` instructions) on its reduced
        stand-in, which the result names."""
        if self.instructions() <= most:
            return self._verify(seed)
        small = reduced_group(self.group, self.params, self.machine.T)
        found = FusedProgram(small, self.machine, self.params)._verify(seed)
        return dataclasses.replace(found, reduced=small.describe())

    def _verify(self, seed: int) -> FusedVerification:
        program, dram = self.program(), self.inputs(seed)
        result = simulate(self.machine, program, inputs=dram, trace=True)
        assert result.outputs is not None and result.trace is not None
        expected = self.builder.expected(dram)
        verdicts = [within_tolerance(result.outputs[n], w) for n, w in expected.items()]
        tree = self.tree()
        timings = (
            (result.cycles, result.loads, result.stores),
            _counts(time_program(self.machine, program)),
            _counts(time_tree(self.machine, tree, PERIODIC)),
            _counts(time_tree(self.machine, tree, FULL)),
        )
        return FusedVerification(
            result_ok=all(ok for ok, _ in verdicts),
            worst=max(worst for _, worst in verdicts),
            hazards=tuple(replay(result.trace)),
            timings=timings,
        )


def fused_program(
    group: FusedGroup, machine: Machine, params: FusedParams | None = None
) -> FusedProgram:
    """The program of `group` on `machine` under `params` (the kind's defaults when None)."""
    return FusedProgram(group, machine, params)


def slots_needed(group: FusedGroup, machine: Machine, params: FusedParams | None = None) -> int:
    """The slots the schedule needs on a machine like `machine` (any slot count)."""
    roomy = machine.replace(slots=ROOMY)
    return FusedProgram(group, roomy, params).slots_needed
