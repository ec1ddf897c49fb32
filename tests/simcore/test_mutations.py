"""The chapter's mutation check (sim_mutation.py), on OUR simulator: each mutant is a fresh copy
of simcore with one mistake put into its source text, and the chapter's checker must catch it
(a failing check, or a crash, which the checker reports as a failed check).

Each replacement must find its original text exactly once (checks.apply_mutations), so a
refactor of simcore fails here loudly instead of silently testing an unmutated copy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import pytest

# A reduced but still discriminating shape set: partial tiles in every dimension, a single row
# and column, and multi-tile blocks. The timing checks always run the chapter's 64x64x64 set.
QUICK_SHAPES = ((24, 16, 32), (20, 13, 30), (1, 17, 9), (9, 17, 1))


@dataclass(frozen=True)
class Mutant:
    name: str
    edits: dict[str, list[tuple[str, str]]]
    caught_by: tuple[str, ...]  # checks that must fail (the chapter's attribution, where it applies)
    extra: bool = field(default=False)  # one of this project's, beyond the chapter's eleven


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "a write does not wait for the earlier reads of its slot (write-after-read dropped)",
        {"ga1.timing": [
            # the load's wait for the slot's readers
            ("            start = dma_free\n            r = last_read[s0]\n            if r > start:\n                start = r\n",
             "            start = dma_free\n"),
            # the vector unit's
            ("            if last_read[s0] > start:\n                start = last_read[s0]\n", ""),
        ]},
        ("hazards",),
    ),
    Mutant(
        "an instruction waits only for its first source slot",
        {"ga1.timing": [
            ("            r = ready[s2]\n            if r > start:\n                start = r\n", ""),
            ("            for s in reads:\n                if ready[s] > start:",
             "            for s in reads[:1]:\n                if ready[s] > start:"),
        ]},
        ("hazards",),
    ),
    Mutant(
        "a DMA transfer has no setup cost",
        {"ga1.timing": [("dma_cycles = machine.dma_cycles\n", "dma_cycles = machine.dma_cycles - machine.dma_setup\n")]},
        ("hand_timed_84", "dma_bound_4x4"),
    ),
    Mutant(
        "chained accumulating products wait for the fill as well",
        {"ga1.timing": [("            ready[s0] = finish + fill\n            acc_ready[s0] = finish\n",
                     "            ready[s0] = finish + fill\n            acc_ready[s0] = finish + fill\n")]},
        ("hand_timed_84",),
    ),
    Mutant(
        "the product's fill time is zero",
        # In the timing rule and in the trace alike, as the chapter's mutant (its replay sees 0 too).
        {"ga1.timing": [("fill = machine.mxu_fill\n", "fill = 0\n")],
         "ga1.simulate": [("fill = machine.mxu_fill\n", "fill = 0\n")]},
        ("hand_timed_84",),
    ),
    Mutant(
        "each store is counted as two tile transfers",
        {"ga1.timing": [("stores += 1\n", "stores += 2\n")]},
        ("traffic",),
    ),
    Mutant(
        "a tile that sticks out of the matrix wraps around instead of being padded with zeros",
        {"ga1.functional": [(
            "            tile = np.zeros((T, T))\n"
            "            block = matrix[x * T:(x + 1) * T, y * T:(y + 1) * T]  # the part inside the tensor\n"
            "            tile[: block.shape[0], : block.shape[1]] = block\n",
            "            rows = np.arange(x * T, (x + 1) * T) % matrix.shape[0]\n"
            "            cols = np.arange(y * T, (y + 1) * T) % matrix.shape[1]\n"
            "            tile = matrix[np.ix_(rows, cols)]\n",
        )]},
        ("results",),
    ),
    Mutant(
        "a store writes the padding too (past the edge)",
        # numpy cannot write past the edge of an array: the broadcast raises, as the chapter's
        # list assignment did ("the checker did not finish"), which fails the checks.
        {"ga1.functional": [("            block[...] = spad[s0][: block.shape[0], : block.shape[1]]\n",
                         "            block[...] = spad[s0]\n")]},
        ("results",),
    ),
    Mutant(
        "the matrix unit multiplies with A transposed",
        {"ga1.functional": [("spad[s0] = spad[s0] + spad[s1] @ spad[s2]", "spad[s0] = spad[s0] + spad[s1].T @ spad[s2]")]},
        ("results",),
    ),
    Mutant(
        "all engines run in lock step (an instruction waits for every engine to be free)",
        {"ga1.timing": [
            ("            start = mxu_free\n", "            start = max(dma_free, mxu_free, vpu_free)\n"),
            ("            start = dma_free\n            r = last_read[s0]\n",
             "            start = max(dma_free, mxu_free, vpu_free)\n            r = last_read[s0]\n"),
            ("            start = dma_free\n            r = ready[s0]\n",
             "            start = max(dma_free, mxu_free, vpu_free)\n            r = ready[s0]\n"),
            ("            start = vpu_free\n", "            start = max(dma_free, mxu_free, vpu_free)\n"),
        ]},
        ("dma_bound_4x4",),
    ),
    Mutant(
        "a load does not wait for the slot to become free (no write-after-read, no write-after-write)",
        {"ga1.timing": [(
            "            start = dma_free\n            r = last_read[s0]\n            if r > start:\n                start = r\n"
            "            r = ready[s0]\n            if r > start:\n                start = r\n",
            "            start = dma_free\n",
        )]},
        ("hazards",),
    ),
    # ---- this project's, where the chapter's eleven leave a gap
    Mutant(
        "the hazard replay ignores the fill (a product read right at its finish passes)",
        {"ga1.hazards": [("earliest = h.written_at if chained else h.written_at + h.written_fill",
                      "earliest = h.written_at")]},
        ("replay_detects_planted",), extra=True,
    ),
    Mutant(
        "double-buffered blocked schedules multiply the buffer being loaded (k + 1's)",
        {"ga1.schedules": [("            base = operand_base(k)\n            for x in range(len(rows)):",
                        "            base = operand_base(k + 1)\n            for x in range(len(rows)):")]},
        ("results",), extra=True,
    ),
    Mutant(
        "a product does not wait for earlier readers of its accumulator (a store still reading it)",
        {"ga1.timing": [("            r = last_read[s0]\n            if r > start:\n                start = r\n"
                     "            finish = start + mxu_cycles\n",
                     "            finish = start + mxu_cycles\n")]},
        ("hazards", "hazard_programs"), extra=True,
    ),
    Mutant(
        "exp runs at the vector lanes' rate, not the special-function path's",
        {"ga1.timing": [("math.ceil(machine.tile_words / machine.sfu_lanes) + 1", "math.ceil(machine.tile_words / machine.vpu_lanes) + 1")]},
        ("vector_program",), extra=True,
    ),
    Mutant(
        "a row max reduces the columns instead of the rows",
        {"ga1.functional": [("    best = source[:, 0].copy()\n    for j in range(1, source.shape[1]):\n"
                         "        best = np.where(source[:, j] > best, source[:, j], best)\n",
                         "    best = source[0, :].copy()\n    for j in range(1, source.shape[0]):\n"
                         "        best = np.where(source[j, :] > best, source[j, :], best)\n")]},
        ("vector_program",), extra=True,
    ),
)


def test_the_chapters_eleven_are_all_here() -> None:
    assert sum(not m.extra for m in MUTANTS) == 11
    assert sum(m.extra for m in MUTANTS) >= 2


def test_baseline_copy_passes(chapter_checks: ModuleType) -> None:
    # Nothing broken: the checker passes (so a failure below is the mutation's doing).
    report = chapter_checks.run_chapter_checks(chapter_checks.load_simcore_copy(), shapes=QUICK_SHAPES)
    assert all(report.values()), report.summary()


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.name for m in MUTANTS])
def test_mutant_is_caught(chapter_checks: ModuleType, mutant: Mutant) -> None:
    copy = chapter_checks.load_simcore_copy(mutant.edits)
    report = chapter_checks.run_chapter_checks(copy, shapes=QUICK_SHAPES)
    failed = report.failed
    assert failed, f"NOT CAUGHT: {mutant.name}"
    missed = [name for name in mutant.caught_by if name not in failed]
    assert not missed, f"{mutant.name}: expected {missed} to fail, failed: {report.summary()}"


def test_a_missing_mutation_target_fails_loudly(chapter_checks: ModuleType) -> None:
    with pytest.raises(chapter_checks.MutationError, match="found 0 times"):
        chapter_checks.load_simcore_copy({"ga1.timing": [("this text is not in timing.py", "")]})
    with pytest.raises(chapter_checks.MutationError, match="no such simcore module"):
        chapter_checks.load_simcore_copy({"timming": [("x", "y")]})
