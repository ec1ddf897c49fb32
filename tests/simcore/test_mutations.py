"""The chapter's mutation check (sim_mutation.py), on OUR simulator: each mutant is a fresh copy
of simcore with one mistake put into its syntax tree, and the chapter's checker must catch it
(a failing check, or a crash, which the checker reports as a failed check).

Every mutant is put into both implementations: the Python reference (`reference`) and the
compiled engine the tuner runs (`engine`, checked through engine_namespace: the engine's
simulator, replay and chapter generators, and each schedule timed and verified streamed as the
tuner does). A copy's engine runs its (mutated) kernels as Python; one test compiles a mutant with
numba as well, to show the compiled kernels catch it the same way.

A mistake is a Rewrite (tests/helpers/ast_mutation.py): a function named in a module, and an
expression or statement pattern inside it, matched as a syntax tree. A rewrite whose target is
gone fails loudly (MutationError) instead of testing an unmutated copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.ga1_chapter_checker import CheckReport, run_chapter_checks
from tests.helpers.simcore_copies import engine_namespace, load_simcore_copy

# A reduced but still discriminating shape set: partial tiles in every dimension, a single row
# and column, and multi-tile blocks. The timing checks always run the chapter's 64x64x64 set.
QUICK_SHAPES = ((24, 16, 32), (20, 13, 30), (1, 17, 9), (9, 17, 1))

# The functions mutated most: the reference's timing rule; the engine's for loads, stores,
# products and zeros (_hot_loop), for the other vector-unit instructions (_vector), and where it
# reads the machine's cycle counts (_clock_at_zero); the reference's arithmetic.
timing = partial(Rewrite, "ga1.timing", "run_timing")
hot_loop = partial(Rewrite, "ga1.engine.timing", "_hot_loop")
vector = partial(Rewrite, "ga1.engine.timing", "_vector")
clock_at_zero = partial(Rewrite, "ga1.engine.timing", "_clock_at_zero")
functional = partial(Rewrite, "ga1.functional", "execute")
# the reference's vector-unit instructions: the else arm after its loads, stores and products
vector_arm = partial(timing, branch="op == STORE", arm="else")
LOCK_STEP = "start = max($start, dma_free, mxu_free, vpu_free)"


@dataclass(frozen=True)
class Mutant:
    name: str
    reference: tuple[Rewrite, ...]
    caught_by: tuple[str, ...]  # checks that must fail (the chapter's, where it applies)
    extra: bool = False  # one of this project's, beyond the chapter's eleven
    engine: tuple[Rewrite, ...] | None = None  # the mistake in the engine (None: shared code)

    def rewrites(self, implementation: str) -> tuple[Rewrite, ...]:
        if implementation == "reference" or self.engine is None:
            return self.reference
        return self.engine


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "a write does not wait for the earlier reads of its slot (write-after-read dropped)",
        (
            timing("last_read[s0]", "0", branch="op == LOAD"),
            vector_arm("last_read[s0]", "0"),
        ),
        ("hazards",),
        engine=(
            hot_loop("slot[c + BY_MXU]", "0", branch="op == LOAD"),
            hot_loop("slot[c + BY_OTHERS]", "0", branch="op == LOAD"),
            hot_loop("slot[c + BY_MXU]", "0", branch="op == ZERO"),
            hot_loop("slot[c + BY_OTHERS]", "0", branch="op == ZERO"),
            vector("clock[c + BY_MXU]", "0"),
            vector("clock[c + BY_OTHERS]", "0"),
        ),
    ),
    Mutant(
        "an instruction waits only for its first source slot",
        (
            timing("ready[s2]", "0", branch="op == MXU"),
            vector_arm("ready[s]", "(ready[s] if s == reads[0] else 0)"),
        ),
        ("hazards",),
        engine=(
            hot_loop("slot[b + READY]", "0", branch="op == MXU"),
            vector("clock[b + READY]", "0"),
        ),
    ),
    Mutant(
        "a DMA transfer has no setup cost",
        (timing("machine.dma_cycles", "machine.dma_cycles - machine.dma_setup"),),
        ("hand_timed_84", "dma_bound_4x4"),
        engine=(clock_at_zero("machine.dma_cycles", "machine.dma_cycles - machine.dma_setup"),),
    ),
    Mutant(
        "chained accumulating products wait for the fill as well",
        (timing("acc_ready[s0] = finish", "acc_ready[s0] = finish + fill", branch="op == MXU"),),
        ("hand_timed_84",),
        engine=(
            hot_loop(
                "slot[c + ACC_READY] = finish",
                "slot[c + ACC_READY] = finish + fill",
                branch="op == MXU",
            ),
        ),
    ),
    Mutant(
        "the product's fill time is zero",
        # In the timing rule and in the trace alike, as the chapter's (its replay sees 0 too).
        (
            timing("machine.mxu_fill", "0"),
            Rewrite("ga1.simulator", "trace_records", "machine.mxu_fill", "0"),
        ),
        ("hand_timed_84",),
        engine=(
            clock_at_zero("machine.mxu_fill", "0"),
            Rewrite("ga1.simulator", "trace_records", "machine.mxu_fill", "0"),
        ),
    ),
    Mutant(
        "each store is counted as two tile transfers",
        (timing("stores += 1", "stores += 2"),),
        ("traffic",),
        engine=(hot_loop("stores += 1", "stores += 2"),),
    ),
    Mutant(
        "a tile that sticks out of the matrix wraps around instead of being padded with zeros",
        (
            functional(
                "matrix[$x0:$x1, $y0:$y1]",
                "matrix[np.ix_(np.arange($x0, $x1) % matrix.shape[0],"
                " np.arange($y0, $y1) % matrix.shape[1])]",
                branch="op == LOAD",
            ),
        ),
        ("results",),
        engine=(
            Rewrite("ga1.engine.functional", "_load", "range(rows)", "range(T)"),
            Rewrite("ga1.engine.functional", "_load", "range(cols)", "range(T)"),
            Rewrite(
                "ga1.engine.functional",
                "_load",
                "matrix[$r, $c]",
                "matrix[$r % matrix.shape[0], $c % matrix.shape[1]]",
            ),
        ),
    ),
    Mutant(
        "a store writes the padding too (past the edge)",
        # numpy cannot write past the edge of an array: the broadcast raises, as the chapter's
        # list assignment did ("the checker did not finish"), which fails the checks.
        (functional("spad[s0][$inside]", "spad[s0]", branch="op == STORE"),),
        ("results",),
        engine=(
            Rewrite("ga1.engine.functional", "_store", "range(rows)", "range(T)"),
            Rewrite("ga1.engine.functional", "_store", "range(cols)", "range(T)"),
        ),
    ),
    Mutant(
        "the matrix unit multiplies with A transposed",
        (functional("spad[s1]", "spad[s1].T", branch="op == MXU"),),
        ("results",),
        engine=(
            Rewrite("ga1.engine.functional", "_product", "spad[a, $r, $q]", "spad[a, $q, $r]"),
        ),
    ),
    Mutant(
        "all engines run in lock step (an instruction waits for every engine to be free)",
        (timing("start = $start", LOCK_STEP),),
        ("dma_bound_4x4",),
        engine=(hot_loop("start = $start", LOCK_STEP),),
    ),
    Mutant(
        "a load does not wait for the slot to become free (no write-after-read, no "
        "write-after-write)",
        (timing("start = $start", "start = dma_free", branch="op == LOAD"),),
        ("hazards",),
        engine=(hot_loop("start = $start", "start = dma_free", branch="op == LOAD"),),
    ),
    # ---- this project's, where the chapter's eleven leave a gap
    Mutant(
        "the hazard replay ignores the fill (a product read right at its finish passes)",
        (Rewrite("ga1.hazards", "replay", "h.written_fill", "0"),),
        ("replay_detects_planted",),
        extra=True,
        engine=(Rewrite("ga1.engine.hazards", "_check", "history[slot, WRITTEN_FILL]", "0"),),
    ),
    Mutant(
        "double-buffered blocked schedules multiply the buffer being loaded (k + 1's)",
        (Rewrite("ga1.schedules", "blocked", "operand_base($k)", "operand_base($k + 1)"),),
        ("results",),
        extra=True,
        engine=(
            Rewrite(
                "ga1.engine.chapter",
                "_block_unit",
                "_operand_base(st, $k)",
                "_operand_base(st, $k + 1)",
            ),
        ),
    ),
    Mutant(
        "a product does not wait for earlier readers of its accumulator (a store still reading it)",
        (timing("last_read[s0]", "0", branch="op == MXU"),),
        ("hazards", "hazard_programs"),
        extra=True,
        engine=(
            hot_loop("slot[c + BY_MXU]", "0", branch="op == MXU"),
            hot_loop("slot[c + BY_OTHERS]", "0", branch="op == MXU"),
        ),
    ),
    Mutant(
        "exp runs at the vector lanes' rate, not the special-function path's",
        (Rewrite("ga1.timing", "vector_duration", "machine.sfu_lanes", "machine.vpu_lanes"),),
        ("vector_program",),
        extra=True,
    ),
    Mutant(
        "a row max reduces the columns instead of the rows",
        (
            Rewrite("ga1.functional", "_row_max", "source[:, $j]", "source[$j, :]"),
            Rewrite("ga1.functional", "_row_max", "source.shape[1]", "source.shape[0]"),
        ),
        ("vector_program",),
        extra=True,
    ),
)


# The engine's own mistakes, in code the reference has no counterpart of.
ENGINE_MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "the streamed replay does not count a product's accumulator as read",
        (),
        ("streamed_replay",),
        extra=True,
        engine=(
            Rewrite(
                "ga1.engine.hazards",
                "_trace_slots",
                "return $reads, $writes",
                "return $reads - 1, $writes",
                branch="op == MXU",
            ),
        ),
    ),
    Mutant(
        "the streamed replay forgets the fill of products",
        (),
        ("streamed_replay",),
        extra=True,
        engine=(Rewrite("ga1.engine.hazards", "replay_rows", "fill", "0"),),
    ),
    Mutant(
        "the timing loses its state between chunks (a chunk's free times are not kept)",
        (),
        ("streamed",),
        extra=True,
        engine=(
            hot_loop("clock[DMA_FREE]", "0"),
            hot_loop("clock[MXU_FREE]", "0"),
            hot_loop("clock[VPU_FREE]", "0"),
        ),
    ),
)
IMPLEMENTATIONS = ("reference", "engine")


def test_the_chapters_eleven_are_all_here() -> None:
    assert sum(not m.extra for m in MUTANTS) == 11
    assert sum(m.extra for m in MUTANTS) >= 2


def _check(
    implementation: str, rewrites: tuple[Rewrite, ...], compiled: bool = False
) -> CheckReport:
    copy = load_simcore_copy(rewrites, compiled=compiled)
    sim = copy if implementation == "reference" else engine_namespace(copy)
    return run_chapter_checks(sim, shapes=QUICK_SHAPES)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_baseline_copy_passes(implementation: str) -> None:
    # Nothing broken: the checker passes (so a failure below is the mutation's doing).
    report = _check(implementation, ())
    assert all(report.values()), report.summary()


CASES = [(m, impl) for m in MUTANTS for impl in IMPLEMENTATIONS] + [
    (m, "engine") for m in ENGINE_MUTANTS
]


@pytest.mark.parametrize(
    "mutant, implementation", CASES, ids=[f"{impl}: {m.name}" for m, impl in CASES]
)
def test_mutant_is_caught(mutant: Mutant, implementation: str) -> None:
    report = _check(implementation, mutant.rewrites(implementation))
    assert report.failed, f"NOT CAUGHT: {mutant.name}"
    missed = [name for name in mutant.caught_by if name not in report.failed]
    assert not missed, f"{mutant.name}: expected {missed} to fail, failed: {report.summary()}"


@pytest.mark.slow  # numba compiles a mutated engine copy, uncached
def test_a_compiled_mutant_is_caught_too() -> None:
    # The copies above run the engine's kernels as Python; here numba compiles the mutated kernels
    # (without its on-disk cache) and the same checks fail as when they run as Python, and no
    # other: the compiled copy itself is sound, so the failure is the mutation's doing.
    mutant = next(m for m in MUTANTS if m.name.startswith("a load does not wait"))
    as_python = _check("engine", mutant.rewrites("engine"))
    compiled = _check("engine", mutant.rewrites("engine"), compiled=True)
    assert "hazards" in compiled.failed and compiled.failed == as_python.failed, compiled.summary()
