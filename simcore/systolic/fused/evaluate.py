"""A fused group on a systolic machine, in figures: its event schedule checked for fit by
arithmetic, timed (fast or reference engine), counted, and held to its bound; and the same
group unfused, each operation its own kernel (a product under its block schedule, an
elementwise step as a pass over DRAM), the kernels run one after another.

* `evaluate_fused(machine, design, group, schedule)`: an MLP under an MlpSchedule (one event
  schedule, the hidden blocks on chip), or a product with its epilogue under a GemmSchedule;
* `evaluate_unfused(machine, design, group, schedules)`: the MLP's up projection, its bias and
  activation, its down projection and its bias; a product, then each epilogue step. With
  `epilogues=True` the products keep their own epilogues (bias, activation) and only the
  product-to-product intermediate goes through DRAM.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from simcore.fusion.groups import EpilogueGemm, FusedMlp
from simcore.systolic.blocked.schedule import check_design
from simcore.systolic.fused.bounds import FusedBound, fused_bound
from simcore.systolic.fused.counts import FusedCounts, fused_counts
from simcore.systolic.fused.engine import run_fast, run_reference
from simcore.systolic.fused.gemm import GemmBuild, PassBuild
from simcore.systolic.fused.mlp import MlpBuild
from simcore.systolic.fused.ops import Emitter, Tree
from simcore.systolic.fused.schedule import GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs, Slots
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign
from simcore.systolic.vector_unit import VectorUnit, default_vector_unit

ENGINES = ("fast", "reference")
Group = EpilogueGemm | FusedMlp


class InfeasibleFused(ValueError):
    """The blocks do not fit the stores; the message names each store and the words over."""


class Build(Protocol):
    slots: Slots

    def emit(self, e: Emitter) -> None: ...


@dataclass(frozen=True)
class Kernel:
    """One event schedule: what it is, its cycles, counts and tree."""

    name: str
    cycles: int
    counts: FusedCounts
    tree: Tree
    slots: Slots


@dataclass(frozen=True)
class FusedRun:
    machine: SystolicMachine
    design: SystolicDesign
    vector: VectorUnit
    group: Group
    kernels: tuple[Kernel, ...]
    bound: FusedBound
    engine: str

    @property
    def cycles(self) -> int:
        return sum(k.cycles for k in self.kernels)

    @property
    def macs(self) -> int:
        return sum(k.counts.macs for k in self.kernels)

    @property
    def dram_words(self) -> Fraction:
        return sum((k.counts.link_words for k in self.kernels), Fraction(0))

    @property
    def dram_bytes(self) -> Fraction:
        return self.dram_words * self.machine.word_bits / 8

    @property
    def dram_write_bytes(self) -> Fraction:
        return sum((k.counts.dram_writes(self.machine) for k in self.kernels), Fraction(0))

    @property
    def compute_cycles(self) -> int:
        return sum(k.counts.array_cycles for k in self.kernels)

    @property
    def bound_ratio(self) -> float:
        return self.cycles / self.bound.cycles

    def metrics(self) -> dict[str, float | int]:
        return {
            "cycles": self.cycles,
            "kernels": len(self.kernels),
            "compute_cycles": self.compute_cycles,
            "dram_words": float(self.dram_words),
            "dram_bytes": float(self.dram_bytes),
            "dram_write_bytes": float(self.dram_write_bytes),
            "lower_bound": self.bound.cycles,
            "bound_ratio": self.bound_ratio,
        }


def tree_of(build: Build, compress: bool = True) -> Tree:
    e = Emitter(compress)
    build.emit(e)
    return e.tree()


def _kernel(name: str, build: Build, design: SystolicDesign, engine: str) -> Kernel:
    over = build.slots.over()
    if over:
        raise InfeasibleFused(f"{name}: " + "; ".join(o.describe() for o in over))
    tree = tree_of(build)
    n = len(build.slots)
    cycles = run_fast(tree, n).cycles if engine == "fast" else run_reference(tree, n).cycles
    return Kernel(name, cycles, fused_counts(tree, build.slots, design), tree, build.slots)


def _check(machine: SystolicMachine, design: SystolicDesign, engine: str) -> None:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_design(machine, design)


def fused_build(costs: Costs, group: Group, schedule: GemmSchedule | MlpSchedule) -> Build:
    if isinstance(group, FusedMlp):
        if not isinstance(schedule, MlpSchedule):
            raise ValueError("an MLP takes an MlpSchedule")
        return MlpBuild(costs, group, schedule)
    if not isinstance(schedule, GemmSchedule):
        raise ValueError("a product takes a GemmSchedule")
    return GemmBuild(costs, group, schedule)


def evaluate_fused(
    machine: SystolicMachine,
    design: SystolicDesign,
    group: Group,
    schedule: GemmSchedule | MlpSchedule,
    vector: VectorUnit | None = None,
    engine: str = "fast",
) -> FusedRun:
    """The group as one event schedule (InfeasibleFused when its blocks do not fit)."""
    _check(machine, design, engine)
    vector = vector or default_vector_unit(machine.array.cols)
    costs = Costs(machine, design, vector)
    kernel = _kernel(group.describe(), fused_build(costs, group, schedule), design, engine)
    return FusedRun(
        machine, design, vector, group, (kernel,), fused_bound(machine, vector, group), engine
    )


def pass_rows(machine: SystolicMachine, n: int) -> int:
    """Rows of an elementwise pass's block: two blocks in a quarter of the A store."""
    store = machine.memory.store_of("a")
    capacity = store.capacity if store is not None else n
    return max(1, capacity // (8 * n))


def evaluate_unfused(
    machine: SystolicMachine,
    design: SystolicDesign,
    group: Group,
    schedules: tuple[GemmSchedule, ...],
    vector: VectorUnit | None = None,
    engine: str = "fast",
    epilogues: bool = False,
) -> FusedRun:
    """The group's operations as kernels run one after another; `schedules` has one block
    schedule per product (one for a product with its epilogue, two for the MLP)."""
    _check(machine, design, engine)
    vector = vector or default_vector_unit(machine.array.cols)
    costs = Costs(machine, design, vector)
    kernels = [
        _kernel(name, build, design, engine)
        for name, build in _unfused_builds(costs, group, schedules, epilogues)
    ]
    return FusedRun(
        machine, design, vector, group, tuple(kernels), fused_bound(machine, vector, group), engine
    )


def _unfused_builds(
    costs: Costs, group: Group, schedules: tuple[GemmSchedule, ...], epilogues: bool
) -> list[tuple[str, Build]]:
    machine = costs.machine
    builds: list[tuple[str, Build]] = []

    def passes(steps: tuple[str, ...], m: int, n: int, name: str, bias: str) -> None:
        for step in steps:
            build = PassBuild(costs, step, m, n, pass_rows(machine, n), (name, name), bias)
            builds.append((f"{step} pass over {name}", build))

    if isinstance(group, EpilogueGemm):
        kept = group.epilogue if epilogues else ()
        plain = EpilogueGemm(group.m, group.k, group.n, kept, scale=group.scale, gelu=group.gelu)
        builds.append((plain.describe(), GemmBuild(costs, plain, schedules[0])))
        if not epilogues:
            passes(group.epilogue, group.m, group.n, "C", "BIAS")
        return builds
    g = group
    act: tuple[str, ...] = ("bias", g.activation) if g.bias else (g.activation,)
    up = EpilogueGemm(g.m, g.d, g.hidden, act if epilogues else (), gelu=g.gelu)
    builds.append(
        (f"up {up.describe()}", GemmBuild(costs, up, schedules[0], ("X", "W1", "H"), "B1"))
    )
    if not epilogues:
        passes(act, g.m, g.hidden, "H", "B1")
    down_steps: tuple[str, ...] = ("bias",) if g.bias else ()
    down = EpilogueGemm(g.m, g.hidden, g.d_out, down_steps if epilogues else ())
    builds.append(
        (f"down {down.describe()}", GemmBuild(costs, down, schedules[1], ("H", "W2", "Y"), "B2"))
    )
    if not epilogues:
        passes(down_steps, g.m, g.d_out, "Y", "B2")
    return builds
