"""What an oracle may do besides its core (autotune.oracles.base.Oracle): each capability is a
small mix-in with its own abstract methods. An oracle that has one inherits it; the code that
needs it asks with one call, `oracle.capability(Kind)`, which gives the capability or None.

    class MyOracle(Oracle, SizeGuard):      # the core, and a size guard
        def work(self, shape, machine): ...

    guard = oracle.capability(SizeGuard)    # None for an oracle without one

| capability | what it adds | who asks |
|---|---|---|
| SizeGuard | the work one evaluation costs; refusing what is past the run's limits | the plan stage, show, export, plot |
| EnergyAndArea | energy and area costed with a technology table | budgets, show, results' costing metadata |
| Report | a text picture of one entry | show |
| Programs | the entry's program (object and text) | export, timeline plots |
| TimingMethods | other ways to time an entry | show --timing |
| Reference | the best hand-written schedule it knows | leaderboards' chapter_best columns, plots |
| Notes | what a user should know about a shape before tuning it | the plan stage |
| MachineSearch | machine parameters searched (with schedules, or a co-design) | the plan, co-design |
| ImportedSchedules | families of schedules imported whole into a study | rebuilding, optimum --enqueue |
| Architectures | machines described by architecture files (bundled by name, or a file) | the plan (arch), `archs` |
| Operations (autotune.oracles.operations) | a network's operations besides GEMMs, timed | ops --oracle, the network report |
| Fusion (autotune.oracles.fusion) | fused groups of a network, timed at their best schedule | ops --oracle --fuse |
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence, TypeVar

from autotune.errors import Text, WorkError, ref
from autotune.oracles.measures import TableColumn
from search_spaces.base import Family
from search_spaces.domains import Param, Point
from simcore.shape import Shape

if TYPE_CHECKING:
    from simcore.energy import Cost, Technology

Metrics = dict[str, object]
Copy = TypeVar("Copy")


def _copy_with(oracle: Copy, **fields: object) -> Copy:
    configured = copy.copy(oracle)
    for name, value in fields.items():
        setattr(configured, name, value)
    return configured


# --- the size guard ------------------------------------------------------------------------------


class Work(Protocol):
    """What one evaluation of a shape costs (e.g. simcore.ga1.estimate.Work)."""

    @property
    def products(self) -> int: ...  # units of work simulated in full

    @property
    def instructions(self) -> int: ...  # instructions of the program a picture builds

    @property
    def evaluation_bytes(self) -> int: ...

    @property
    def verification_bytes(self) -> int: ...

    @property
    def program_bytes(self) -> int: ...

    @property
    def evaluation_seconds(self) -> float: ...  # simulated in full

    @property
    def periodic_products(self) -> int: ...  # what a search's evaluation simulates at most

    @property
    def periodic_seconds(self) -> float: ...


DEFAULT_MEMORY = 1 << 30  # the whole process's peak, its own start-up included


def default_memory() -> int:
    """The default memory limit: 1 GiB, whatever the machine (a run is priced to fit it)."""
    return DEFAULT_MEMORY


@dataclass(frozen=True)
class WorkLimits:
    """A run's limits of work: most units simulated per evaluation (`max_products`; None: the
    oracle's `most_work`) and most memory (`max_memory`; None: `default_memory()`)."""

    max_products: int | None = None
    max_memory: int | None = None

    def products(self, guard: SizeGuard) -> int:
        return self.max_products if self.max_products is not None else guard.most_work

    def memory(self) -> int:
        return self.max_memory if self.max_memory is not None else default_memory()


class SizeGuard(ABC):
    """Estimates what an evaluation costs before anything is generated, so that a run is refused
    in one line (WorkError, with the estimate) rather than exhausting time or memory."""

    most_work: int = 1 << 27  # units an evaluation may simulate unless `max_products` says
    work_unit: str = "units of work"  # what `Work.products` counts, in messages
    full_limit: int | None = None  # most units simulated in full per evaluation; None: its own

    @abstractmethod
    def work(self, shape: Shape, machine: Any) -> Work | None:
        """What one evaluation of `shape` on `machine` costs; None when it is always cheap."""

    def with_full_limit(self: Copy, limit: int | None) -> Copy:
        """This oracle simulating at most `limit` units in full per evaluation (a copy)."""
        return _copy_with(self, full_limit=limit)

    def describe_work(self, shape: Shape, machine: Any) -> str:
        """The problem as a refusal names it."""
        return str(shape)

    def notices(self, shape: Shape, work: Work, program: bool = False) -> list[str]:
        """What to say before the first evaluation of `shape` (one that will take a while)."""
        return []

    def check_work(
        self,
        shape: Shape,
        machine: Any,
        limits: WorkLimits,
        verify: bool = True,
        program: bool = False,
    ) -> Work | None:
        """The estimate, or WorkError (naming `max_products` or `max_memory`) when an evaluation
        (with its verification; with `program`, building the program and its picture) is past
        the limits. Nothing is generated."""
        work = self.work(shape, machine)
        if work is None:
            return None
        needs = [("an evaluation", work.evaluation_bytes)]
        if verify:
            needs.append(("a verification", work.verification_bytes))
        if program:
            needs.append(("the program and its timeline", work.program_bytes))
        what, memory = max(needs, key=lambda need: need[1])
        simulated = work.products if program else work.periodic_products
        most, most_memory = limits.products(self), limits.memory()
        if simulated > most or memory > most_memory:
            raise WorkError(
                Text(
                    f"{self.describe_work(shape, machine)} needs {work.products:.3g} "
                    f"{self.work_unit} per evaluation (about {duration(work.evaluation_seconds)} "
                    f"each) and {size(memory)} for {what}; the limits are {most:.3g} "
                    f"{self.work_unit} (",
                    ref("max_products"),
                    f") and {size(most_memory)} (",
                    ref("max_memory"),
                    ")",
                ),
                setting="max_products" if simulated > most else "max_memory",
                work=work,
            )
        return work

    def check_memory(
        self, shape: Shape, machine: Any, limits: WorkLimits, hint: Text | None = None
    ) -> None:
        """WorkError (naming `max_memory`, ending with `hint`) for a machine whose verification
        of `shape` needs more than the memory limit."""
        work = self.work(shape, machine)
        most = limits.memory()
        if work is not None and work.verification_bytes > most:
            raise WorkError(
                Text(
                    f"{self.describe_work(shape, machine)} needs {size(work.verification_bytes)} "
                    f"to run and verify a schedule; the limit is {size(most)} (",
                    ref("max_memory"),
                    ")",
                    *(hint.parts if hint is not None else ()),
                ),
                setting="max_memory",
                work=work,
            )


def size(count: float) -> str:
    for unit in ("", "K", "M", "G", "T", "P"):
        if count < 1024 or unit == "P":
            return f"{count:.3g} {unit}B"
        count /= 1024
    return f"{count:.3g} PB"


def duration(seconds: float) -> str:
    for unit, length in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * length:
            return f"{seconds / length:.3g} {unit}"
    return f"{seconds:.2g} s" if seconds >= 1 else f"{seconds * 1e3:.2g} ms"


# --- energy and area -----------------------------------------------------------------------------


class EnergyAndArea(ABC):
    """Energy and area, costed with a technology table. Its oracle reports, with every
    evaluation, the metrics of simcore.energy.Cost.metrics and declares the ENERGY, EDP and AREA
    measures (AREA machine_only when the machine alone sets it)."""

    technology: Technology | None = None  # the table; None: the shipped default

    def with_technology(self: Copy, technology: Technology | None) -> Copy:
        """This oracle costing with `technology` (a copy); None: the shipped default table."""
        return _copy_with(self, technology=technology)

    def tech(self) -> Technology:
        """The technology table this oracle costs energy and area with."""
        if self.technology is not None:
            return self.technology
        from simcore.energy import default_technology

        return default_technology()

    def machine_area_mm2(self, machine: Any) -> float | None:
        """The machine's area when the machine alone sets it; None otherwise."""
        return None

    def area_mm2(self, family: Family, point: Point, shape: Shape, machine: Any) -> float | None:
        """The area a candidate occupies, known before it runs (for `area_budget`)."""
        return self.machine_area_mm2(machine)

    @abstractmethod
    def cost(self, family: Family, point: Point, shape: Shape, machine: Any) -> Cost:
        """The point's energy and area with every line item (for `show`)."""


# --- pictures and programs -----------------------------------------------------------------------


class Report(ABC):
    @abstractmethod
    def report(
        self, family: Family, point: Point, shape: Shape, machine: Any, per_char: int | None = None
    ) -> str:
        """A text picture of the point (GA-1: the engine timeline), for `show`."""


@dataclass(frozen=True)
class Timeline:
    """The engines of one run over time: per engine (`engines`, in drawing order) its busy spans
    over the whole run ((n, 2) arrays of start, finish; instructions back to back merged) and,
    for a zoomed panel, each of its instructions that starts in the first `zoom` cycles."""

    cycles: int
    engines: tuple[str, ...]
    spans: tuple[Any, ...]
    first: tuple[Any, ...]
    zoom: int | None = None
    busy: float = 0.0  # the main unit's share of the cycles


class Programs(ABC):
    """A point is a program: it can be built, written as text and run engine by engine."""

    @abstractmethod
    def program(self, family: Family, point: Point, shape: Shape, machine: Any) -> Any:
        """The point's program (for timeline plots and the exact solver's warm start)."""

    @abstractmethod
    def program_text(self, program: Any) -> str:
        """The program as text (`export --format asm`)."""

    @abstractmethod
    def timeline(self, program: Any, machine: Any, zoom: int) -> Timeline:
        """The program's engines over time (`plot`'s timeline)."""


class TimingMethods(ABC):
    timing_methods: tuple[str, ...] = ()  # ways to time a point again (the first: evaluate's)

    @abstractmethod
    def cycles_by(
        self, family: Family, point: Point, shape: Shape, machine: Any, method: str
    ) -> int:
        """The point's cycles timed by `method` (EvaluationRefused past the limit of work)."""


class Reference(ABC):
    @abstractmethod
    def reference(self, shape: Shape, machine: Any) -> tuple[int, str] | None:
        """The best hand-written schedule it knows: (cycles, label), or None."""


class Notes(ABC):
    @abstractmethod
    def notes(self, shape: Shape, machine: Any) -> list[str]:
        """What a user should know before tuning the shape, one line each."""


# --- machines searched ---------------------------------------------------------------------------


class MachineSpace(Protocol):
    """The machine parameters a search varies (e.g. search_spaces.machine.MachineSpace); its repr
    is part of a study's identity."""

    @property
    def limit(self) -> str: ...  # what `violation` grades ("scratchpad": `scratchpad_over`)

    def params(self) -> tuple[Param, ...]: ...
    def apply(self, base: Any, point: Point) -> Any: ...
    def violation(self, machine: Any) -> float: ...
    def seed_point(self, base: Any) -> Point: ...
    def corners(self, base: Any) -> list[Any]: ...  # machines that bound the counts of any other
    def reachable(self, base: Any) -> list[Any]: ...  # the largest machines a search simulates


@dataclass(frozen=True)
class MachineSettings:
    """The plan's settings of a machine search."""

    ranges: str = ""  # KEY=LOW:HIGH|KEY=A|B,... ("": the oracle's defaults)
    max_scratchpad_words: int | None = None
    max_dma_words_per_cycle: int | None = None
    pe_budget: int | None = None  # a co-design's most MACs per cycle
    area_budget: float | None = None


class MachineSearch(ABC):
    """Machine parameters searched: with the schedules of one product (`search_machine`), or
    alone for a whole workload (a co-design, each machine timed by a fixed portfolio)."""

    codesign_oracle: str = ""  # a co-design study's identity names this as its oracle
    front_columns: tuple[TableColumn, ...] = ()  # a co-design's front shows these machine columns

    @abstractmethod
    def machine_space(self, base: Any, settings: MachineSettings) -> MachineSpace:
        """The machines searched around `base` (ValueError for a setting it cannot honour)."""

    def machine_limits(self, machine: Any, settings: MachineSettings) -> dict[str, float]:
        """A co-design's limits on a machine besides its space's, each `name_over` -> how far
        over (0 within)."""
        return {}

    def machine_columns(self, machine: Any) -> dict[str, object]:
        """A co-design row's columns of the machine besides its parameters."""
        return {}

    @abstractmethod
    def best_schedules(
        self, families: Sequence[Family], shape: Shape, machine: Any
    ) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
        """A co-design's schedules of one GEMM on `machine`: the best of a fixed portfolio and
        the best hand-written one, each (family, point, metrics), or None."""


# --- schedules imported whole --------------------------------------------------------------------


class ImportedSchedules(ABC):
    """Families of schedules imported whole into a study (`Family.imported`), whose content is
    kept in the study's results folder."""

    study_folder: Path | None = None  # None: no study at hand

    def with_study_folder(self: Copy, folder: Path | None) -> Copy:
        """This oracle rebuilding the imported schedules of the study in `folder` (a copy)."""
        return _copy_with(self, study_folder=folder)


# --- machines from architecture files ------------------------------------------------------------


class Architectures(ABC):
    """Machines described by architecture files: bundled ones by name, or a file."""

    @abstractmethod
    def architectures(self) -> tuple[str, ...]:
        """The bundled architectures' names."""

    @abstractmethod
    def arch_machine(self, arch: str, machine: str = "") -> Any:
        """The machine of architecture `arch` (a bundled name or a file) with the `KEY=VALUE`
        overrides of `machine`; a ValueError naming the key when it is malformed."""
