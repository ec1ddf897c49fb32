"""The exact optimum of one GA-1 product, as `autotune optimum` runs it: the instance refused
before anything is solved, the schedule solved by CP-SAT (simcore.ga1.exact), checked twice
(simcore's reference simulator inside the solver, then the compiled engine that times every
trial of the tuner), and its record: one JSON file, which the command writes and may import into
a study (a trial of the `stored` family, origin ORIGIN).

The file (format FORMAT, version VERSION) is one JSON object: `shape`, `machine` (every
parameter), `status` (optimal, feasible or start), `proven`, `cycles` (the program's, simulated),
`bound` (a proven lower bound on every schedule of the scope), `gap` (cycles / bound - 1),
`objective`, `start_cycles`, `start` (what the solver started from), `interrupted` (a stop
request ended the search as a time limit would), `complete`, `wall_time`, `options`
(ExactOptions), `verified` (both checks passed and agree on the cycles), `verification` (one
line), `engine_cycles`,
`program_digest` (its name in a study's programs/ folder, search_spaces.stored), `program` (the
program in the asm text format, simcore.ga1.asm) and `autotune_version`."""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autotune import __version__
from autotune.errors import PlanError, Text, ref
from autotune.oracles.ga1.oracle import ORACLE as GA1
from autotune.record import Provenance
from search_spaces.stored import digest_of
from simcore.ga1.asm import to_text
from simcore.ga1.exact import (
    ExactError,
    ExactOptions,
    ExactResult,
    Progress,
    check_instance,
    check_solver,
    solve_optimum,
)
from simcore.ga1.exact.apart import Stop
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.verify import Verification
from simcore.shape import Shape

FORMAT = "autotune-optimum"
VERSION = 1
SOLVER = "cp-sat"  # the provenance of an imported optimum: the sampler that "drew" it
ORIGIN = "optimum"  # autotune.record.ORIGINS
DEFAULT_START = "the general generator's default"


@dataclass(frozen=True)
class Solved:
    """The solver's result and the compiled engine's run of its program."""

    result: ExactResult
    engine: Verification
    text: str  # the program in the asm format
    start: str = DEFAULT_START  # what the solver started from
    interrupted: bool = False  # a stop request ended the search: its best so far, not proven

    @property
    def digest(self) -> str:
        return digest_of(self.text)

    @property
    def verified(self) -> bool:
        """Both simulators ran the program exactly (C equals numpy's product, hazard replay
        clean) in the same cycles."""
        reference = self.result.verification
        return reference.ok and self.engine.ok and self.engine.cycles == self.result.cycles

    def verification(self) -> str:
        reference, engine = self.result.verification, self.engine
        if self.verified:
            return (
                "result equals numpy's product, hazard replay clean, in the reference simulator "
                f"and the compiled engine ({self.result.cycles:,} cycles each)"
            )
        if not engine.ok:
            return f"the compiled engine: {engine.describe()}"
        if not reference.ok:
            return f"the reference simulator: {reference.describe()}"
        return (
            f"the reference simulator runs it in {self.result.cycles:,} cycles, "
            f"the compiled engine in {engine.cycles:,}"
        )

    def record(self) -> dict[str, object]:
        data: dict[str, object] = {"format": FORMAT, "version": VERSION}
        data.update(self.result.record())
        data.update(
            start=self.start,
            interrupted=self.interrupted,
            gap=round(self.result.gap, 6),
            verified=self.verified,
            verification=self.verification(),
            engine_cycles=self.engine.cycles,
            program_digest=self.digest,
            program=self.text,
            autotune_version=__version__,
        )
        return data


def exact_options(
    time_limit: float | None,
    work_limit: float | None = None,
    workers: int = 8,
    seed: int = 0,
    proof_limit: float | None = None,
    search_nodes: int = ExactOptions.search_nodes,
) -> ExactOptions:
    """CP-SAT's settings: `workers` strategies interleaved in one thread, `seed`, and the limits
    (wall seconds; units of CP-SAT's deterministic time, which reproduce). `proof_limit` (units,
    each try) asks, when the search stops short, whether a schedule one cycle faster exists;
    `search_nodes` caps the exhaustive search on the smallest instances."""
    limits = (("time_limit", time_limit), ("work_limit", work_limit), ("proof_limit", proof_limit))
    for setting, value in limits:
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise PlanError(
                Text(ref(setting), f" must be a positive number, got {value}"), setting=setting
            )
    if workers < 1:
        raise PlanError(
            Text(ref("workers"), f" must be at least 1, got {workers}"), setting="workers"
        )
    if search_nodes < 0:
        raise PlanError(
            Text(ref("search_nodes"), f" must not be negative, got {search_nodes}"),
            setting="search_nodes",
        )
    return ExactOptions(
        time_limit=time_limit,
        work_limit=work_limit,
        workers=workers,
        seed=seed,
        proof_limit=proof_limit,
        search_nodes=search_nodes,
    )


def check(shape: Shape, machine: Machine) -> None:
    """Refuse, before anything is solved, an instance the exact model does not take, a machine
    no schedule runs on, or a missing OR-Tools (the `exact` extra)."""
    try:
        GA1.check_machine(machine)
    except ValueError as exc:
        raise PlanError(str(exc), setting="machine") from None
    try:
        check_instance(shape, machine)
    except ExactError as exc:
        raise PlanError(str(exc), setting="shape") from None
    try:
        check_solver()
    except ExactError as exc:
        raise PlanError(str(exc)) from None


def default_out(results: Path, shape: Shape, machine: Machine) -> Path:
    """results/optimum/<shape>-s<slots>-<digest of the machine>.json."""
    digest = hashlib.sha1(machine.key().encode()).hexdigest()[:8]
    return results / "optimum" / f"{shape}-s{machine.slots}-{digest}.json"


def solve(
    shape: Shape,
    machine: Machine,
    options: ExactOptions,
    progress: Progress | None = None,
    start: Start | None = None,
    stop: Stop | None = None,
) -> Solved:
    """The solver's schedule, from `start` (None: the general generator's default), run again
    by the compiled engine; ExactError if the solver's own check of it fails. `stop` (polled
    while the solver runs, e.g. `threading.Event().is_set`) ends the search at once: the result
    is the best schedule found by then, marked `interrupted` (unless it is proven)."""
    from simcore.ga1.engine import verify_program  # numba: loaded when a program is run

    check(shape, machine)
    program = start.program if start is not None else None
    result = solve_optimum(shape, machine, options, start=program, progress=progress, stop=stop)
    engine = verify_program(machine, result.program, shape)
    label = start.label if start is not None else DEFAULT_START
    return Solved(result, engine, to_text(result.program), label, interrupted=result.interrupted)


@dataclass(frozen=True)
class Start:
    """A schedule the solver starts from (its first solution and horizon)."""

    program: Program
    label: str


def takes(program: Program, machine: Machine, shape: Shape) -> bool:
    """Whether the exact model takes `program` as its start (a program in its scope)."""
    from simcore.ga1.exact import PlanError, plan_of

    try:
        plan_of(program, machine, shape)
    except PlanError:
        return False
    return True


def provenance(solved: Solved, worker: str) -> Provenance:
    """Who made an imported optimum: the solver (the "sampler" that drew it) and its seed."""
    return Provenance(SOLVER, solved.result.options.seed, __version__, worker)


def source(solved: Solved) -> dict[str, Any]:
    """What made the schedule, kept with its trial: the solver, its start and what it proved."""
    result = solved.result
    return {
        "solver": SOLVER,
        "status": result.status,
        "bound": result.bound,
        "proven": result.proven,
        "complete": result.complete,
        "start_cycles": result.start_cycles,
        "start": solved.start,
        "wall_time": round(result.wall_time, 3),
        "options": asdict(result.options),
    }
