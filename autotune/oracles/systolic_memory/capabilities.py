"""What the systolic oracle can do with architectures: build their machines (`Architectures`),
rank their block schedules by time, and search their memory with the schedules of one product
(`MachineSearch`, offered only on an architecture: the array oracle's design is its own
machine, and its budgets are settings of that search)."""

from __future__ import annotations

import copy
from typing import Any, Sequence, TypeVar

from autotune.oracles.base import Metrics, Oracle
from autotune.oracles.capabilities import Architectures, MachineSearch, MachineSettings
from autotune.oracles.systolic_memory import memory
from autotune.oracles.systolic_memory.machine import ArchMachine
from autotune.oracles.systolic_memory.search import MemorySpace
from search_spaces.base import Family
from search_spaces.domains import Point
from simcore.shape import Shape

Kind = TypeVar("Kind")


class ArchitectureSearch(Oracle, Architectures, MachineSearch):
    """The systolic oracle's architectures and their memory search."""

    searches_memory = False  # set on the copy that runs on an architecture (`for_machine`)

    def capability(self, kind: type[Kind]) -> Kind | None:
        if kind is MachineSearch and not self.searches_memory:
            return None
        return super().capability(kind)

    def for_machine(self, machine: Any) -> Any:
        found = copy.copy(self)
        found.searches_memory = isinstance(machine, ArchMachine)
        return found

    def objectives_of(self, machine: Any) -> tuple[str, ...]:
        # An architecture's array is fixed: its time alone ranks its block schedules.
        return ("cycles",) if isinstance(machine, ArchMachine) else self.default_objectives

    def architectures(self) -> tuple[str, ...]:
        from simcore.systolic.archs import bundled_archs

        return bundled_archs()

    def arch_machine(self, arch: str, machine: str = "") -> ArchMachine:
        found = memory.parse_arch_text(",".join(filter(None, (f"arch={arch}", machine))))
        assert found is not None  # the text names an architecture
        return found

    def machine_space(self, base: Any, settings: MachineSettings) -> MemorySpace:
        if not isinstance(base, ArchMachine):
            raise ValueError("the systolic oracle searches the memory of an architecture")
        if settings.max_scratchpad_words is not None:
            raise ValueError("an architecture's buffers are searched by their ranges")
        return MemorySpace.create(base, settings.ranges)

    def best_schedules(
        self, families: Sequence[Family], shape: Shape, machine: Any
    ) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
        """The fastest seed schedule (a co-design's portfolio); no hand-written one."""
        found = [
            (family.name, point, self.evaluate(family, point, shape, machine))
            for family in families
            for point in family.seed_points(shape, machine)
        ]
        best = min(found, key=lambda f: int(f[2]["cycles"]), default=None)  # type: ignore[call-overload]
        return best, None
