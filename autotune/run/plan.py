"""What a run tunes: a `RunSpec`, validated before anything is created. A single product is a
workload of one GEMM. The spec is stored with every study it creates (as JSON), so that the
study's results can be rebuilt from its storage alone; its identity (what a resumed study must
match) and its default study names are the ones the tuner has always used."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from simcore.ga1.machine import Machine
from simcore.shape import Shape, parse_shape

from search_spaces.base import Family
from search_spaces.machine import MachineSpace, parse_ranges
from search_spaces.registry import DEFAULT_SPACES, LEGACY_SPACES, SpaceError, available, families
from search_spaces.workload import Gemm, Workload

from autotune.search.codesign import OBJECTIVES as CODESIGN_OBJECTIVES
from autotune.search.codesign import Codesign
from autotune.errors import UsageError
from autotune.search.problem import DIRECTIONS, Problem, Search

TARGETS: tuple[str, ...] = ("ga1", "systolic")


@dataclass(frozen=True)
class RunSpec:
    workload: Workload                 # a single --shape is a workload of one GEMM
    machine: Machine                   # the base machine
    single: bool = True                # from --shape: one study, no workload summary
    target: str = "ga1"
    spaces: str = ",".join(DEFAULT_SPACES)  # as given: part of the study identity
    objectives: tuple[str, ...] = ("cycles",)
    search_machine: bool = False
    machine_range: str = ""
    max_scratchpad_words: int | None = None
    max_dma_words_per_cycle: int | None = None
    pe_budget: int = 4096
    max_hbm_words: int = 64
    encoding: str = "conditional"      # how trials suggest parameters: the sampler's (autotune.search.sampling.ENCODING)

    @staticmethod
    def of_shape(shape: Shape, machine: Machine, **settings: object) -> RunSpec:
        return RunSpec(Workload(str(shape), (Gemm(str(shape), shape, 1.0),)), machine, True, **settings)  # type: ignore[arg-type]

    @property
    def codesign(self) -> bool:
        """Machines searched for a whole workload (one study), not schedules per GEMM."""
        return self.search_machine and not self.single

    # --- validation and the searches ---------------------------------------------------------

    def families(self) -> tuple[Family, ...]:
        if self.target == "systolic":
            from search_spaces.systolic import systolic_family

            return (systolic_family(self.pe_budget, self.max_hbm_words),)
        try:
            found = families([name.strip() for name in self.spaces.split(",") if name.strip()])
        except SpaceError as exc:
            raise UsageError(f"{exc}; available spaces: {', '.join(available())}") from None
        other = sorted({f.oracle for f in found} - {self.target})
        if other:
            raise UsageError(f"--space {self.spaces} holds {other[0]} families: use it with --target {other[0]}")
        return found

    def machine_space(self) -> MachineSpace | None:
        if not self.search_machine:
            return None
        try:
            return MachineSpace.create(self.machine, parse_ranges(self.machine_range), self.max_scratchpad_words)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def validate(self) -> None:
        """Every combination the searches cannot honour is a one-line usage error."""
        if self.target == "systolic" and not self.single:
            raise UsageError("--workload is for the ga1 target")
        if self.target == "systolic" and self.search_machine:
            raise UsageError("--search-machine is for the ga1 target; the systolic target searches its array itself")
        found = self.families()
        # What every family measures (a co-design: the workload's weighted cycles and the machine's costs).
        known = CODESIGN_OBJECTIVES if self.codesign else tuple(n for n in found[0].measures if all(n in f.measures for f in found))
        where = "--workload --search-machine" if self.codesign else f"target {self.target}"
        unknown = [n for n in self.objectives if n not in known or n not in DIRECTIONS]
        if unknown or not self.objectives:
            raise UsageError(f"unknown objective(s) {', '.join(unknown) or '(none)'} for {where} (known: {', '.join(known)})")
        if self.objectives[0] != "cycles":
            raise UsageError("the first objective must be cycles")
        if not self.single and not self.search_machine and self.objectives != ("cycles",):
            raise UsageError("--objectives other than cycles need --search-machine (a machine to trade against)")
        if (self.machine_range or self.max_scratchpad_words) and not self.search_machine:
            raise UsageError("--machine-range and --max-scratchpad-words need --search-machine")
        if self.max_dma_words_per_cycle is not None and not self.codesign:
            raise UsageError("--max-dma-words-per-cycle is for --workload --search-machine")
        space = self.machine_space()
        if space is None and self.target == "ga1" and self.machine.slots < 3:
            raise UsageError(f"a scratchpad of {self.machine.slots} slots is too small for any schedule (a product needs 3: C, A and B)")

    def notes(self) -> list[str]:
        """The families' notes on the shapes (a padded shape, ...), each once."""
        families, seen = self.families(), {}
        for gemm in self.workload.gemms:
            seen.update(dict.fromkeys(note for family in families for note in family.notes(gemm.shape, self.machine)))
        return list(seen)

    def searches(self) -> list[tuple[Gemm | None, Search]]:
        """One search per study: a schedule search per GEMM, or one co-design search."""
        found, space = self.families(), self.machine_space()
        if self.codesign:
            assert space is not None
            return [(None, Codesign(self.workload, self.machine, found, space, self.objectives,
                                    self.max_dma_words_per_cycle, self.pe_budget))]
        return [(gemm, Problem(gemm.shape, self.machine, found, space, self.objectives, gemm, self.encoding)) for gemm in self.workload.gemms]

    # --- identity and names ------------------------------------------------------------------

    def identity(self, gemm: Gemm | None) -> dict[str, object]:
        """What a study is about; a resumed study must match it."""
        machine = self.machine.key()
        if self.codesign:
            return {"oracle": "ga1-codesign", "workload": [[g.name, str(g.shape), g.weight] for g in self.workload.gemms],
                    "machine": machine, "spaces": self.spaces, "machine_space": repr(self.machine_space()),
                    "objectives": list(self.objectives), "max_dma_words_per_cycle": self.max_dma_words_per_cycle,
                    "pe_budget": self.pe_budget}
        assert gemm is not None
        space = self.machine_space()
        ident: dict[str, object] = {"oracle": self.target, "shape": str(gemm.shape), "machine": machine, "spaces": self.spaces,
                                    "machine_space": repr(space) if space else None, "objectives": list(self.objectives)}
        if self.target == "systolic":
            ident.update(spaces="systolic", pe_budget=self.pe_budget, max_hbm_words=self.max_hbm_words)
        if not self.single:
            ident.update(workload=self.workload.name, gemm=gemm.name)
        if self.encoding != "flat" and self.conditional():
            ident["encoding"] = self.encoding  # absent: the flat encoding, as every study before issue 12
        return ident

    def conditional(self) -> bool:
        """Whether the encodings differ for these families (some parameter matters only sometimes)."""
        return any(p.unless is not None for f in self.families() for p in f.params(self.workload.gemms[0].shape, self.machine.T))

    def run_name(self, given: str | None) -> str:
        """The run's name: the study (one product, co-design) or the workload's results folder."""
        if given:
            return given
        if self.single:
            gemm = self.workload.gemms[0]
            ident = self.identity(gemm)
            plain = {**ident, "spaces": ",".join(DEFAULT_SPACES), "machine_space": None,
                     "machine": Machine(slots=self.machine.slots).key(), "objectives": ["cycles"]}
            plain.pop("encoding", None)
            if dataclasses.replace(self, spaces=",".join(DEFAULT_SPACES)).conditional():
                plain["encoding"] = "conditional"  # the default sampler's
            # The tuner before issue 12 (--sampler tpe --space chapter,general) keeps its names, so its studies resume.
            legacy = {**{k: v for k, v in plain.items() if k != "encoding"}, "spaces": ",".join(LEGACY_SPACES)}
            suffix = "" if ident in (plain, legacy) else "-" + _digest(ident)
            if self.target == "systolic":
                return f"systolic-{gemm.shape}-pe{self.pe_budget}{suffix}"
            return f"ga1-{gemm.shape}-s{self.machine.slots}{suffix}"
        extra = self.identity(None) if self.codesign else {}
        name = f"workload-{self.workload.name}-s{self.machine.slots}-{_digest({'machine': self.machine.key(), 'spaces': self.spaces, **extra})}"
        return name.replace("workload-", "codesign-", 1) if self.codesign else name

    def study_name(self, run_name: str, gemm: Gemm | None) -> str:
        return run_name if self.single or gemm is None else f"{run_name}-{gemm.name}"

    # --- stored with each study ----------------------------------------------------------------

    def to_json(self) -> dict[str, object]:
        data = dataclasses.asdict(self)
        data["workload"] = {"name": self.workload.name, "gemms": [[g.name, str(g.shape), g.weight] for g in self.workload.gemms]}
        data["machine"] = self.machine.as_dict()
        data["objectives"] = list(self.objectives)
        return data

    @staticmethod
    def from_json(data: dict[str, object]) -> RunSpec:
        raw = dict(data)
        workload = raw.pop("workload")
        gemms = tuple(Gemm(name, parse_shape(shape), float(weight)) for name, shape, weight in workload["gemms"])  # type: ignore[index]
        raw.setdefault("encoding", "flat")  # stored before issue 12
        return RunSpec(Workload(str(workload["name"]), gemms), Machine(**raw.pop("machine")),  # type: ignore[index, arg-type]
                       objectives=tuple(raw.pop("objectives")), **raw)  # type: ignore[arg-type]


def _digest(ident: dict[str, object]) -> str:
    return hashlib.sha1(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:8]
