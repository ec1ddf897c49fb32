"""What a run tunes: a `RunPlan`, resolved once from the user's settings and validated before
anything is created. A single product is a workload of one GEMM. The plan is stored with every
study it creates (as JSON), so that the study's results can be rebuilt from its storage alone;
its identity (what a resumed study must match) and its default study names are the ones the
tuner has always used."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from autotune import oracles
from autotune.errors import PlanError, Text, ref
from autotune.oracles import Oracle, configured
from autotune.oracles.capabilities import (
    EnergyAndArea,
    MachineSearch,
    MachineSettings,
    MachineSpace,
    Notes,
)
from autotune.oracles.measures import BUDGETED, Measure, find
from autotune.run.sizes import check_shape_count, check_sizes
from autotune.run.tradeoffs import check_objectives
from autotune.search.codesign import Codesign
from autotune.search.objectives import measures_of
from autotune.search.problem import Problem, Search
from search_spaces.base import Family
from search_spaces.registry import LEGACY_SPACES, SpaceError, available
from simcore.energy import (
    Technology,
    TechnologyError,
    default_technology,
    technology_from_dict,
    technology_to_dict,
)
from simcore.shape import Shape, parse_shape
from workloads import Gemm, Workload

# The most notes on a workload's shapes printed one by one.
NOTES_SHOWN = 8


@dataclass(frozen=True)
class RunPlan:
    workload: Workload  # a single shape is a workload of one GEMM
    machine: Any  # the oracle's base machine
    single: bool = True  # one product: one study, no workload summary
    oracle: str = oracles.DEFAULT_ORACLE
    spaces: str = ""  # as given ("" : the oracle's defaults); part of the identity
    objectives: tuple[str, ...] = ("cycles",)
    search_machine: bool = False
    machine_range: str = ""
    max_scratchpad_words: int | None = None
    max_dma_words_per_cycle: int | None = None
    pe_budget: int = 4096  # a co-design: most MACs per cycle
    encoding: str = "conditional"  # how trials suggest parameters (autotune.search.sampling)
    technology: Technology | None = None  # energy and area table; None: the shipped default
    area_budget: float | None = None  # mm2: most area of a searched machine (or systolic design)
    energy_budget: float | None = None  # pJ: most energy of a product, or of a co-designed workload
    max_products: int | None = (
        None  # most tile products an evaluation simulates in full; not identity
    )

    def __post_init__(self) -> None:
        if not self.spaces:
            defaults = ",".join(oracles.get(self.oracle).default_spaces)
            object.__setattr__(self, "spaces", defaults)
        if self.technology is not None and self.technology == default_technology():
            object.__setattr__(self, "technology", None)  # the default named is the default

    @staticmethod
    def of_shape(shape: Shape, machine: Any, **settings: Any) -> RunPlan:
        return RunPlan(
            Workload(str(shape), (Gemm(str(shape), shape, 1.0),)), machine, True, **settings
        )

    def the_oracle(self) -> Oracle:
        """The oracle, costing energy and area with the plan's technology table and simulating
        at most `max_products` in full (where it has those capabilities)."""
        return configured(
            oracles.get(self.oracle), technology=self.technology, full_limit=self.max_products
        ).for_machine(self.machine)

    def objective_measures(self) -> tuple[Measure, ...]:
        """The objectives' declarations, from the oracle's measures."""
        return measures_of(self.the_oracle(), self.objectives)

    @property
    def codesign(self) -> bool:
        """Machines searched for a whole workload (one study), not schedules per GEMM."""
        return self.search_machine and not self.single

    # --- validation and the searches ---------------------------------------------------------

    def space_names(self) -> tuple[str, ...]:
        return tuple(name.strip() for name in self.spaces.split(",") if name.strip())

    def families(self) -> tuple[Family, ...]:
        try:
            return self.the_oracle().families(self.space_names(), self.machine)
        except SpaceError as exc:
            raise PlanError(
                f"{exc}; available spaces: {', '.join(available())}", setting="spaces"
            ) from None
        except ValueError as exc:
            raise PlanError(str(exc), setting="spaces") from None

    def machine_settings(self) -> MachineSettings:
        return MachineSettings(
            self.machine_range,
            self.max_scratchpad_words,
            self.max_dma_words_per_cycle,
            self.pe_budget,
            self.area_budget,
        )

    def machine_space(self) -> MachineSpace | None:
        """The machines searched (with search_machine), as the oracle's MachineSearch sets them."""
        searcher = self.the_oracle().capability(MachineSearch)
        if not self.search_machine or searcher is None:
            return None
        try:
            return searcher.machine_space(self.machine, self.machine_settings())
        except ValueError as exc:
            raise PlanError(str(exc), setting="machine_range") from None

    def validate(self) -> None:
        """Every combination the searches cannot honour is a one-line PlanError."""
        oracle = self.the_oracle()
        if not self.single and not oracle.takes_workloads:
            raise PlanError(
                f"the {oracle.name} oracle tunes one product at a time, not a workload",
                setting="workload",
            )
        searcher = oracle.capability(MachineSearch)
        if self.codesign and searcher is not None and not searcher.codesign_oracle:
            raise PlanError(
                Text(
                    f"the {oracle.name} oracle searches this machine with the schedules of one "
                    "product: ",
                    ref("search_machine"),
                    " takes a shape here, not a workload",
                ),
                setting="search_machine",
            )
        if self.search_machine and searcher is None:
            raise PlanError(
                Text(
                    f"the {oracle.name} oracle searches its machine itself: ",
                    ref("search_machine"),
                    " is for oracles that do not",
                ),
                setting="search_machine",
            )
        self.families()  # the spaces resolve, or a PlanError names them
        check_objectives(
            self.objectives, oracle, single=self.single, search_machine=self.search_machine
        )
        if (self.machine_range or self.max_scratchpad_words) and not self.search_machine:
            raise PlanError(
                Text(
                    ref("machine_range"),
                    " and ",
                    ref("max_scratchpad_words"),
                    " need ",
                    ref("search_machine"),
                ),
                setting="machine_range",
            )
        if self.max_dma_words_per_cycle is not None and not self.codesign:
            raise PlanError(
                Text(
                    ref("max_dma_words_per_cycle"),
                    " is for a workload with ",
                    ref("search_machine"),
                ),
                setting="max_dma_words_per_cycle",
            )
        self._validate_budgets(oracle)
        if self.machine_space() is None:
            try:
                oracle.check_machine(self.machine)
            except ValueError as exc:
                raise PlanError(str(exc), setting="machine") from None
        space = self.machine_space()
        machines = space.corners(self.machine) if space is not None else [self.machine]
        check_sizes(self.workload.gemms, machines, self.single, oracle)  # 64 bits on every machine
        check_shape_count(self.workload.gemms)

    def _validate_budgets(self, oracle: Oracle) -> None:
        """A budget is positive and for a search that varies what it limits, on an oracle that
        costs it: a searched machine, or a systolic design (the point is the machine)."""
        for measure in BUDGETED:
            setting = str(measure.budget)
            value = getattr(self, setting)
            if value is None:
                continue
            if not math.isfinite(value) or value <= 0:
                raise PlanError(
                    Text(ref(setting), f" must be a positive number, got {value}"), setting=setting
                )
            if find(oracle.measures, measure.name) is None:
                raise PlanError(
                    f"the {oracle.name} oracle does not cost {measure.name}", setting=setting
                )
            if oracle.capability(MachineSearch) is not None and not self.search_machine:
                raise PlanError(
                    Text(
                        ref(setting),
                        " needs ",
                        ref("search_machine"),
                        " (a machine to keep within it)",
                    ),
                    setting=setting,
                )

    def notes(self) -> list[str]:
        """The oracle's notes on the shapes (a padded shape, ...), each once; past NOTES_SHOWN
        of them, one line counts the rest (a network of many padded layers)."""
        seen: dict[str, None] = {}
        noted = self.the_oracle().capability(Notes)
        if noted is not None:
            for gemm in self.workload.gemms:
                seen.update(dict.fromkeys(noted.notes(gemm.shape, self.machine)))
        notes = list(seen)
        if len(notes) <= NOTES_SHOWN:
            return notes
        hidden = len(notes) - NOTES_SHOWN + 1
        return [*notes[: NOTES_SHOWN - 1], f"note: and {hidden} more notes of these kinds"]

    def searches(self) -> list[tuple[Gemm | None, Search]]:
        """One search per study: a schedule search per GEMM, or one co-design search."""
        found, space, oracle = self.families(), self.machine_space(), self.the_oracle()
        searches: list[tuple[Gemm | None, Search]]
        if self.codesign:
            assert space is not None
            searches = [
                (
                    None,
                    Codesign(
                        self.workload,
                        self.machine,
                        found,
                        space,
                        self.objectives,
                        oracle,
                        self.max_dma_words_per_cycle,
                        self.pe_budget,
                        self.area_budget,
                        self.energy_budget,
                    ),
                )
            ]
            return searches
        searches = [
            (
                gemm,
                Problem(
                    gemm.shape,
                    self.machine,
                    found,
                    oracle,
                    space,
                    self.objectives,
                    gemm,
                    self.encoding,
                    self.area_budget,
                    self.energy_budget,
                ),
            )
            for gemm in self.workload.gemms
        ]
        return searches

    # --- identity and names ------------------------------------------------------------------

    def identity(self, gemm: Gemm | None) -> dict[str, object]:
        """What a study is about; a resumed study must match it."""
        oracle = self.the_oracle()
        if self.codesign:
            searcher = oracle.capability(MachineSearch)
            assert searcher is not None  # validated: a co-design searches the oracle's machines
            return {
                "oracle": searcher.codesign_oracle,
                "workload": [[g.name, str(g.shape), g.weight] for g in self.workload.gemms],
                "machine": self.machine.key(),
                "spaces": self.spaces,
                "machine_space": repr(self.machine_space()),
                "objectives": list(self.objectives),
                "max_dma_words_per_cycle": self.max_dma_words_per_cycle,
                "pe_budget": self.pe_budget,
                **self._costing(),
            }
        assert gemm is not None
        space = self.machine_space()
        ident: dict[str, object] = {
            "oracle": self.oracle,
            "shape": str(gemm.shape),
            "spaces": self.spaces,
            "machine_space": repr(space) if space else None,
            "objectives": list(self.objectives),
            **oracle.identity(self.machine),
        }
        ident.update(self._costing())
        if not self.single:
            ident.update(workload=self.workload.name, gemm=gemm.name)
        if self.encoding != "flat" and self.conditional():
            ident["encoding"] = self.encoding  # absent: the flat encoding
        return ident

    def _costing(self) -> dict[str, object]:
        """The identity's energy part, present only when set: a table other than the shipped
        one (by a digest of its values) and the budgets."""
        found: dict[str, object] = {}
        if self.technology is not None:
            found["technology"] = _digest(technology_to_dict(self.technology))
        found.update(
            {
                k: getattr(self, k)
                for k in ("area_budget", "energy_budget")
                if getattr(self, k) is not None
            }
        )
        return found

    def conditional(self) -> bool:
        """Whether the encodings differ for these families (a parameter matters only sometimes)."""
        T = self.the_oracle().tile_edge(self.machine)
        shape = self.workload.gemms[0].shape
        return any(p.unless is not None for f in self.families() for p in f.params(shape, T))

    def run_name(self, given: str | None) -> str:
        """The run's name: the study (one product, co-design) or the workload's results folder."""
        from autotune.storage.names import automatic_name  # the storage package loads Optuna

        if given:
            return given
        if self.single:
            return automatic_name(self._single_name())
        extra = self.identity(None) if self.codesign else {}
        digest = _digest({"machine": self.machine.key(), "spaces": self.spaces, **extra})
        name = f"{self.the_oracle().workload_prefix(self.workload.name, self.machine)}-{digest}"
        return automatic_name(name.replace("workload-", "codesign-", 1) if self.codesign else name)

    def _single_name(self) -> str:
        oracle, gemm = self.the_oracle(), self.workload.gemms[0]
        ident = self.identity(gemm)
        defaults = ",".join(oracle.default_spaces)
        plain = {
            **ident,
            "spaces": defaults,
            "machine_space": None,
            "objectives": ["cycles"],
            **oracle.identity(oracle.plain_machine(self.machine)),
        }
        for key in ("encoding", "technology", "area_budget", "energy_budget"):
            plain.pop(key, None)
        if dataclasses.replace(self, spaces=defaults).conditional():
            plain["encoding"] = "conditional"  # the default sampler's
        # Studies of the flat TPE over the chapter and general spaces keep their names.
        legacy = {
            **{k: v for k, v in plain.items() if k != "encoding"},
            "spaces": ",".join(LEGACY_SPACES),
        }
        suffix = "" if ident in (plain, legacy) else "-" + _digest(ident)
        return oracle.study_prefix(gemm.shape, self.machine) + suffix

    def study_name(self, run_name: str, gemm: Gemm | None) -> str:
        from autotune.storage.names import member_name

        return run_name if self.single or gemm is None else member_name(run_name, gemm.name)

    def costing_metadata(self) -> dict[str, object]:
        """What a result's energy and area were costed with (written beside it): the table's
        name, the table itself when it is not the shipped one (to cost an entry again), the budgets."""
        costing = self.the_oracle().capability(EnergyAndArea)
        return {
            "technology": costing.tech().name if costing is not None else None,
            "technology_table": technology_to_dict(self.technology)
            if self.technology is not None
            else None,
            "area_budget": self.area_budget,
            "energy_budget": self.energy_budget,
        }

    # --- stored with each study ----------------------------------------------------------------

    def to_json(self) -> dict[str, object]:
        data = dataclasses.asdict(self)
        data["workload"] = {
            "name": self.workload.name,
            "gemms": [[g.name, str(g.shape), g.weight] for g in self.workload.gemms],
        }
        data["machine"] = self.machine.as_dict()
        data["objectives"] = list(self.objectives)
        data["technology"] = (
            technology_to_dict(self.technology) if self.technology is not None else None
        )
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> RunPlan:
        """A stored plan, including those stored before oracles were plug-ins (a `target`, a
        GA-1 machine for every oracle, the systolic budgets beside it)."""
        raw = dict(data)
        workload = raw.pop("workload")
        gemms = tuple(
            Gemm(name, parse_shape(shape), float(weight))
            for name, shape, weight in workload["gemms"]
        )
        raw.setdefault("encoding", "flat")
        name = str(raw.pop("oracle", None) or raw.pop("target", oracles.DEFAULT_ORACLE))
        oracle = oracles.get(name)
        raw = oracle.upgrade_plan(raw)
        record = dict(raw.pop("machine"))
        known = {f.name for f in dataclasses.fields(RunPlan)}
        settings = {k: v for k, v in raw.items() if k in known}
        settings["objectives"] = tuple(settings.get("objectives", ("cycles",)))
        if settings.get("technology") is not None:
            try:
                settings["technology"] = technology_from_dict(settings["technology"])
            except TechnologyError as exc:
                raise PlanError(f"the stored technology table is unreadable: {exc}") from None
        return RunPlan(
            Workload(str(workload["name"]), gemms),
            oracle.machine_from_record(record),
            oracle=name,
            **settings,
        )


def _digest(ident: dict[str, object]) -> str:
    return hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:8]
