"""The two instructions beyond the chapter: sfu (rsqrt, erf on the exp path) and transpose.

Their cost rules, their arithmetic, their text form, and the compiled engine held to the
reference on random programs that use them. The chapter's instructions keep their costs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.ga1 import engine
from simcore.ga1.asm import from_text, to_text
from simcore.ga1.functional import execute
from simcore.ga1.hazards import replay
from simcore.ga1.machine import Machine
from simcore.ga1.program import OPCODES, Program, ProgramError
from simcore.ga1.simulator import simulate
from simcore.ga1.timing import run_timing, vector_duration
from tests.helpers.random_programs import EXTENSION_KINDS, KINDS, cases

# The chapter's costs on its machine (ga.py): zero and masklen 1, a lane pass of 64 / 16 words
# plus 1, exp 64 / 4 + 1, rowred a lane pass plus 3.
CHAPTER_CYCLES = {
    "zero": 1, "vop": 5, "exp": 17, "vscale": 5, "rowred": 7, "bcastcol": 5, "masklen": 1,
}  # fmt: skip


def test_the_chapter_costs_are_unchanged_and_the_extensions_cost_as_stated() -> None:
    machine = Machine()
    for name, cycles in CHAPTER_CYCLES.items():
        assert vector_duration(machine, OPCODES[name]) == cycles, name
    assert vector_duration(machine, OPCODES["sfu"]) == vector_duration(machine, OPCODES["exp"])
    assert vector_duration(machine, OPCODES["transpose"]) == vector_duration(
        machine, OPCODES["vop"]
    )
    narrow = Machine(sfu_lanes=2, vpu_lanes=8)  # the rules follow the lanes
    assert vector_duration(narrow, OPCODES["sfu"]) == 33
    assert vector_duration(narrow, OPCODES["transpose"]) == 9


def _run(machine: Machine, program: list[tuple[object, ...]], x: np.ndarray) -> np.ndarray:
    dram = {"A": x, "C": np.zeros_like(x)}
    return execute(machine, Program.from_tuples(program), dram)["C"]


def test_rsqrt_follows_ieee_and_erf_follows_math_erf() -> None:
    machine = Machine(T=2, slots=2)
    x = np.array([[4.0, 0.0], [-0.0, -1.0]])
    got = _run(
        machine, [("load", 0, "A", 0, 0), ("sfu", "rsqrt", 1, 0), ("store", 1, "C", 0, 0)], x
    )
    assert got[0, 0] == 0.5 and got[0, 1] == math.inf and got[1, 0] == -math.inf
    assert math.isnan(got[1, 1])
    x = np.array([[0.3, -2.0], [math.inf, -math.inf]])
    got = _run(machine, [("load", 0, "A", 0, 0), ("sfu", "erf", 0, 0), ("store", 0, "C", 0, 0)], x)
    assert got.tolist() == [[math.erf(0.3), math.erf(-2.0)], [1.0, -1.0]]


def test_transpose_transposes_a_tile_in_place_or_into_another_slot() -> None:
    machine = Machine(T=3, slots=2)
    x = np.arange(9.0).reshape(3, 3)
    for dst in (0, 1):
        program = [("load", 0, "A", 0, 0), ("transpose", dst, 0), ("store", dst, "C", 0, 0)]
        assert np.array_equal(_run(machine, program, x), x.T)


def test_the_text_form_carries_the_extensions() -> None:
    program = Program.from_tuples(
        [("load", 0, "A", 0, 0), ("sfu", "erf", 1, 0), ("transpose", 2, 1), ("sfu", "rsqrt", 2, 2)]
    )
    text = to_text(program)
    assert "sfu erf 1 0\n" in text and "transpose 2 1\n" in text
    assert np.array_equal(from_text(text).code, program.code)
    with pytest.raises(ProgramError, match="unknown special function 'tanh'"):
        from_text("sfu tanh 1 0")


def test_a_reader_of_the_slot_waits_for_the_sfu() -> None:
    machine = Machine()
    program = Program.from_tuples(
        [
            ("load", 0, "A", 0, 0),
            ("sfu", "rsqrt", 1, 0),
            ("transpose", 2, 1),
            ("store", 2, "A", 0, 0),
        ]
    )
    timing = run_timing(machine, program, record=True)
    assert timing.starts is not None and timing.finishes is not None
    assert timing.starts.tolist() == [0, 20, 37, 42]  # load 20, sfu 17, transpose 5, store
    assert timing.cycles == 62
    trace = simulate(machine, program, trace=True).trace
    assert trace is not None and not replay(trace)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(kinds=KINDS + EXTENSION_KINDS), seed=st.integers(0, 2**32 - 1))
def test_the_engine_equals_the_reference_on_programs_with_the_extensions(case, seed) -> None:
    params, dram, program = case
    machine, compact = Machine(**params), Program.from_tuples(program)
    ours, reference = (
        engine.time_program(machine, compact, True),
        run_timing(machine, compact, True),
    )
    assert (ours.cycles, ours.busy, ours.loads, ours.stores) == (
        reference.cycles, reference.busy, reference.loads, reference.stores,
    )  # fmt: skip
    assert np.array_equal(ours.starts, reference.starts)
    trace = list(simulate(machine, compact, trace=True).trace or ())
    assert engine.replay(trace) == replay(trace)
    got, want = engine.execute(machine, compact, dram), execute(machine, compact, dram)
    for name in want:
        assert np.array_equal(got[name], want[name], equal_nan=True)


def test_the_replay_sees_an_extension_that_starts_too_early() -> None:
    machine = Machine()
    program = Program.from_tuples(
        [("load", 0, "A", 0, 0), ("sfu", "erf", 1, 0), ("transpose", 0, 1), ("store", 0, "A", 0, 0)]
    )
    trace = list(simulate(machine, program, trace=True).trace or ())
    assert not replay(trace)
    early = [list(record) for record in trace]
    early[1][2] = 10  # the sfu reads slot 0 before the load (finishing at 20) has written it
    early[2][2] = 30  # the transpose reads slot 1 before the sfu (finishing at 37) has
    found = replay([tuple(record) for record in early])  # and overwrites the sfu's source
    assert [(h.index, h.kind, h.slot) for h in found] == [
        (1, "read too early", 0), (2, "read too early", 1), (2, "write too early", 0),
    ]  # fmt: skip
    assert engine.replay([tuple(record) for record in early]) == found
