"""The chapter's checker (check_ga.py), as a function over any simulator that looks like simcore.

`run_chapter_checks(sim)` takes a namespace `sim` with simcore's public names (Machine, Shape,
Program, simulate, matmul_inputs, replay, blocked, kouter, simple_bounds, expected_blocked_traffic,
expected_kouter_traffic, predicted_double_buffered_cycles) and returns {check name: passed}. The
`simcore` package itself is such a namespace, and so is a mutated copy of it
(tests/helpers/simcore_copies.py), for the mutation tests.

A check whose runs raise counts as failed (the chapter: "the checker did not finish"); the
reason is kept in `CheckReport.details`.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, Sequence

import numpy as np

# The chapter's check set: shapes (some not multiples of the tile, a single row and column), the
# five schedules, and both bufferings: 7 x 5 x 2 = 70 runs on a 64-slot machine.
CHAPTER_SHAPES: tuple[tuple[int, int, int], ...] = (
    (8, 8, 8),
    (24, 16, 32),
    (20, 13, 30),
    (1, 17, 9),
    (9, 17, 1),
    (40, 40, 40),
    (64, 64, 64),
)
# (name, bi, bj); bi None is the k-outermost order.
CHAPTER_SCHEDULES: tuple[tuple[str, int | None, int | None], ...] = (
    ("blocked 1x1", 1, 1),
    ("blocked 2x2", 2, 2),
    ("blocked 1x4", 1, 4),
    ("blocked 3x2", 3, 2),
    ("k outermost", None, None),
)
SIX_INSTRUCTIONS: tuple[tuple[object, ...], ...] = (
    ("zero", 2),
    ("load", 0, "A", 0, 0),
    ("load", 1, "B", 0, 0),
    ("mxu", 2, 0, 1),
    ("mxu", 2, 0, 1),
    ("store", 2, "C", 0, 0),
)

# Checks of the chapter, in its order, then this project's additions (the last three).
CHAPTER_CHECKS: tuple[str, ...] = (
    "results",
    "traffic",
    "hand_timed_84",
    "dma_bound_4x4",
    "bounds",
    "reuse_fewer_tiles",
    "double_buffering_helps",
    "model_within_12pct",
    "hazards",
)
EXTRA_CHECKS: tuple[str, ...] = ("replay_detects_planted", "hazard_programs", "vector_program")
ALL_CHECKS: tuple[str, ...] = CHAPTER_CHECKS + EXTRA_CHECKS
ENGINE_CHECKS: tuple[str, ...] = (
    "streamed",
    "streamed_replay",
)  # namespaces with the compiled engine (engine_namespace)

# Small programs that stress the hazard rules the matmul schedules rarely exercise: a product
# accumulating into a slot a store is still reading, a product reading its own accumulator
# (c == a), vector ops overwriting a slot under a pending read, and the fill before non-chained
# readers. Their traces must replay clean.
HAZARD_PROGRAMS: tuple[tuple[tuple[object, ...], ...], ...] = (
    (
        ("load", 0, "A", 0, 0),
        ("load", 1, "B", 0, 0),
        ("zero", 2),
        ("mxu", 2, 0, 1),
        ("store", 2, "C", 0, 0),
        ("mxu", 2, 0, 1),
        ("store", 2, "C", 0, 0),
    ),
    (
        ("load", 0, "A", 0, 0),
        ("load", 1, "B", 0, 0),
        ("zero", 2),
        ("mxu", 2, 0, 1),
        ("mxu", 2, 2, 1),
        ("mxu", 1, 2, 2),
        ("vop", "add", 3, 2, 1),
        ("store", 3, "C", 0, 0),
    ),
    (
        ("load", 0, "A", 0, 0),
        ("vop", "relu", 1, 0, None),
        ("load", 0, "B", 0, 0),
        ("vop", "add", 1, 0, 1),
        ("rowred", "sum", 2, 1),
        ("bcastcol", 3, 2),
        ("masklen", 3, 4, 4),
        ("vscale", 1, 3, 2.0),
        ("exp", 0, 1),
        ("store", 1, "C", 0, 0),
        ("store", 0, "C", 0, 1),
    ),
    (
        ("load", 0, "A", 0, 0),
        ("load", 1, "B", 0, 0),
        ("mxu", 2, 0, 1),
        ("load", 0, "A", 0, 1),
        ("load", 1, "B", 1, 0),
        ("mxu", 2, 0, 1),
        ("mxu", 3, 2, 2),
        ("vop", "max", 2, 3, 2),
        ("store", 2, "C", 0, 0),
        ("load", 2, "A", 0, 0),
        ("store", 3, "C", 0, 1),
    ),
)

# One of each vector instruction plus products reading a vector result and a vector op reading
# a product (fill). Worked by hand on the chapter's machine (T=8: a vector pass is 64/16 = 4
# cycles, exp 64/4 = 16): load 0-20, exp 20-37, add 37-42, rowred 42-49, bcastcol 49-54,
# vscale 54-59, masklen 59-60, store 60-80, mxu 60-68 (readable from 76), relu 76-81,
# store 81-101.
VECTOR_PROGRAM: tuple[tuple[object, ...], ...] = (
    ("load", 0, "A", 0, 0),
    ("exp", 1, 0),
    ("vop", "add", 2, 1, 0),
    ("rowred", "max", 3, 2),
    ("bcastcol", 4, 3),
    ("vscale", 5, 4, 0.5),
    ("masklen", 5, 3, 5),
    ("store", 5, "C", 0, 0),
    ("mxu", 6, 5, 0),
    ("vop", "relu", 7, 6, None),
    ("store", 7, "C", 0, 1),
)
VECTOR_PROGRAM_CYCLES = 101


class CheckReport(dict):  # type: ignore[type-arg]
    """{check name: passed}, plus `details` (why a check failed) for messages."""

    def __init__(self) -> None:
        super().__init__()
        self.details: dict[str, str] = {}

    def record(self, name: str, ok: bool, detail: str = "") -> None:
        self[name] = bool(ok)
        if not ok:
            self.details[name] = detail

    @property
    def failed(self) -> list[str]:
        return [name for name, ok in self.items() if not ok]

    def summary(self) -> str:
        return (
            "; ".join(f"{name}: {self.details.get(name, '')}"[:300] for name in self.failed)
            or "all checks pass"
        )


def chapter_matrices(M: int, K: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Small integer matrices (-3..3): their products are exact in float64, so results compare
    with ==."""
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, size=(M, K)), rng.integers(-3, 4, size=(K, N))


def _build(sim: Any, shape: Any, machine: Any, bi: int | None, bj: int | None, buffers: int) -> Any:
    if bi is None:
        return sim.kouter(shape, machine, buffers)
    return sim.blocked(shape, machine, bi, bj, buffers)


def _guard(report: CheckReport, name: str, body: Callable[[], tuple[bool, str]]) -> None:
    """Run one check; an exception fails it (a simulator that crashes is caught)."""
    try:
        ok, detail = body()
    except Exception as exc:  # noqa: BLE001 - any crash of the simulator under test is a failure
        ok, detail = False, f"raised {type(exc).__name__}: {exc}"
    report.record(name, ok, detail)


def run_chapter_checks(
    sim: Any,
    *,
    shapes: Sequence[tuple[int, int, int]] = CHAPTER_SHAPES,
    extras: bool = True,
) -> CheckReport:
    """Every check of check_ga.py (and, with `extras`, this project's three more) on `sim`.

    `shapes` may be reduced for speed (the mutation tests); the timing checks always use the
    chapter's 64x64x64 runs.
    """
    report = CheckReport()
    machine = sim.Machine(slots=64)
    traces: list[tuple[str, Any]] = []  # (label, trace) of every traced run, for the hazard check
    # A namespace with `streamed` (the compiled engine's) also runs each schedule as the tuner does.
    streamed: list[tuple[str, Any, Any]] | None = [] if hasattr(sim, "streamed") else None

    # -- 1/2/4: the shape x schedule x buffering runs: results, traffic, and their traces.
    bad_results: list[object] = []
    bad_traffic: list[object] = []
    crashed: list[str] = []
    count = 0
    for (M, K, N), (name, bi, bj), buffers in itertools.product(shapes, CHAPTER_SCHEDULES, (1, 2)):
        count += 1
        label = f"{M}x{K}x{N} {name} {buffers} buf"
        try:
            shape = sim.Shape(M, K, N)
            a, b = chapter_matrices(M, K, N, seed=M + K + N)
            result = sim.simulate(
                machine,
                _build(sim, shape, machine, bi, bj, buffers),
                inputs=sim.matmul_inputs(a, b),
                trace=True,
            )
            if not np.array_equal(result.outputs["C"], a @ b):
                bad_results.append(label)
            if bi is None:
                expected = tuple(sim.expected_kouter_traffic(shape, machine))
            else:
                expected = tuple(sim.expected_blocked_traffic(shape, machine, bi, bj))
            got = (result.loads, result.stores)
            if got != expected or result.tiles_moved != sum(expected):
                bad_traffic.append((label, got, result.tiles_moved, expected))
            traces.append((label, result.trace))
            if streamed is not None:
                streamed.append((label, result, sim.streamed(shape, machine, bi, bj, buffers)))
        except Exception as exc:  # noqa: BLE001 - a crash fails every check that needed the run
            crashed.append(f"{label}: {type(exc).__name__}: {exc}")
    crash_note = f"{len(crashed)} of {count} runs raised, first: {crashed[0]}" if crashed else ""
    report.record(
        "results", not bad_results and not crashed, crash_note or f"wrong C in {bad_results[:3]}"
    )
    report.record(
        "traffic", not bad_traffic and not crashed, crash_note or f"traffic {bad_traffic[:3]}"
    )
    if streamed is not None:
        # What the tuner runs: the generator timed and verified in one streamed pass each.
        off = [
            (label, v.describe(), t.cycles, r.cycles)
            for label, r, (t, v) in streamed
            if not v.ok or (t.cycles, t.loads, t.stores) != (r.cycles, r.loads, r.stores)
        ]
        report.record(
            "streamed", not off and not crashed, crash_note or f"streamed runs disagree: {off[:2]}"
        )

    # -- 3: timing from first principles.
    def hand_timed() -> tuple[bool, str]:
        ones = np.ones((8, 8))
        result = sim.simulate(
            machine,
            sim.Program.from_tuples(SIX_INSTRUCTIONS),
            inputs={"A": ones, "B": ones, "C": np.zeros((8, 8))},
            trace=True,
        )
        traces.append(("six instructions", result.trace))
        return result.cycles == 84, f"{result.cycles} cycles, expected 84"

    _guard(report, "hand_timed_84", hand_timed)

    shape64 = sim.Shape(64, 64, 64)
    runs: dict[tuple[int, int, int], Any] = {}

    def run64(bi: int, bj: int, buffers: int) -> Any:
        if (bi, bj, buffers) not in runs:
            result = sim.simulate(
                machine, sim.blocked(shape64, machine, bi, bj, buffers), trace=True
            )
            traces.append((f"64x64x64 blocked {bi}x{bj} {buffers} buf", result.trace))
            runs[(bi, bj, buffers)] = result
        return runs[(bi, bj, buffers)]

    timing_set = [(1, 1, 1), (1, 1, 2), (2, 2, 2), (4, 4, 1), (4, 4, 2)]

    def dma_bound() -> tuple[bool, str]:
        r = run64(4, 4, 2)
        want = r.tiles_moved * machine.dma_cycles
        return (
            r.cycles == want,
            f"{r.cycles} cycles vs {r.tiles_moved} tiles x {machine.dma_cycles} = {want}",
        )

    def bounds() -> tuple[bool, str]:
        floor = sim.simple_bounds(shape64, machine)
        results = {key: run64(*key) for key in timing_set}
        ok = all(
            r.cycles >= floor.compute
            and r.cycles >= floor.dma
            and r.cycles >= r.tiles_moved * machine.dma_cycles
            for r in results.values()
        )
        return ok, f"compute {floor.compute}, dma {floor.dma}: " + str(
            {k: v.cycles for k, v in results.items()}
        )

    def reuse() -> tuple[bool, str]:
        # The chapter compares the formula; the simulator's own counts must fall too (and match it).
        blocks = [(1, 1), (1, 2), (2, 2), (2, 4), (4, 4)]
        formula = [sim.expected_blocked_traffic(shape64, machine, bi, bj)[0] for bi, bj in blocks]
        simulated = [run64(bi, bj, 2).loads for bi, bj in blocks]
        falling = all(x > y for x, y in zip(formula, formula[1:]))
        return falling and simulated == formula, f"formula {formula}, simulated {simulated}"

    def double_buffering() -> tuple[bool, str]:
        c = {key: run64(*key).cycles for key in timing_set}
        ok = c[(1, 1, 2)] < c[(1, 1, 1)] and c[(4, 4, 2)] < c[(4, 4, 1)]
        return ok, str(c)

    def model() -> tuple[bool, str]:
        ratios = {}
        for bi, bj in [(1, 1), (1, 8), (2, 2), (2, 4), (4, 4), (2, 8)]:
            predicted = sim.predicted_double_buffered_cycles(shape64, machine, bi, bj)
            ratios[(bi, bj)] = predicted / run64(bi, bj, 2).cycles
        return all(1.0 <= r <= 1.12 for r in ratios.values()), ", ".join(
            f"{k[0]}x{k[1]}: {v:.3f}" for k, v in ratios.items()
        )

    _guard(report, "dma_bound_4x4", dma_bound)
    _guard(report, "bounds", bounds)
    _guard(report, "reuse_fewer_tiles", reuse)
    _guard(report, "double_buffering_helps", double_buffering)
    _guard(report, "model_within_12pct", model)

    # -- extras that close gaps of the chapter's set (see the module docstring of each constant).
    if extras:
        _guard(report, "replay_detects_planted", lambda: _replay_self_test(sim.replay))

        def hazard_programs() -> tuple[bool, str]:
            bad = []
            for number, program in enumerate(HAZARD_PROGRAMS):
                result = sim.simulate(machine, sim.Program.from_tuples(program), trace=True)
                traces.append((f"hazard program {number}", result.trace))
                found = sim.replay(result.trace)
                if found:
                    bad.append((number, [str(h) for h in found[:2]]))
            return not bad, f"hazards in {bad}"

        _guard(report, "hazard_programs", hazard_programs)

        def vector_program() -> tuple[bool, str]:
            a = np.arange(64, dtype=np.float64).reshape(8, 8) / 64.0
            result = sim.simulate(
                machine,
                sim.Program.from_tuples(VECTOR_PROGRAM),
                inputs={"A": a, "C": np.zeros((8, 16))},
                trace=True,
            )
            traces.append(("vector program", result.trace))
            want = _vector_program_numpy(a)
            same = np.allclose(result.outputs["C"], want, rtol=1e-12, atol=0)
            return result.cycles == VECTOR_PROGRAM_CYCLES and same, (
                f"{result.cycles} cycles (expected {VECTOR_PROGRAM_CYCLES}), values match: {same}"
            )

        _guard(report, "vector_program", vector_program)

    if streamed is not None:
        _guard(report, "streamed_replay", lambda: _streamed_replay(sim, machine))

    # -- 4: the independent hazard replay over every trace recorded above.
    def hazards() -> tuple[bool, str]:
        bad = []
        for label, trace in traces:
            found = sim.replay(trace)
            if found:
                bad.append((label, [str(h) for h in found[:2]]))
        return (
            not bad and not crashed,
            crash_note or f"{len(bad)} trace(s) with hazards, first {bad[:2]}",
        )

    _guard(report, "hazards", hazards)
    return report


def _vector_program_numpy(a: np.ndarray) -> np.ndarray:
    """VECTOR_PROGRAM's C, computed directly."""
    e = np.exp(a)
    s = e + a
    r = np.repeat(s.max(axis=1)[:, None], 8, axis=1)
    b = np.repeat(r[:, :1], 8, axis=1) * 0.5
    b[3:, :] = 0.0
    b[:, 5:] = 0.0
    c = np.maximum(b @ a, 0.0)
    return np.hstack([b, c])


def _streamed_replay(sim: Any, machine: Any) -> tuple[bool, str]:
    """The replay a streamed verification runs (over program rows and their times) must find what
    the trace replay finds, on real runs and with starts moved earlier (planted hazards)."""
    rng = np.random.default_rng(11)
    wrong = []
    for number, program in enumerate((SIX_INSTRUCTIONS, *HAZARD_PROGRAMS, VECTOR_PROGRAM)):
        compact = sim.Program.from_tuples(program)
        trace = list(sim.simulate(machine, compact, trace=True).trace)
        for moved in (
            trace,
            [
                (i, e, max(0, s - int(rng.integers(0, 12))), f, r, w, fill)
                for i, e, s, f, r, w, fill in trace
            ],
        ):
            starts = [record[2] for record in moved]
            finishes = [record[3] for record in moved]
            if sim.replay_program(machine, compact, starts, finishes) != sim.replay(moved):
                wrong.append(number)
    return not wrong, f"streamed replay differs on programs {wrong}"


def _replay_self_test(
    replay: Callable[[Iterable[Sequence[object]]], list[Any]],
) -> tuple[bool, str]:
    """The replay must flag planted hazards and accept legal traces: a replay that finds nothing
    would otherwise pass every run."""
    # (index, engine, start, finish, reads, writes, fill)
    product = (0, "mxu", 0, 8, (0, 1, 2), (2,), 8)
    cases: dict[str, tuple[list[tuple[object, ...]], bool]] = {
        "store reads a product before its fill": ([product, (1, "dma", 10, 30, (2,), (), 0)], True),
        "store reads a product after its fill": ([product, (1, "dma", 16, 36, (2,), (), 0)], False),
        "chained product without the fill": (
            [product, (1, "mxu", 8, 16, (0, 1, 2), (2,), 8)],
            False,
        ),
        "chained product before the first ends": (
            [product, (1, "mxu", 4, 12, (0, 1, 2), (2,), 8)],
            True,
        ),
        "product reads an operand before its load ends": (
            [(0, "dma", 0, 20, (), (0,), 0), (1, "mxu", 19, 27, (0, 1, 2), (2,), 8)],
            True,
        ),
        "load overwrites a slot a store is reading": (
            [(0, "dma", 0, 20, (3,), (), 0), (1, "dma", 10, 30, (), (3,), 0)],
            True,
        ),
        "load overwrites a slot after its reads": (
            [(0, "dma", 0, 20, (3,), (), 0), (1, "dma", 20, 40, (), (3,), 0)],
            False,
        ),
        "vector op overwrites a slot a product is reading": (
            [product, (1, "vpu", 5, 10, (4,), (0,), 0)],
            True,
        ),
    }
    wrong = [name for name, (trace, hazardous) in cases.items() if bool(replay(trace)) != hazardous]
    return not wrong, f"replay wrong on: {wrong}"
