"""The first stage of a run: the plan and its options checked, once, before anything is created
or any heavy library is loaded. Every combination no search can honour is a one-line domain
error naming its setting; the oracle's size guard refuses work past the run's limits; what the
user should know before the first evaluation (the guard's notices, the oracle's notes on the
shapes) is gathered for the front end to say."""

from __future__ import annotations

from dataclasses import dataclass, replace

from autotune.errors import PlanError, Text, ref
from autotune.oracles.capabilities import SizeGuard, WorkLimits
from autotune.run.options import RunOptions, check_options
from autotune.run.plan import RunPlan
from autotune.search.sampling import encoding_for


@dataclass(frozen=True)
class Checked:
    """A plan and its options that every check passed: nothing is created yet."""

    plan: RunPlan  # with the encoding of the options' sampler
    options: RunOptions
    name: str  # the run's: a study (one product, a co-design) or a workload's results folder
    notices: tuple[str, ...]  # the size guard's: how long evaluations take, a compilation
    notes: tuple[str, ...]  # the oracle's notes on the shapes (a padded shape, ...)


def check(plan: RunPlan, options: RunOptions) -> Checked:
    """The plan validated (PlanError, SizeError, naming the setting at fault), the options
    checked by their declarations, the run's name, and the size guard on every GEMM."""
    from autotune.storage.names import check_name  # the storage package loads Optuna

    plan.validate()
    check_options(options)
    if options.study is not None:
        check_name(options.study)
    if options.transfer and plan.codesign:
        raise PlanError(
            Text(
                ref("transfer"),
                " starts from earlier studies' schedules; a co-design searches machines",
            ),
            setting="transfer",
        )
    plan = replace(plan, encoding=encoding_for(options.sampler))
    name = check_name(plan.run_name(options.study), setting="study" if options.study else None)
    notices = guard(plan, WorkLimits(plan.max_products, options.max_memory))
    return Checked(plan, options, name, tuple(notices), tuple(plan.notes()))


def guard(plan: RunPlan, limits: WorkLimits) -> list[str]:
    """The oracle's size guard on every GEMM (WorkError past the limits), and on the largest
    machines a machine search may simulate; what it says, each line once. Nothing for an oracle
    without a size guard."""
    oracle = plan.the_oracle()
    size_guard = oracle.capability(SizeGuard)
    if size_guard is None:
        return []
    space = plan.machine_space()
    hint = Text("; narrow ", ref("machine_range"), " or ", ref("max_scratchpad_words"))
    said: dict[str, None] = {}
    for gemm in plan.workload.gemms:
        work = size_guard.check_work(gemm.shape, plan.machine, limits)
        if work is None:
            continue
        said.update(dict.fromkeys(size_guard.notices(gemm.shape, work)))
        for machine in space.reachable(plan.machine) if space is not None else ():
            size_guard.check_memory(gemm.shape, machine, limits, hint)
    return list(said)
