"""The extension point for cost models: an `Oracle` times, verifies and bounds the schedules of
its search spaces on its machine. The run pipeline, the samplers and the results ask an oracle;
they never ask which oracle they hold.

An oracle is found by name through the entry-point group `autotune.oracles` (see
`autotune.oracles.get`); GA-1 and the systolic array register there like any third-party
package would. `examples/toy_oracle/` is a complete minimal one.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from search_spaces.base import Family, Verdict
from search_spaces.domains import Point
from simcore.shape import CountLimitError, Shape, check_count

if TYPE_CHECKING:
    from simcore.energy import Cost, Technology

Metrics = dict[str, object]


class EvaluationRefused(ValueError):
    """The oracle will not evaluate this candidate within its limit of work (the message says
    why); the search records the candidate as infeasible and goes on."""


class Work(Protocol):
    """What one evaluation of a shape costs, for the size guard (simcore.ga1.estimate.Work)."""

    @property
    def products(self) -> int: ...  # the oracle's unit of work (GA-1: tile products)

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
    def periodic_products(self) -> int: ...  # simulated where the schedule settles into a period

    @property
    def periodic_seconds(self) -> float: ...


class Oracle(ABC):
    """A cost model behind one interface.

    A machine is the oracle's own frozen value with `as_dict()` and `key()`; `parse_machine`
    builds it from `KEY=VALUE` overrides. Families come from the oracle's search spaces and
    declare what may be searched; the oracle computes everything else."""

    name: str = ""
    description: str = ""
    measures: tuple[str, ...] = ("cycles",)  # what may be an objective
    # The measures the machine alone sets: one value for every schedule on a fixed machine, so
    # an objective only where its machine is searched.
    machine_measures: tuple[str, ...] = ()
    default_objectives: tuple[str, ...] = ("cycles",)
    default_spaces: tuple[str, ...] = ()  # the search spaces a run uses by default
    takes_workloads: bool = True  # several GEMMs in one run
    searches_machines: bool = False  # machine parameters searched with schedules
    technology: Technology | None = None  # energy and area table; None: the shipped one
    full_limit: int | None = None  # most units of work simulated in full; None: the oracle's own

    def with_full_limit(self, limit: int | None) -> Oracle:
        """This oracle simulating at most `limit` units of work in full per evaluation (a copy);
        None: its own default."""
        configured = copy.copy(self)
        configured.full_limit = limit
        return configured

    # The results folder of the study whose entries this oracle rebuilds: where the schedules
    # imported whole into that study are kept (Family.imported); None: none at hand.
    study_folder: Path | None = None

    def with_study_folder(self, folder: Path | None) -> Oracle:
        """This oracle rebuilding the imported schedules of the study whose results folder is
        `folder` (a copy: the registered oracle is unchanged)."""
        configured = copy.copy(self)
        configured.study_folder = folder
        return configured

    def with_technology(self, technology: Technology | None) -> Oracle:
        """This oracle costing energy and area with `technology` (a copy: the registered oracle
        is unchanged); None: the shipped default table."""
        configured = copy.copy(self)
        configured.technology = technology
        return configured

    def tech(self) -> Technology:
        """The technology table this oracle costs energy and area with."""
        if self.technology is not None:
            return self.technology
        from simcore.energy import default_technology

        return default_technology()

    # --- the machine -------------------------------------------------------------------------

    @abstractmethod
    def parse_machine(self, text: str) -> Any:
        """The machine of `KEY=VALUE[,KEY=VALUE...]`, changed from the oracle's default machine;
        raises a ValueError naming the key for an unknown key or a bad value."""

    @abstractmethod
    def machine_from_record(self, record: Mapping[str, int]) -> Any:
        """The machine a recorded result ran on (inverse of `machine_record`)."""

    def default_machine(self) -> Any:
        return self.parse_machine("")

    def machine_record(self, machine: Any) -> dict[str, int]:
        """The machine as recorded with each result; {} for an oracle whose schedule
        parameters are its machine."""
        return dict(machine.as_dict())

    def tile_edge(self, machine: Any) -> int:
        """The tile edge that shapes are counted in when families declare their domains."""
        return 1

    def describe_machine(self, machine: Any) -> str:
        return ",".join(f"{k}={v}" for k, v in machine.as_dict().items())

    def identity(self, machine: Any) -> dict[str, object]:
        """The machine's part of a study's identity (what a resumed study must match)."""
        return {"machine": machine.key()}

    def study_prefix(self, shape: Shape, machine: Any) -> str:
        """The start of a study's default name; what it does not say, a digest says."""
        return f"{self.name}-{shape}"

    def workload_prefix(self, workload: str, machine: Any) -> str:
        """The start of a workload run's default name."""
        return f"workload-{workload}"

    def check_machine(self, machine: Any) -> None:
        """Raise a ValueError when no schedule can run on the machine."""

    def upgrade_plan(self, stored: dict[str, Any]) -> dict[str, Any]:
        """A run plan stored by an earlier autotune, in today's fields."""
        return stored

    def plain_machine(self, machine: Any) -> Any:
        """The machine that `study_prefix` names in full: a study on it needs no digest."""
        return self.default_machine()

    # --- the search spaces -------------------------------------------------------------------

    @abstractmethod
    def families(self, spaces: tuple[str, ...], machine: Any) -> tuple[Family, ...]:
        """The families of the named spaces (the oracle's defaults when empty)."""

    def family(self, name: str) -> Family | None:
        """A family by name with the default settings, to rebuild a recorded entry (a family of
        imported schedules reads them from `study_folder`)."""
        return None

    # --- cost --------------------------------------------------------------------------------

    @abstractmethod
    def evaluate(self, family: Family, point: Point, shape: Shape, machine: Any) -> Metrics:
        """The cost of a feasible point: at least `cycles`."""

    @abstractmethod
    def verify(self, family: Family, point: Point, shape: Shape, machine: Any) -> Verdict:
        """Re-run the point as exactly as the oracle can, and say how strong the check was."""

    def bound(self, shape: Shape, machine: Any) -> int | None:
        """A proven lower bound on the cycles of any schedule, or None."""
        return None

    def reference(self, shape: Shape, machine: Any) -> tuple[int, str] | None:
        """The best hand-written schedule this oracle knows: (cycles, label), or None."""
        return None

    def notes(self, shape: Shape, machine: Any) -> list[str]:
        """What a user should know before tuning the shape, one line each."""
        return []

    def work(self, shape: Shape, machine: Any) -> Work | None:
        """What one evaluation costs (the size guard), or None when it is always cheap."""
        return None

    def largest_counts(self, shape: Shape, machine: Any) -> list[tuple[int, str]]:
        """Upper bounds on the integers an evaluation of `shape` on `machine` records (cycles,
        multiply-accumulates, words), each with what it counts."""
        return [(shape.macs, "its multiply-accumulates")]

    def check_size(self, shape: Shape, machine: Any) -> None:
        """Refuse (SizeError) a shape whose counts could pass a 64-bit integer on `machine`."""
        check_counts(shape, self.largest_counts(shape, machine))

    def best_schedules(
        self, families: tuple[Family, ...], shape: Shape, machine: Any
    ) -> tuple[tuple[str, Point, Metrics] | None, tuple[str, Point, Metrics] | None]:
        """For a co-design: the best of a fixed portfolio of schedules and the best
        hand-written one, each (family, point, metrics); only for `searches_machines`."""
        raise NotImplementedError(f"oracle {self.name!r} does not search machines")

    # --- energy and area (optional) ----------------------------------------------------------
    # An oracle that costs them reports, with every evaluation, the metrics of
    # simcore.energy.Cost.metrics (energy_pj, energy_per_mac_pj, edp, area_mm2 and the
    # breakdown) and lists energy, edp and area among its measures.

    def machine_area_mm2(self, machine: Any) -> float | None:
        """The machine's area when the machine alone sets it; None when not costed."""
        return None

    def area_mm2(self, family: Family, point: Point, shape: Shape, machine: Any) -> float | None:
        """The area a candidate occupies, known before it runs; None when not costed."""
        return self.machine_area_mm2(machine)

    def cost(self, family: Family, point: Point, shape: Shape, machine: Any) -> Cost | None:
        """The point's energy and area with every line item, or None when not costed."""
        return None

    timing_methods: tuple[str, ...] = ()  # ways to time a point again (the first: evaluate's)

    def cycles_by(
        self, family: Family, point: Point, shape: Shape, machine: Any, method: str
    ) -> int:
        """The point's cycles timed by `method`, one of `timing_methods` (ValueError otherwise;
        EvaluationRefused past the limit of work simulated in full)."""
        raise ValueError(f"the {self.name} oracle has one timing method")

    # --- pictures (optional) -----------------------------------------------------------------

    def report(
        self, family: Family, point: Point, shape: Shape, machine: Any, per_char: int | None = None
    ) -> str:
        """A human picture of the point (GA-1: the engine timeline)."""
        return ""

    def program(self, family: Family, point: Point, shape: Shape, machine: Any) -> Any | None:
        """The point's program, for export and timeline plots; None for an oracle without one."""
        return None


def check_counts(shape: Shape, counts: list[tuple[int, str]]) -> None:
    """SizeError for the first of `counts` (bound, what it counts) past a 64-bit integer."""
    from autotune.errors import SizeError

    for most, what in counts:
        try:
            check_count(shape, most, what)
        except CountLimitError as exc:
            raise SizeError(str(exc), setting="shape") from None


def ensure_family(family: Family | None, name: str, oracle: Oracle) -> Family:
    from autotune.errors import OracleError

    if family is None:
        raise OracleError(f"oracle {oracle.name!r} has no schedule family {name!r}")
    return family
