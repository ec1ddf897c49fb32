"""Hypothesis strategies for machines with a memory system, block schedules and designs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic.blocked.schedule import LOOP_ORDERS, BlockSchedule, feasibility
from simcore.systolic.machine import ArchError, SystolicMachine
from simcore.systolic.machine_parse import parse_machine
from simcore.systolic.model import (
    DATAFLOWS,
    EDGES,
    FOLDS,
    ORDERS,
    Assumptions,
    Mapping,
    SystolicDesign,
)

LAYOUTS = {
    "scratchpad and accumulator": ({"spad": ["a", "b"]}, True),
    "three buffers (SCALE-Sim)": ({"ifmap": ["a"], "filter": ["b"], "ofmap": ["c"]}, False),
    "one shared buffer": ({"shared": ["a", "b", "c"]}, False),
    "two buffers and accumulator": ({"act": ["a"], "wgt": ["b"]}, True),
}
RATES = [Fraction(1), Fraction(2), Fraction(3, 2), Fraction(1, 3), Fraction(5, 2), Fraction(8)]


def _rate(value: Fraction) -> str:
    return f"{float(value)!r} words/cycle" if value.denominator in (1, 2) else str(value)


@st.composite
def machine_dicts(draw: st.DrawFn, max_side: int = 4) -> dict[str, Any]:
    holds, accumulator = LAYOUTS[draw(st.sampled_from(sorted(LAYOUTS)))]
    bits = {
        "operand_bits": 8,
        "accumulator_bits": draw(st.sampled_from([8, 16, 32])),
        "output_bits": draw(st.sampled_from([8, 16])),
    }

    def port() -> dict[str, Any]:
        return {
            "capacity": f"{draw(st.integers(8, 600))} words",
            "read_width": _rate(draw(st.sampled_from(RATES))),
            "write_width": _rate(draw(st.sampled_from(RATES))),
        }

    data: dict[str, Any] = {
        "name": "random",
        "array": {
            "rows": draw(st.integers(1, max_side)),
            "cols": draw(st.integers(1, max_side)),
            "dataflow": draw(st.sampled_from(DATAFLOWS)),
            "clock": "1 GHz",
        },
        "words": bits,
        "buffers": {name: {"holds": ops, **port()} for name, ops in holds.items()},
        "dram": {
            "bandwidth": _rate(draw(st.sampled_from(RATES))),
            "latency": draw(st.integers(0, 20)),
            "setup": draw(st.integers(0, 4)),
        },
    }
    if accumulator:
        acc = port()
        acc["capacity"] = f"{draw(st.integers(4, 300)) * bits['accumulator_bits'] // 8} B"
        data["accumulator"] = acc
    return data


@st.composite
def machines(draw: st.DrawFn, max_side: int = 4) -> SystolicMachine:
    data = draw(machine_dicts(max_side))
    try:
        return parse_machine(data)
    except ArchError:
        assume(False)
        raise


@st.composite
def designs_on(draw: st.DrawFn, machine: SystolicMachine) -> SystolicDesign:
    array = machine.array
    mapping = Mapping(
        draw(st.integers(1, array.rows)),
        draw(st.integers(1, array.cols)),
        draw(st.sampled_from(ORDERS)),
    )
    assumptions = Assumptions(
        draw(st.booleans()),
        draw(st.sampled_from(EDGES)),
        draw(st.booleans()),
        draw(st.sampled_from(FOLDS)),
    )
    return SystolicDesign(array, draw(st.sampled_from(DATAFLOWS)), mapping, assumptions)


@st.composite
def schedules_for(draw: st.DrawFn, machine: SystolicMachine, shape: Shape) -> BlockSchedule:
    schedule = BlockSchedule(
        draw(st.integers(1, shape.m)),
        draw(st.integers(1, shape.k)),
        draw(st.integers(1, shape.n)),
        draw(st.sampled_from(LOOP_ORDERS)),
        (
            draw(st.sampled_from([1, 2])),
            draw(st.sampled_from([1, 2])),
            draw(st.sampled_from([1, 2])),
        ),
    )
    assume(feasibility(machine, schedule, shape).ok)
    return schedule


def shapes(most: int = 12) -> st.SearchStrategy[Shape]:
    return st.builds(Shape, st.integers(1, most), st.integers(1, most), st.integers(1, most))
