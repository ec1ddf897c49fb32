"""Unit tests of simcore's small pieces: machine validation, programs, schedules' errors, shapes,
the timeline picture and the hazard replay."""

from __future__ import annotations

import numpy as np
import pytest

from simcore import (
    Machine,
    MachineError,
    Program,
    ProgramError,
    ScheduleError,
    Shape,
    ShapeError,
    blocked,
    kouter,
    machine_from,
    parse_overrides,
    parse_shape,
    replay,
    simulate,
    timeline,
)
from simcore.ga1.machine import MACHINE_KEYS
from tests.helpers.ga1_chapter_checker import VECTOR_PROGRAM

# ---- Machine


@pytest.mark.parametrize("key", [k for k in MACHINE_KEYS if k not in ("dma_setup", "mxu_fill")])
@pytest.mark.parametrize("value", [0, -3])
def test_machine_rejects_zero_and_negative(key: str, value: int) -> None:
    with pytest.raises(
        MachineError, match=rf"machine parameter {key} must not be zero or negative, got {value}"
    ):
        Machine(**{key: value})


@pytest.mark.parametrize("key", ["dma_setup", "mxu_fill"])
def test_setup_and_fill_may_be_zero_but_not_negative(key: str) -> None:
    assert getattr(Machine(**{key: 0}), key) == 0
    with pytest.raises(
        MachineError, match=rf"machine parameter {key} must not be negative, got -1"
    ):
        Machine(**{key: -1})


@pytest.mark.parametrize("value", [1.5, "8", True, None])
def test_machine_rejects_non_integers(value: object) -> None:
    with pytest.raises(MachineError, match="machine parameter T must be an integer"):
        Machine(T=value)  # type: ignore[arg-type]


def test_dma_cycles_and_peak() -> None:
    m = Machine()
    assert (m.tile_words, m.dma_cycles, m.peak_macs_per_cycle) == (64, 20, 64.0)  # 16 + 64/16
    assert Machine(dma_setup=0).dma_cycles == 4
    assert Machine(dma_words_per_cycle=5).dma_cycles == 16 + 13  # a partial cycle counts whole
    assert Machine(T=4, mxu_cycles=2).peak_macs_per_cycle == 32.0
    assert Machine(slots=64).scratchpad_words == 4096


def test_machine_overrides() -> None:
    assert parse_overrides("slots=64, dma_setup=4") == {"slots": 64, "dma_setup": 4}
    assert machine_from({"dma_setup": 4}, slots=64) == Machine(slots=64, dma_setup=4)
    with pytest.raises(MachineError, match="unknown machine parameter 'bogus'"):
        parse_overrides("bogus=1")
    with pytest.raises(MachineError, match="needs an integer"):
        parse_overrides("T=eight")
    with pytest.raises(MachineError, match="is not KEY=VALUE"):
        parse_overrides("T")


# ---- Program

EVERY_KIND = [
    ("load", 0, "A", 1, 2),
    ("store", 3, "C", 0, 0),
    ("zero", 1),
    ("mxu", 2, 0, 1),
    ("vop", "add", 3, 1, 2),
    ("vop", "relu", 3, 1, None),
    ("vop", "neg", 3, 1, 2),
    ("exp", 1, 0),
    ("vscale", 2, 1, 0.25),
    ("rowred", "max", 1, 2),
    ("rowred", "sum", 1, 2),
    ("bcastcol", 0, 1),
    ("masklen", 2, 3, 5),
    ("load", 1, "Q", 0, 0),
]


def test_program_round_trip() -> None:
    program = Program.from_tuples(EVERY_KIND)
    assert program.to_tuples() == EVERY_KIND
    assert program.tensors == ("A", "B", "C", "Q")
    assert len(program) == len(EVERY_KIND)
    assert program.opcode_counts()["vop"] == 3 and program.max_slot() == 3
    assert Program.from_tuples(program.to_tuples()).code.tolist() == program.code.tolist()


def test_program_is_immutable() -> None:
    program = Program.from_tuples(EVERY_KIND)
    with pytest.raises(ValueError):
        program.code[0, 0] = 1


@pytest.mark.parametrize(
    "bad",
    [
        ("jump", 0),
        (),
        ("load", 0, "A", 0),
        ("vop", "pow", 0, 1, 2),
        ("vop", "add", 0, 1, None),
        ("rowred", "min", 0, 1),
        ("mxu", 0, 1.5, 2),
        ("zero", True),
    ],
)
def test_malformed_instructions(bad: tuple[object, ...]) -> None:
    with pytest.raises(ProgramError):
        Program.from_tuples([bad])


@pytest.mark.parametrize(
    "ins", [("load", 4, "A", 0, 0), ("mxu", 0, 1, 4), ("vop", "add", 0, -1, 1), ("zero", 99)]
)
def test_slot_out_of_range(ins: tuple[object, ...]) -> None:
    with pytest.raises(ProgramError, match="slot"):
        simulate(Machine(slots=4), Program.from_tuples([ins]))


def test_negative_tile_coordinate_rejected() -> None:
    with pytest.raises(ProgramError, match="negative tile coordinate"):
        simulate(Machine(), Program.from_tuples([("load", 0, "A", -1, 0)]))


def test_missing_tensor_in_functional_mode() -> None:
    with pytest.raises(ProgramError, match="'B'"):
        simulate(
            Machine(), Program.from_tuples([("load", 0, "B", 0, 0)]), inputs={"A": np.zeros((8, 8))}
        )


def test_empty_program() -> None:
    result = simulate(Machine(), Program.from_tuples([]), trace=True)
    assert (result.cycles, result.tiles_moved, result.instructions, result.trace) == (0, 0, 0, ())


# ---- schedules


def test_schedule_error_names_the_slot_need() -> None:
    with pytest.raises(ScheduleError, match="needs 20 slots, the scratchpad has 16"):
        blocked(Shape(64, 64, 64), Machine(slots=16), 2, 4, 2)
    with pytest.raises(ScheduleError, match="needs 6 slots, the scratchpad has 5"):
        kouter(Shape(8, 8, 8), Machine(slots=5), 2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"bi": 0, "bj": 1}, "bi must be a positive integer"),
        ({"bi": 1, "bj": 1, "buffers": 0}, "buffers must be a positive integer"),
        ({"bi": 1, "bj": 1, "order": "diagonal"}, "unknown block order"),
    ],
)
def test_schedule_parameter_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        blocked(Shape(8, 8, 8), Machine(), **kwargs)  # type: ignore[arg-type]


# ---- shapes


def test_parse_shape() -> None:
    assert parse_shape("128x128x128") == Shape(128, 128, 128)
    assert parse_shape(" 20 X 13 x 30 ") == Shape(20, 13, 30)
    assert str(Shape(1, 17, 9)) == "1x17x9" and Shape(20, 13, 30).tiles(8) == (3, 2, 4)


@pytest.mark.parametrize(
    "text, message",
    [
        ("128x128", "malformed shape"),
        ("axbxc", "malformed shape"),
        ("", "malformed shape"),
        ("0x8x8", "dimension M must be positive, got 0"),
        ("8x-1x8", "dimension K must be positive, got -1"),
        ("8x8x0", "dimension N must be positive"),
    ],
)
def test_parse_shape_errors(text: str, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        parse_shape(text)


# ---- timeline


def test_timeline_format() -> None:
    program = Program.from_tuples(
        [("load", 0, "A", 0, 0), ("load", 1, "B", 0, 0), ("mxu", 2, 0, 1), ("store", 2, "C", 0, 0)]
    )
    result = simulate(Machine(), program, trace=True)  # loads 0-40, product 40-48, store 56-76
    assert result.cycles == 76
    assert timeline(result, per_char=4) == (
        "  dma " + "D" * 10 + "." * 4 + "D" * 5 + "\n  mxu " + "." * 10 + "MM" + "." * 7
    )
    assert timeline(result, per_char=4, engines=("vpu",)) == "  vpu " + "." * 19
    cut = timeline(result, per_char=1, width=10).splitlines()
    assert cut[0] == "  dma " + "D" * 10 + " ..." and cut[1] == "  mxu " + "." * 10 + " ..."


def test_timeline_needs_a_trace_and_a_positive_scale() -> None:
    result = simulate(Machine(), Program.from_tuples([("zero", 0)]))
    with pytest.raises(ValueError, match="trace=True"):
        timeline(result)
    traced = simulate(Machine(), Program.from_tuples([("zero", 0)]), trace=True)
    with pytest.raises(ValueError, match="per_char"):
        timeline(traced, per_char=0)


# ---- hazard replay


def test_replay_accepts_a_real_trace() -> None:
    program = Program.from_tuples(
        [
            ("zero", 2),
            ("load", 0, "A", 0, 0),
            ("load", 1, "B", 0, 0),
            ("mxu", 2, 0, 1),
            ("mxu", 2, 0, 1),
            ("store", 2, "C", 0, 0),
        ]
    )
    result = simulate(Machine(), program, trace=True)
    assert result.cycles == 84 and replay(result.trace) == []
    assert result.trace[3] == (3, "mxu", 40, 48, (0, 1, 2), (2,), 8)


def test_replay_detects_a_hand_made_bad_trace() -> None:
    trace = [
        (0, "dma", 0, 20, (), (0,), 0),  # load slot 0
        (1, "mxu", 20, 28, (0, 0, 1), (1,), 8),  # product into 1, readable from 36
        (2, "dma", 30, 50, (1,), (), 0),  # store reads slot 1 at 30: too early
        (3, "dma", 40, 60, (), (0,), 0),  # load overwrites 0 ...
        (4, "vpu", 45, 50, (0,), (2,), 0),  # ... read here before that load finished
        (5, "dma", 55, 75, (), (2,), 0),  # overwrites 2 while... (fine: read ended 50)
        (6, "vpu", 50, 55, (0,), (3,), 0),  # reads 0 before the load at 60: too early
        (7, "dma", 20, 40, (), (3,), 0),  # overwrites 3 while 6 writes... write after write
    ]
    found = replay(trace)
    kinds = {(h.index, h.kind, h.slot) for h in found}
    assert (2, "read too early", 1) in kinds
    assert (4, "read too early", 0) in kinds
    assert (6, "read too early", 0) in kinds
    assert all(h.start < h.earliest for h in found)
    assert "instruction 2: read too early on slot 1 (starts 30, allowed from 36)" in [
        str(h) for h in found
    ]


def test_replay_write_after_read_and_chained_products() -> None:
    assert [
        (h.index, h.kind)
        for h in replay(
            [
                (0, "dma", 0, 20, (5,), (), 0),
                (1, "dma", 10, 30, (), (5,), 0),
            ]
        )
    ] == [(1, "write too early")]
    # Accumulating into an accumulation needs no fill; a product read by a store does.
    chained = [(0, "mxu", 0, 8, (0, 1, 2), (2,), 8), (1, "mxu", 8, 16, (0, 1, 2), (2,), 8)]
    assert replay(chained) == []
    assert replay(chained + [(2, "dma", 23, 43, (2,), (), 0)])[0].earliest == 24


def test_analytic_estimate_ranks_the_chapter_sweep_like_the_simulator() -> None:
    """The tile-model estimate used to rank grid points agrees with the simulator on the
    chapter's double-buffered sweep: the same best schedule, and within 12% on each."""
    from simcore import Machine, Shape, blocked, simulate
    from simcore.ga1.analytic import output_stationary_estimate

    shape, machine = Shape(128, 128, 128), Machine(slots=64)
    blocks = [(1, 1), (2, 2), (2, 4), (2, 8), (4, 4), (4, 8)]
    simulated = {
        b: simulate(machine, blocked(shape, machine, *b, buffers=2)).cycles for b in blocks
    }
    estimated = {b: output_stationary_estimate(shape, machine, *b) for b in blocks}
    assert min(simulated, key=simulated.get) == min(estimated, key=estimated.get) == (4, 8)
    for b in blocks:
        assert abs(estimated[b] / simulated[b] - 1) < 0.12, (b, estimated[b], simulated[b])


def test_tile_model_live_bytes_equal_the_blocked_slot_need() -> None:
    """The analytic tile model's live bytes (in tiles) are exactly the blocked schedule's slot
    arithmetic for one and two buffers, so its fits(capacity) rules out the same points."""
    from simcore.ga1.schedules import blocked_slots
    from simcore.tile_model import MatmulTile

    T = 8
    for bi in range(1, 7):
        for bj in range(1, 7):
            for buffers in (1, 2):
                model = MatmulTile(
                    m=128,
                    n=128,
                    k=128,
                    tile_m=bi * T,
                    tile_n=bj * T,
                    tile_k=T,
                    operand_bytes=1,
                    accumulator_bytes=1,
                    double_buffered=buffers == 2,
                )
                assert model.live_bytes == blocked_slots(bi, bj, buffers) * T * T
                for slots in (16, 32, 64):
                    assert model.fits(slots * T * T) == (blocked_slots(bi, bj, buffers) <= slots)


def test_timeline_from_arrays_is_the_trace_timeline() -> None:
    # show draws from the starts and finishes (no trace); the picture is the trace's.
    from simcore.ga1.engine import time_program
    from simcore.ga1.timelines import draw, engine_rows, engine_rows_of_arrays
    from simcore.ga1.timing import engines_of

    machine = Machine(slots=40)
    for program in (
        blocked(Shape(40, 24, 56), machine, 2, 3, 2),
        kouter(Shape(24, 24, 24), machine, 2),
        Program.from_tuples(VECTOR_PROGRAM),
    ):
        result = simulate(machine, program, trace=True)
        timing = time_program(machine, program, record=True)
        for per_char in (1, 3, 8, 50):
            engines = ("dma", "mxu", "vpu")
            expected = engine_rows(result.trace, result.cycles, per_char, engines)
            got = engine_rows_of_arrays(
                engines_of(program.code),
                timing.starts,
                timing.finishes,
                result.cycles,
                per_char,
                engines,
            )
            assert got == expected
            assert draw(
                engine_rows_of_arrays(
                    engines_of(program.code),
                    timing.starts,
                    timing.finishes,
                    result.cycles,
                    per_char,
                    engines,
                    most=21,
                ),
                20,
            ) == draw(expected, 20)
