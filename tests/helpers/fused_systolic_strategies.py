"""Hypothesis strategies for fused groups on systolic machines: small groups, schedules that
fit, vector units."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from simcore.fusion.groups import EPILOGUE_STEPS, EpilogueGemm, FusedMlp
from simcore.systolic.fused.evaluate import fused_build
from simcore.systolic.fused.schedule import LOOP_ORDERS, GemmSchedule, MlpSchedule
from simcore.systolic.fused.slots import Costs
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign
from simcore.systolic.vector_unit import VectorUnit


@st.composite
def vector_units(draw: st.DrawFn) -> VectorUnit:
    return VectorUnit(
        lanes=draw(st.integers(1, 6)),
        special=draw(st.integers(1, 5)),
        port_words=draw(st.sampled_from([None, 1, 3])),
    )


@st.composite
def small_groups(draw: st.DrawFn, most: int = 12) -> EpilogueGemm | FusedMlp:
    size = st.integers(1, most)
    if draw(st.booleans()):
        known = [step for step in EPILOGUE_STEPS if step != "gate"]  # GA-1's alone
        steps = tuple(draw(st.lists(st.sampled_from(known), max_size=3, unique=True)))
        scale = 0.5 if "scale" in steps else 1.0
        return EpilogueGemm(draw(size), draw(size), draw(size), steps, scale=scale)
    return FusedMlp(
        draw(size),
        draw(size),
        draw(st.integers(1, 2 * most)),
        draw(size),
        activation=draw(st.sampled_from(["relu", "gelu", "silu"])),
        bias=draw(st.booleans()),
    )


@st.composite
def schedules_of(draw: st.DrawFn, group: EpilogueGemm | FusedMlp) -> GemmSchedule | MlpSchedule:
    if isinstance(group, EpilogueGemm):
        return GemmSchedule(
            draw(st.integers(1, group.m)),
            draw(st.integers(1, group.k)),
            draw(st.integers(1, group.n)),
            draw(st.sampled_from(LOOP_ORDERS)),
            tuple(draw(st.sampled_from([1, 2])) for _ in range(3)),  # type: ignore[arg-type]
        )
    g = group
    return MlpSchedule(
        draw(st.integers(1, g.m)),
        draw(st.integers(1, g.d)),
        draw(st.integers(1, g.hidden)),
        draw(st.integers(1, g.d_out)),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.sampled_from([1, 2])),
        draw(st.sampled_from([1, 2])),
        draw(st.booleans()),
    )


def fits(
    machine: SystolicMachine,
    design: SystolicDesign,
    vector: VectorUnit,
    group: EpilogueGemm | FusedMlp,
    schedule: GemmSchedule | MlpSchedule,
) -> bool:
    return not fused_build(Costs(machine, design, vector), group, schedule).slots.over()


def assume_fits(*args: object) -> None:
    assume(fits(*args))  # type: ignore[arg-type]
