"""The chapter's mutation check (sim_mutation.py), on OUR simulator: each mutant is a fresh copy
of simcore with one mistake put into its source text, and the chapter's checker must catch it
(a failing check, or a crash, which the checker reports as a failed check).

Every mutant is put into both implementations: the Python reference (`edits`) and the compiled
engine the tuner runs (`engine_edits`, checked through checks.engine_namespace: the engine's
simulator, replay and chapter generators, and each schedule timed and verified streamed as the
tuner does). A copy's engine runs its (mutated) source as Python; one test compiles a mutant with
numba as well, to show the compiled kernels catch it the same way.

Each replacement must find its original text exactly once (checks.apply_mutations), so a
refactor of simcore fails here loudly instead of silently testing an unmutated copy.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pytest

# A reduced but still discriminating shape set: partial tiles in every dimension, a single row
# and column, and multi-tile blocks. The timing checks always run the chapter's 64x64x64 set.
QUICK_SHAPES = ((24, 16, 32), (20, 13, 30), (1, 17, 9), (9, 17, 1))


Edits = dict[str, list[tuple[str, str]]]


@dataclass(frozen=True)
class Mutant:
    name: str
    edits: Edits
    caught_by: tuple[str, ...]  # checks that must fail (the chapter's attribution, where it applies)
    extra: bool = field(default=False)  # one of this project's, beyond the chapter's eleven
    engine_edits: Edits | None = None  # the same mistake in the compiled engine (None: `edits`, shared code)

    def edits_for(self, implementation: str) -> Edits:
        if implementation == "reference" or self.engine_edits is None:
            return self.edits
        return self.engine_edits


ENGINE_LOAD_WAITS = "            start = max(dma_free, slot[c + BY_MXU], slot[c + BY_OTHERS], slot[c + READY])\n"
ENGINE_STORE_WAITS = "            start = max(dma_free, slot[c + READY])\n"
ENGINE_ZERO_WAITS = "            start = max(vpu_free, slot[c + BY_MXU], slot[c + BY_OTHERS], slot[c + READY])\n"
ENGINE_MXU_WAITS = ("            start = max(mxu_free, slot[a + READY], slot[b + READY], slot[c + ACC_READY], slot[c + BY_MXU],\n"
                    "                        slot[c + BY_OTHERS])\n")
ENGINE_READS_OF_C = ", slot[c + BY_MXU],\n                        slot[c + BY_OTHERS])"


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
        engine_edits={"ga1.engine.timing": [
            (ENGINE_LOAD_WAITS, ENGINE_LOAD_WAITS.replace("slot[c + BY_MXU], slot[c + BY_OTHERS], ", "")),
            (ENGINE_ZERO_WAITS, ENGINE_ZERO_WAITS.replace("slot[c + BY_MXU], slot[c + BY_OTHERS], ", "")),
            ("    start = max(start, clock[c + BY_MXU], clock[c + BY_OTHERS], clock[c + READY])\n",
             "    start = max(start, clock[c + READY])\n"),
        ]},
    ),
    Mutant(
        "an instruction waits only for its first source slot",
        {"ga1.timing": [
            ("            r = ready[s2]\n            if r > start:\n                start = r\n", ""),
            ("            for s in reads:\n                if ready[s] > start:",
             "            for s in reads[:1]:\n                if ready[s] > start:"),
        ]},
        ("hazards",),
        engine_edits={"ga1.engine.timing": [
            (ENGINE_MXU_WAITS, ENGINE_MXU_WAITS.replace("slot[b + READY], ", "")),
            ("    if reads > 1:\n        start = max(start, clock[b + READY])\n", ""),
        ]},
    ),
    Mutant(
        "a DMA transfer has no setup cost",
        {"ga1.timing": [("dma_cycles = machine.dma_cycles\n", "dma_cycles = machine.dma_cycles - machine.dma_setup\n")]},
        ("hand_timed_84", "dma_bound_4x4"),
        engine_edits={"ga1.engine.timing": [("clock[DMA_CYCLES] = machine.dma_cycles\n", "clock[DMA_CYCLES] = machine.dma_cycles - machine.dma_setup\n")]},
    ),
    Mutant(
        "chained accumulating products wait for the fill as well",
        {"ga1.timing": [("            ready[s0] = finish + fill\n            acc_ready[s0] = finish\n",
                     "            ready[s0] = finish + fill\n            acc_ready[s0] = finish + fill\n")]},
        ("hand_timed_84",),
        engine_edits={"ga1.engine.timing": [("            slot[c + READY] = finish + fill\n            slot[c + ACC_READY] = finish\n",
                                 "            slot[c + READY] = finish + fill\n            slot[c + ACC_READY] = finish + fill\n")]},
    ),
    Mutant(
        "the product's fill time is zero",
        # In the timing rule and in the trace alike, as the chapter's mutant (its replay sees 0 too).
        {"ga1.timing": [("fill = machine.mxu_fill\n", "fill = 0\n")],
         "ga1.simulator": [("fill = machine.mxu_fill\n", "fill = 0\n")]},
        ("hand_timed_84",),
        engine_edits={"ga1.engine.timing": [("clock[FILL] = machine.mxu_fill\n", "clock[FILL] = 0\n")],
         "ga1.simulator": [("fill = machine.mxu_fill\n", "fill = 0\n")]},
    ),
    Mutant(
        "each store is counted as two tile transfers",
        {"ga1.timing": [("stores += 1\n", "stores += 2\n")]},
        ("traffic",),
        engine_edits={"ga1.engine.timing": [("            stores += 1\n", "            stores += 2\n")]},
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
        engine_edits={"ga1.engine.functional": [(
            "    for r in range(rows):\n        for col in range(cols):\n            spad[s, r, col] = matrix[x * T + r, y * T + col]\n",
            "    for r in range(T):\n        for col in range(T):\n"
            "            spad[s, r, col] = matrix[(x * T + r) % matrix.shape[0], (y * T + col) % matrix.shape[1]]\n",
        )]},
    ),
    Mutant(
        "a store writes the padding too (past the edge)",
        # numpy cannot write past the edge of an array: the broadcast raises, as the chapter's
        # list assignment did ("the checker did not finish"), which fails the checks.
        {"ga1.functional": [("            block[...] = spad[s0][: block.shape[0], : block.shape[1]]\n",
                         "            block[...] = spad[s0]\n")]},
        ("results",),
        engine_edits={"ga1.engine.functional": [(
            "    for r in range(rows):\n        for col in range(cols):\n            matrix[x * T + r, y * T + col] = spad[s, r, col]\n",
            "    for r in range(T):\n        for col in range(T):\n            matrix[x * T + r, y * T + col] = spad[s, r, col]\n",
        )]},
    ),
    Mutant(
        "the matrix unit multiplies with A transposed",
        {"ga1.functional": [("spad[s0] = spad[s0] + spad[s1] @ spad[s2]", "spad[s0] = spad[s0] + spad[s1].T @ spad[s2]")]},
        ("results",),
        engine_edits={"ga1.engine.functional": [("total += spad[a, r, q] * spad[b, q, col]", "total += spad[a, q, r] * spad[b, q, col]")]},
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
        engine_edits={"ga1.engine.timing": [
            (ENGINE_MXU_WAITS, ENGINE_MXU_WAITS.replace("max(mxu_free,", "max(dma_free, mxu_free, vpu_free,")),
            (ENGINE_LOAD_WAITS, ENGINE_LOAD_WAITS.replace("max(dma_free,", "max(dma_free, mxu_free, vpu_free,")),
            (ENGINE_STORE_WAITS, ENGINE_STORE_WAITS.replace("max(dma_free,", "max(dma_free, mxu_free, vpu_free,")),
            (ENGINE_ZERO_WAITS, ENGINE_ZERO_WAITS.replace("max(vpu_free,", "max(dma_free, mxu_free, vpu_free,")),
        ]},
    ),
    Mutant(
        "a load does not wait for the slot to become free (no write-after-read, no write-after-write)",
        {"ga1.timing": [(
            "            start = dma_free\n            r = last_read[s0]\n            if r > start:\n                start = r\n"
            "            r = ready[s0]\n            if r > start:\n                start = r\n",
            "            start = dma_free\n",
        )]},
        ("hazards",),
        engine_edits={"ga1.engine.timing": [(ENGINE_LOAD_WAITS, "            start = dma_free\n")]},
    ),
    # ---- this project's, where the chapter's eleven leave a gap
    Mutant(
        "the hazard replay ignores the fill (a product read right at its finish passes)",
        {"ga1.hazards": [("earliest = h.written_at if chained else h.written_at + h.written_fill",
                      "earliest = h.written_at")]},
        ("replay_detects_planted",), extra=True,
        engine_edits={"ga1.engine.hazards": [(
            "earliest = history[slot, WRITTEN_AT] + (0 if chained else history[slot, WRITTEN_FILL])",
            "earliest = history[slot, WRITTEN_AT]")]},
    ),
    Mutant(
        "double-buffered blocked schedules multiply the buffer being loaded (k + 1's)",
        {"ga1.schedules": [("            base = operand_base(k)\n            for x in range(len(rows)):",
                        "            base = operand_base(k + 1)\n            for x in range(len(rows)):")]},
        ("results",), extra=True,
        engine_edits={"ga1.engine.chapter": [(
            "        base = _operand_base(st, k)\n        for x in range(h):",
            "        base = _operand_base(st, k + 1)\n        for x in range(h):")]},
    ),
    Mutant(
        "a product does not wait for earlier readers of its accumulator (a store still reading it)",
        {"ga1.timing": [("            r = last_read[s0]\n            if r > start:\n                start = r\n"
                     "            finish = start + mxu_cycles\n",
                     "            finish = start + mxu_cycles\n")]},
        ("hazards", "hazard_programs"), extra=True,
        engine_edits={"ga1.engine.timing": [(ENGINE_MXU_WAITS, ENGINE_MXU_WAITS.replace(ENGINE_READS_OF_C, ")"))]},
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


# The engine's own mistakes, in code the reference has no counterpart of.
ENGINE_MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "the streamed replay does not count a product's accumulator as read",
        {}, ("streamed_replay",), extra=True,
        engine_edits={"ga1.engine.hazards": [("        reads[0], reads[1], reads[2] = s1, s2, s0\n        return 3, 1\n",
                                              "        reads[0], reads[1] = s1, s2\n        return 2, 1\n")]},
    ),
    Mutant(
        "the streamed replay forgets the fill of products",
        {}, ("streamed_replay",), extra=True,
        engine_edits={"ga1.engine.hazards": [("fill if op == MXU else 0, reads", "0, reads")]},
    ),
    Mutant(
        "the timing loses its state between chunks (a chunk's free times are not kept)",
        {}, ("streamed",), extra=True,
        engine_edits={"ga1.engine.timing": [(
            "    dma_free, mxu_free, vpu_free = clock[DMA_FREE], clock[MXU_FREE], clock[VPU_FREE]\n",
            "    dma_free, mxu_free, vpu_free = 0, 0, 0\n")]},
    ),
)
IMPLEMENTATIONS = ("reference", "engine")

# The generators' compiled twins make the reference's decisions; a mistake in one yields another
# valid schedule, which the chapter's checks cannot see. The reference program can: each of these
# mutants changes the program of at least one of GENERATOR_CASES.
GENERATOR_MUTANTS: dict[str, Edits] = {
    "a load takes a slot freed by a product before one freed by a store": {"ga1.engine.compile": [(
        "    first, second = (BY_STORE, BY_PRODUCT) if for_load else (BY_PRODUCT, BY_STORE)\n",
        "    first, second = BY_PRODUCT, BY_STORE\n")]},
    "eviction ties go to the largest slot": {"ga1.engine.evict": [
        ("    value = (nxt << bits) | (((1 << bits) - 1) - s)\n", "    value = (nxt << bits) | s\n"),
        ("    return ((1 << bits) - 1) - (best & ((1 << bits) - 1))\n", "    return best & ((1 << bits) - 1)\n")]},
    "the rotating window's next unit always waits a period": {"ga1.engine.order": [(
        "        if st[pos + POS_NEXT_ENTRY] <= t:\n", "        if st[pos + POS_NEXT_ENTRY] < t:\n")]},
    "a block's row operands are not reused by the row band's next block": {"ga1.engine.order": [(
        "    if (b + 1) % st[N_CB] == 0:  # the last block of its row band\n", "    if True:\n")]},
    "the tail's products run step by step": {"ga1.engine.blocks": [(
        "        if s < plain:\n            cell += 1", "        if s < kt:\n            cell += 1")]},
    "a strip's row operands are not reused by the next strip": {"ga1.engine.strip_order": [(
        "    if strip + 1 >= st[N_STRIPS]:\n", "    if True:\n")]},
    "the next strip's blocks are looked up top to bottom even when it runs bottom to top": {"ga1.engine.strip_order": [(
        "    block = strip_block(st, strip + 1, st[rec + S_COUNT] - 1 - band if st[rec + S_REVERSED] == 1 else band)\n",
        "    block = strip_block(st, strip + 1, band)\n")]},
    "a prefetch evicts protected tiles": {"ga1.engine.compile": [(
        "        horizon = key + protect if key > current else key  # a prefetch spares `protect` more\n",
        "        horizon = key\n")]},
}
GENERATOR_CASES = (
    ("general", (40, 48, 56), 14, dict(bi=2, bj=3, lookahead=8, store_first=True)),
    ("general", (48, 40, 64), 24, dict(bi=3, bj=3, block_order="col", tail=2, k_direction="up", inner="zigzag", lookahead=3)),
    ("general", (56, 32, 48), 12, dict(bi=2, bj=3, structure="rotate", ramp=2, lookahead=10)),
    ("general", (64, 40, 40), 20, dict(bi=3, bj=2, structure="rotate", block_order="col", serpentine=False, lookahead=6)),
    ("general", (36, 33, 28), 11, dict(bi=2, bj=3, tail=0, lookahead=0, structure="rotate")),  # found by a search: ties in eviction
    ("strips", (64, 48, 72), 16, dict(split=2, tail=2, protect=8)),
    ("strips", (72, 40, 64), 12, dict(axis="row", reserve=3, first_reverse=True, split=0, protect=24, lookahead=20)),
    ("strips", (80, 24, 56), 20, dict(strip_order="wide", partition="uniform", flip=False, tail=1, store_first=True)),
)


def test_the_chapters_eleven_are_all_here() -> None:
    assert sum(not m.extra for m in MUTANTS) == 11
    assert sum(m.extra for m in MUTANTS) >= 2


def _check(chapter_checks: ModuleType, implementation: str, edits: Edits, compiled: bool = False) -> object:
    copy = chapter_checks.load_simcore_copy(edits, compiled=compiled)
    sim = copy if implementation == "reference" else chapter_checks.engine_namespace(copy)
    return chapter_checks.run_chapter_checks(sim, shapes=QUICK_SHAPES)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_baseline_copy_passes(chapter_checks: ModuleType, implementation: str) -> None:
    # Nothing broken: the checker passes (so a failure below is the mutation's doing).
    report = _check(chapter_checks, implementation, {})
    assert all(report.values()), report.summary()  # type: ignore[attr-defined]


CASES = [(m, impl) for m in MUTANTS for impl in IMPLEMENTATIONS] + [(m, "engine") for m in ENGINE_MUTANTS]


@pytest.mark.parametrize("mutant, implementation", CASES, ids=[f"{impl}: {m.name}" for m, impl in CASES])
def test_mutant_is_caught(chapter_checks: ModuleType, mutant: Mutant, implementation: str) -> None:
    report = _check(chapter_checks, implementation, mutant.edits_for(implementation))
    failed = report.failed  # type: ignore[attr-defined]
    assert failed, f"NOT CAUGHT: {mutant.name}"
    missed = [name for name in mutant.caught_by if name not in failed]
    assert not missed, f"{mutant.name}: expected {missed} to fail, failed: {report.summary()}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", GENERATOR_MUTANTS)
def test_generator_mutant_is_caught_by_the_reference_program(chapter_checks: ModuleType, name: str) -> None:
    from simcore import Machine, Shape
    from simcore.ga1.generator import GeneralParams, StripParams, general, strips

    copy = chapter_checks.load_simcore_copy(GENERATOR_MUTANTS[name])
    reference = {"general": (general, GeneralParams), "strips": (strips, StripParams)}
    ours = {"general": (copy.ga1.engine.General, copy.ga1.generator.GeneralParams),
            "strips": (copy.ga1.engine.Strips, copy.ga1.generator.StripParams)}
    differs = []
    for family, dims, slots, params in GENERATOR_CASES:
        build, params_type = reference[family]
        expected = build(Shape(*dims), Machine(slots=slots), params_type(**params)).code
        generator, copy_params = ours[family]
        try:
            got = generator(copy.Shape(*dims), copy.Machine(slots=slots), copy_params(**params)).program().code
        except Exception:  # noqa: BLE001 - a crash is caught too
            differs.append(dims)
            continue
        if not np.array_equal(got, expected):
            differs.append(dims)
    assert differs, f"NOT CAUGHT: {name}"


def test_a_compiled_mutant_is_caught_too(chapter_checks: ModuleType) -> None:
    # The copies above run the engine's source as Python; here numba compiles the mutated kernels
    # (without its on-disk cache) and the same checks catch the same mistake.
    clean = _check(chapter_checks, "engine", {}, compiled=True)
    assert all(clean.values()), clean.summary()  # type: ignore[attr-defined]
    mutant = next(m for m in MUTANTS if m.name.startswith("a load does not wait"))
    report = _check(chapter_checks, "engine", mutant.edits_for("engine"), compiled=True)
    assert "hazards" in report.failed, report.summary()  # type: ignore[attr-defined]


def test_a_missing_mutation_target_fails_loudly(chapter_checks: ModuleType) -> None:
    with pytest.raises(chapter_checks.MutationError, match="found 0 times"):
        chapter_checks.load_simcore_copy({"ga1.timing": [("this text is not in timing.py", "")]})
    with pytest.raises(chapter_checks.MutationError, match="no such simcore module"):
        chapter_checks.load_simcore_copy({"timming": [("x", "y")]})
