"""What a solve takes and returns: its options, its result, its error."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from simcore.ga1.asm import to_text
from simcore.ga1.exact.timed import MAX_NODES as SEARCH_NODES
from simcore.ga1.exact.timed import MAX_PRODUCTS as SEARCH_PRODUCTS
from simcore.ga1.exact.transfers import MAX_PRODUCTS as PEBBLE_PRODUCTS
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.ga1.verify import Verification
from simcore.shape import Shape


class ExactError(ValueError):
    """The exact solver cannot take this instance (too few slots, a start outside its scope,
    OR-Tools not installed) or found a schedule that does not run as modelled."""


@dataclass(frozen=True)
class ExactOptions:
    """How CP-SAT runs.

    `time_limit` (wall seconds, for the whole solve: the exhaustive search and the decision
    questions get what CP-SAT leaves of it) and `work_limit` (CP-SAT's deterministic time) each
    stop the search; `workers` is CP-SAT's portfolio size; `interleave` runs that portfolio in one thread,
    worker after worker, so that the search does not depend on thread timing; `seed` is CP-SAT's
    random seed. `copies` caps the residencies of each tile and the parts of each accumulator
    (None: the exact model); with a cap the optimum is the best of a smaller class and the
    solver's bound is not a bound on every schedule. `use_lower_bound` adds the proven bounds
    (proven_bounds: lower_bound and the fewest transfers) as constraints (they hold on the same
    scope, and only speed up the proof). `pebble_products` is the largest instance, in tile
    products, whose fewest transfers are searched for those bounds (transfers.py).
    `proof_limit` (CP-SAT's deterministic time, each try; None: none) runs, when the search
    stops short of a proof, the decision problem "a schedule of at most best - 1 cycles?": a
    model without objective whose makespan may not exceed best - 1, often easier for CP-SAT
    than the optimisation. Infeasible proves the best schedule optimal (the model holds every
    schedule of the scope, see model.py); a solution is a better schedule, and the next try
    asks for one cycle less than it. `search_products` and `search_nodes`: on instances of at
    most that many tile products, a search short of a proof is followed by the exhaustive
    search of timed.py, which visits at most `search_nodes` states (within `time_limit`); when it
    ends, its schedule is optimal (0 states: no such search)."""

    time_limit: float | None = 10.0
    work_limit: float | None = None
    workers: int = 1
    interleave: bool = True
    seed: int = 0
    copies: int | None = None
    use_lower_bound: bool = True
    proof_limit: float | None = None
    pebble_products: int = PEBBLE_PRODUCTS
    search_products: int = SEARCH_PRODUCTS
    search_nodes: int = SEARCH_NODES

    def __post_init__(self) -> None:
        for name in ("time_limit", "work_limit", "proof_limit"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ExactError(f"{name} must be positive, got {value!r}")
        if self.workers < 1:
            raise ExactError(f"workers must be at least 1, got {self.workers}")
        for name in ("pebble_products", "search_products", "search_nodes"):
            if getattr(self, name) < 0:
                raise ExactError(f"{name} must not be negative, got {getattr(self, name)}")
        if self.copies is not None and self.copies < 1:
            raise ExactError(f"copies must be at least 1, got {self.copies}")


@dataclass(frozen=True)
class ExactResult:
    """The schedule the solver returns, with what is proven about it.

    `cycles` are the returned program's, as the ordinary simulator runs it; `verification` is
    its exact check (numpy's product, hazard replay). `objective` is the solver's best makespan
    (None: it found none, and `program` is the starting schedule, status "start"); `bound` a
    proven lower bound on every schedule of the scope (the solver's, or proven_bounds' when the
    model was capped). `status` is "optimal" (the model's optimum, proven), "feasible" (stopped
    by a limit or a request to stop, `interrupted`) or "start"."""

    shape: Shape
    machine: Machine
    status: str
    cycles: int
    objective: int | None
    bound: int
    start_cycles: int
    program: Program
    verification: Verification
    wall_time: float
    complete: bool  # the model had every copy a schedule can use (no cap)
    options: ExactOptions
    interrupted: bool = False  # asked to stop: the best found by then, as at a time limit

    @property
    def proven(self) -> bool:
        """`cycles` is the optimum of every schedule in the scope."""
        return self.complete and self.cycles == self.bound

    @property
    def gap(self) -> float:
        """How far the schedule may be from the optimum: cycles / bound - 1."""
        return self.cycles / self.bound - 1

    def record(self) -> dict[str, object]:
        """The result as plain data (JSON): what was proven, how it was run, the program as text."""
        return {
            "shape": str(self.shape),
            "machine": self.machine.as_dict(),
            "status": self.status,
            "cycles": self.cycles,
            "objective": self.objective,
            "bound": self.bound,
            "proven": self.proven,
            "complete": self.complete,
            "start_cycles": self.start_cycles,
            "wall_time": round(self.wall_time, 3),
            "interrupted": self.interrupted,
            "verified": self.verification.ok,
            "verification": self.verification.describe(),
            "options": asdict(self.options),
            "program": to_text(self.program),
        }
