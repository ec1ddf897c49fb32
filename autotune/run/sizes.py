"""The plan's size check: every GEMM's counts (cycles, multiply-accumulates, words) must fit a
64-bit integer on every machine the plan may try, or the run is refused before any trial."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from autotune.errors import PlanError, SizeError

if TYPE_CHECKING:
    from autotune.oracles import Oracle
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
                if single or exc.setting == "machine":
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
