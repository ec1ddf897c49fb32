"""The extension point for cost models: an `Oracle` times, verifies and bounds the schedules of
its search spaces on its machine. The run pipeline, the samplers and the results ask an oracle;
they never ask which oracle they hold.

The core below is what every oracle is: five abstract methods (`parse_machine`,
`machine_from_record`, `families`, `evaluate`, `verify`) and a few with defaults. What only some
oracles do (a size guard, energy and area, pictures, a machine search, ...) is a capability
(autotune.oracles.capabilities), asked for with `oracle.capability(Kind)`.

An oracle is found by name through the entry-point group `autotune.oracles` (see
`autotune.oracles.get`); GA-1 and the systolic array register there like any third-party
package would. `examples/toy_oracle/` is a complete minimal one.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, TypeVar

from autotune.errors import AutotuneError, EvaluationRefused, Infeasible
from autotune.oracles.measures import CYCLES, Measure, TableColumn
from search_spaces.base import Family, Verdict
from search_spaces.domains import Point
from simcore.shape import CountLimitError, Shape, check_count

if TYPE_CHECKING:
    from simcore.energy import Technology

Metrics = dict[str, object]
Kind = TypeVar("Kind")

__all__ = ["EvaluationRefused", "Infeasible", "Metrics", "Oracle", "configured"]


class Oracle(ABC):
    """A cost model behind one interface.

    A machine is the oracle's own frozen value with `as_dict()` and `key()`; `parse_machine`
    builds it from `KEY=VALUE` overrides. Families come from the oracle's search spaces and
    declare what may be searched; the oracle computes everything else."""

    name: str = ""
    description: str = ""
    # What it reports, declared once (autotune.oracles.measures): the objectives a run may name,
    # the leaderboard's metric columns in this order, their labels, directions and budgets.
    measures: tuple[Measure, ...] = (CYCLES,)
    default_objectives: tuple[str, ...] = ("cycles",)
    default_spaces: tuple[str, ...] = ()  # the search spaces a run uses by default
    takes_workloads: bool = True  # several GEMMs in one run
    table_columns: tuple[TableColumn, ...] = ()  # what the compact tables show besides objectives

    def capability(self, kind: type[Kind]) -> Kind | None:
        """This oracle as `kind` (a capability of autotune.oracles.capabilities), or None when
        it has not that capability. The one way every caller asks."""
        return self if isinstance(self, kind) else None

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

    def for_machine(self, machine: Any) -> Oracle:
        """This oracle as it runs on `machine`: a copy where what it can do depends on the
        machine (the plan asks its capabilities of this)."""
        return self

    def objectives_of(self, machine: Any) -> tuple[str, ...]:
        """The objectives a run on `machine` optimises when none are given."""
        return tuple(self.default_objectives)

    def tile_edge(self, machine: Any) -> int:
        """The tile edge that shapes are counted in when families declare their domains."""
        return 1

    def describe_machine(self, machine: Any) -> str:
        return ",".join(f"{k}={v}" for k, v in machine.as_dict().items())

    def check_machine(self, machine: Any) -> None:
        """Raise a ValueError when no schedule can run on the machine."""

    # --- the study: what a resumed study must match, and its default names --------------------

    def identity(self, machine: Any) -> dict[str, object]:
        """The machine's part of a study's identity."""
        return {"machine": machine.key()}

    def study_prefix(self, shape: Shape, machine: Any) -> str:
        """The start of a study's default name; what it does not say, a digest says."""
        return f"{self.name}-{shape}"

    def workload_prefix(self, workload: str, machine: Any) -> str:
        """The start of a workload run's default name."""
        return f"workload-{workload}"

    def plain_machine(self, machine: Any) -> Any:
        """The machine that `study_prefix` names in full: a study on it needs no digest."""
        return self.default_machine()

    def upgrade_plan(self, stored: dict[str, Any]) -> dict[str, Any]:
        """A run plan stored by an earlier autotune, in today's fields."""
        return stored

    # --- the search spaces -------------------------------------------------------------------

    @abstractmethod
    def families(self, spaces: tuple[str, ...], machine: Any) -> tuple[Family, ...]:
        """The families of the named spaces (the oracle's defaults when empty)."""

    def family(self, name: str) -> Family | None:
        """A family by name with the default settings, to rebuild a recorded entry."""
        return None

    # --- cost --------------------------------------------------------------------------------

    @abstractmethod
    def evaluate(self, family: Family, point: Point, shape: Shape, machine: Any) -> Metrics:
        """The cost of a feasible point: at least `cycles` (and each measure it declares).
        Infeasible for a point that turns out not to fit; EvaluationRefused for one too costly
        to time."""

    @abstractmethod
    def verify(self, family: Family, point: Point, shape: Shape, machine: Any) -> Verdict:
        """Re-run the point as exactly as the oracle can, and say how strong the check was."""

    def bound(self, shape: Shape, machine: Any) -> int | None:
        """A proven lower bound on the cycles of any schedule, or None."""
        return None

    def largest_counts(self, shape: Shape, machine: Any) -> list[tuple[int, str]]:
        """Upper bounds on the integers an evaluation of `shape` on `machine` records (cycles,
        multiply-accumulates, words), each with what it counts."""
        return [(shape.macs, "its multiply-accumulates")]

    def check_size(self, shape: Shape, machine: Any) -> None:
        """Refuse (SizeError) a shape whose counts could pass a 64-bit integer on `machine`,
        naming the machine's parameters when they, not the shape, are out of range."""
        from autotune.errors import SizeError, Text, ref

        try:
            check_counts(shape, self.largest_counts(shape, machine))
        except SizeError as exc:
            fault = self.machine_fault(shape, machine)
            if fault is None:
                raise
            raise SizeError(
                Text(ref("machine", fault), f" is out of range: on it, {exc}"), setting="machine"
            ) from None

    def machine_fault(self, shape: Shape, machine: Any) -> str | None:
        """The `KEY=VALUE` parameters that make `shape` too large to count on `machine`: those
        that alone, set back to the default machine's, let it fit (or every changed one when the
        default machine fits it); None when the shape is too large even so."""
        default: Any = self.default_machine()
        given: Any = machine
        same_kind = dataclasses.is_dataclass(machine) and type(machine) is type(default)
        if not same_kind:
            return None
        ours, theirs = given.as_dict(), default.as_dict()
        changed = [key for key in ours if ours[key] != theirs.get(key)]

        def fits(candidate: Any) -> bool:
            try:
                check_counts(shape, self.largest_counts(shape, candidate))
            except (AutotuneError, ValueError, ArithmeticError):  # refused: it does not fit
                return False
            return True

        def reset(key: str) -> Any:
            try:
                return dataclasses.replace(given, **{key: theirs[key]})
            except (TypeError, ValueError):
                return None

        alone = [key for key in changed if (m := reset(key)) is not None and fits(m)]
        keys = alone or (changed if fits(default) else [])
        return ",".join(f"{key}={ours[key]}" for key in keys) or None


def configured(
    oracle: Oracle,
    *,
    technology: Technology | None = None,
    full_limit: int | None = None,
    study_folder: Path | None = None,
) -> Oracle:
    """`oracle` costing with `technology`, simulating at most `full_limit` units in full, and
    rebuilding the schedules imported into the study in `study_folder`, each where the oracle
    has the capability it concerns (a copy when any applies)."""
    from autotune.oracles.capabilities import EnergyAndArea, ImportedSchedules, SizeGuard

    found: Any = oracle
    if technology is not None and oracle.capability(EnergyAndArea) is not None:
        found = found.with_technology(technology)
    if full_limit is not None and oracle.capability(SizeGuard) is not None:
        found = found.with_full_limit(full_limit)
    if study_folder is not None and oracle.capability(ImportedSchedules) is not None:
        found = found.with_study_folder(study_folder)
    return found  # type: ignore[no-any-return]


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
