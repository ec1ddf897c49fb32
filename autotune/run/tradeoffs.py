"""The objectives a run may name: known to what it searches, cycles first, each once, and each
one a figure its search can trade against cycles. The plan checks them here, for one product
and for a workload alike."""

from __future__ import annotations

from typing import Sequence

from autotune.errors import PlanError, Text, ref
from autotune.oracles import Oracle
from autotune.oracles.measures import NONE
from autotune.oracles.measures import objectives as objectives_in


def check_objectives(
    objectives: Sequence[str], oracle: Oracle, *, single: bool, search_machine: bool
) -> None:
    """Refuse (PlanError, naming `objectives`) what no search of the run can honour."""
    codesign = search_machine and not single
    declared = objectives_in(oracle.measures)
    # A co-design's objectives are the workload's totals: a measure no workload totals is none.
    known = [m.name for m in declared if not codesign or m.total != NONE]
    where = "a co-design" if codesign else f"the {oracle.name} oracle"
    unknown = [n for n in objectives if n not in known]
    if unknown or not objectives:
        raise PlanError(
            f"unknown objective(s) {', '.join(unknown) or '(none)'} for {where} "
            f"(known: {', '.join(known)})",
            setting="objectives",
        )
    if len(set(objectives)) != len(objectives):
        raise PlanError(f"{','.join(objectives)} names an objective twice", setting="objectives")
    if objectives[0] != "cycles":
        raise PlanError("the first objective must be cycles", setting="objectives")
    if not search_machine:
        _check_traded(objectives, oracle, single)


def _check_traded(objectives: Sequence[str], oracle: Oracle, single: bool) -> None:
    """Without a machine search, an objective besides cycles may be one nothing trades: a
    workload tuned GEMM by GEMM ranks each GEMM by cycles alone, and one product's machine is
    fixed, so the machine's own figures (GA-1's area and parameters) are one value for every
    schedule and would make a front of one point."""
    if not single:
        if tuple(objectives) != ("cycles",):
            raise PlanError(
                Text(
                    ref("objectives"),
                    " other than cycles need ",
                    ref("search_machine"),
                    " (a machine to trade against)",
                ),
                setting="objectives",
            )
        return
    machine_only = {m.name for m in oracle.measures if m.machine_only}
    fixed = [name for name in objectives if name in machine_only]
    if fixed:
        verb, pronoun = ("is", "it") if len(fixed) == 1 else ("are", "them")
        raise PlanError(
            Text(
                ref("objectives"),
                f" {','.join(objectives)}: {' and '.join(fixed)} {verb} the same for every "
                f"schedule on a fixed machine; trading {pronoun} against cycles needs ",
                ref("search_machine"),
            ),
            setting="objectives",
        )
