"""The plan's size check: every GEMM's counts (cycles, multiply-accumulates, words) must fit a
64-bit integer on every machine the plan may try, or the run is refused before any trial."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Sequence

from autotune.errors import PlanError, SizeError
from search_spaces.domains import IntRange

if TYPE_CHECKING:
    from autotune.oracles import Oracle
    from search_spaces.machine import MachineSpace
    from workloads.model import Gemm


def check_sizes(
    gemms: Sequence[Gemm], machines: Sequence[Any], single: bool, oracle: Oracle
) -> None:
    """SizeError, naming the GEMM of a workload (not `single`), for the first shape too large to
    count on any of `machines`."""
    for gemm in gemms:
        for machine in machines:
            try:
                oracle.check_size(gemm.shape, machine)
            except SizeError as exc:
                if single:
                    raise
                raise SizeError(f"GEMM {gemm.name!r}: {exc}", setting="workload") from None


# A workload's distinct shapes are a study each, all opened before the first trial: past this
# many a run would hold thousands of studies (and take days at the default trials).
MAX_SHAPES = 1000


def check_shape_count(gemms: Sequence[Gemm]) -> None:
    """PlanError when a workload has more distinct shapes than one run tunes."""
    shapes = len({gemm.shape for gemm in gemms})
    if shapes > MAX_SHAPES:
        raise PlanError(
            f"the workload has {shapes:,} distinct GEMM shapes: a run tunes at most {MAX_SHAPES:,} "
            "(split the workload)",
            setting="workload",
        )


def bounding_machines(base: Any, space: MachineSpace | None) -> list[Any]:
    """The base machine, or with a machine search every corner of its ranges: the counts grow
    with each parameter one way, so the corners bound every machine in between."""
    if space is None:
        return [base]
    ends: list[tuple[str, list[int]]] = []
    for name, domain in space.ranges:
        values = [domain.low, domain.high] if isinstance(domain, IntRange) else domain.options
        ends.append((name, sorted({min(int(v) for v in values), max(int(v) for v in values)})))
    found = []
    for values in itertools.product(*(options for _, options in ends)):
        try:
            found.append(base.replace(**dict(zip((n for n, _ in ends), values))))
        except ValueError:  # not a machine at all: the search refuses it elsewhere
            continue
    return found or [base]


def reachable_machines(base: Any, space: MachineSpace | None) -> list[Any]:
    """The machines that bound what an evaluation may simulate: the corners of
    `bounding_machines`, each with no more slots than the scratchpad budget holds (a machine over
    the budget is infeasible and never simulated). GA-1 machines."""
    machines = bounding_machines(base, space)
    if space is None:
        return machines
    most = max(3, space.max_scratchpad_words // base.tile_words)
    found = {m.key(): m for m in (m.replace(slots=min(m.slots, most)) for m in machines)}
    return list(found.values())
