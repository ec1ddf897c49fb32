"""The timeline's busy spans (engine/spans.py) are the trace's bars, back-to-back ones merged."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from simcore import Machine, Program, Shape, blocked, simulate
from simcore.ga1 import engine
from simcore.ga1.engine.spans import ROWS, busy_spans, first_instructions
from simcore.ga1.generator import GeneralParams, default_params
from simcore.ga1.program import MXU, OPCODE_NAMES
from tests.helpers.examples import examples
from tests.helpers.random_programs import cases


def _bars(trace: list, program: Program, op: int) -> list[tuple[int, int]]:
    """(start, finish) of each instruction of opcode `op` that takes time (the old picture's bars)."""
    return [
        (start, finish)
        for index, _engine, start, finish, *_ in trace
        if finish > start and program.code[index, 0] == op
    ]


def _merged(bars: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, finish in bars:
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], finish)
        else:
            out.append([start, finish])
    return [(a, b) for a, b in out]


def _check(machine: Machine, program: Program) -> None:
    trace = list(simulate(machine, program, trace=True).trace or ())
    timing = engine.time_program(machine, program, record=True)
    spans = busy_spans(program, timing.starts, timing.finishes)
    firsts = first_instructions(program, timing.starts, timing.finishes, 200)
    for op, found, first in zip(ROWS, spans, firsts):
        bars = _bars(trace, program, op)
        assert [tuple(map(int, span)) for span in found] == _merged(bars), OPCODE_NAMES[op]
        assert [tuple(map(int, bar)) for bar in first] == [bar for bar in bars if bar[0] < 200]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_spans_of_random_programs(case) -> None:
    params, _dram, program = case
    _check(Machine(**params), Program.from_tuples(program))


def test_spans_of_generated_programs() -> None:
    shape, machine = Shape(96, 64, 80), Machine(slots=40)
    for program in (
        blocked(shape, machine, 2, 4, 2),
        engine.General(shape, machine, GeneralParams(bi=3, bj=4)).program(),
    ):
        _check(machine, program)
    # a schedule that keeps the matrix unit busy draws it as a few spans
    machine = Machine(slots=64)
    program = engine.General(shape, machine, default_params(shape, machine)).program()
    timing = engine.time_program(machine, program, record=True)
    products = busy_spans(program, timing.starts, timing.finishes)[ROWS.index(MXU)]
    assert len(products) < program.opcode_counts()["mxu"] / 5


def test_a_row_has_at_most_about_most_spans() -> None:
    shape, machine = Shape(96, 64, 80), Machine(slots=16)
    program = blocked(shape, machine, 1, 1, 1)
    timing = engine.time_program(machine, program, record=True)
    every = busy_spans(program, timing.starts, timing.finishes)
    few = busy_spans(program, timing.starts, timing.finishes, most=50)
    for all_spans, merged in zip(every, few):
        assert len(merged) <= 51 < len(all_spans)
        assert merged[0][0] == all_spans[0][0] and merged[-1][1] == all_spans[-1][1]
        busy = sum(int(b - a) for a, b in all_spans)
        assert sum(int(b - a) for a, b in merged) >= busy  # gaps filled, nothing lost
