"""Mutation check of the systolic model: each mutant is a fresh copy of simcore with one mistake
put into a closed form, an engine, the traffic or the mapping search, and a fixed battery of the
model's own checks (the chapter's figures, SCALE-Sim's, closed form == both engines, the event
engine == the reference engine on perturbed schedules, the fast cycle count on random cases and
on long periods, the pruned mapping search) must catch it. A mistake is a Rewrite of one function's syntax tree
(tests/helpers/ast_mutation.py), never an edit of its text."""

from __future__ import annotations

import itertools
import json
import random
from functools import partial
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.helpers.ast_mutation import Rewrite
from tests.helpers.simcore_copies import load_simcore_copy

GOLDEN = json.loads((Path(__file__).parent / "golden" / "scalesim.json").read_text())["cases"]

stationary_events = partial(Rewrite, "systolic.events_stationary", "_operands")
closed_form = partial(Rewrite, "systolic.closed_form")

MUTANTS: dict[str, tuple[Rewrite, ...]] = {
    "a swap does not check that the next load spared the shadow register": (
        stationary_events("late | $overwritten", "late"),
    ),
    "a stationary value counts as in place one cycle before it settles": (
        stationary_events("settled = $cycle", "settled = $cycle - 1"),
    ),
    "the os drain may read a result one cycle before it is complete": (
        Rewrite(
            "systolic.events_output",
            "_drains",
            "drains - late - big_k + 1",
            "drains - late - big_k + 2",
        ),
    ),
    "os does not check that A and B meet in step": (
        Rewrite(
            "systolic.events_output",
            "run_output_events",
            "a_start != b_start",
            "a_start != a_start",
        ),
    ),
    "the os closed form lets a result into a shadow register a cycle early": (
        closed_form("output_step", "drain - k + 1", "drain - k"),
    ),
    "the closed form loads over weights in use without shadow registers": (
        closed_form("stationary_step", "s + p.ls - 1", "s + p.ls - 2"),
    ),
    "the closed form frees a weight buffer before its last read": (
        closed_form("stationary_step", "q = $last - 1", "q = $last - 2"),
    ),
    "is traffic reads B once per row fold instead of per column fold": (
        Rewrite(
            "systolic.model",
            "traffic",
            "ceil_div(m, c)",
            "ceil_div(m, r)",
            branch='dataflow == "is"',
        ),
    ),
    "the reference engine loads the top row's value first": (
        Rewrite(
            "systolic.reference_stationary",
            "_StationaryRun.load",
            "kt[w_tile] - 1 - $step",
            "$step",
        ),
    ),
    "the mapping search prunes with a bound that is too high": (
        Rewrite("systolic.mapping", "lower_bounds", "role.stream", "role.stream + 1"),
    ),
    "the fast cycle count jumps before the state repeats": (
        closed_form("_repeat", "_normal(state)", "_normal(state)[:1]"),
    ),
}


# On the chapter's 3x3 array over HBM: designs whose closed-form state recurs only every two
# outer folds (ws, is), or only from the third inner step on (os). A fast cycle count that
# jumped at the first shifted state would miscount them; random small cases rarely reach this.
LONG_PERIOD = (
    ("ws", (1, 1, 12), 1.5),
    ("is", (12, 1, 1), 1.5),
    ("os", (12, 6, 12), 1),
)


def _random_design(sy: ModuleType, rng: random.Random, side: int) -> object:
    array = sy.SystolicArray(rng.randint(1, side), rng.randint(1, side))
    mapping = sy.Mapping(
        rng.randint(1, array.rows),
        rng.randint(1, array.cols),
        rng.choice(("col-outer", "row-outer")),
    )
    assume = sy.Assumptions(
        rng.random() < 0.5,
        rng.choice(("bypass", "pad")),
        rng.random() < 0.5,
        rng.choice(("overlap", "sequence")),
    )
    hbm = sy.HbmLink(rng.choice((None, None, 1, 2, 1.5)), rng.choice((1, 2)))
    return sy.SystolicDesign(array, rng.choice(("ws", "os", "is")), mapping, assume, hbm)


def _outcome(
    engine: object, sy: ModuleType, design: object, a: np.ndarray, b: np.ndarray, entries: object
) -> tuple:
    try:
        r = engine(design, a, b, entries)  # type: ignore[operator]
    except sy.SystolicTimingError as exc:
        return ("error", exc.pe, exc.cycle, exc.kind)
    return ("ok", r.cycles, r.traffic, r.c.tolist())


def _tight(sy: ModuleType, Shape: type) -> bool:
    """For every dataflow and every combination of assumptions, on chip and over HBM, the event
    engine accepts the closed-form schedule in its cycles, and rejects each stream of each tile
    one cycle early (the chapter's 6x6x6 on 3x3, and K = 2 below the tile's rows)."""
    for shape, dataflow, shadow, edges, drain, folds, hbm in itertools.product(
        (Shape(6, 6, 6), Shape(6, 2, 3)),
        ("ws", "os", "is"),
        (True, False),
        ("bypass", "pad"),
        (True, False),
        ("overlap", "sequence"),
        (sy.HbmLink(), sy.HbmLink(1, 1)),
    ):
        design = sy.SystolicDesign(
            sy.SystolicArray(3, 3),
            dataflow,
            sy.Mapping(3, 2),
            sy.Assumptions(shadow, edges, drain, folds),
            hbm,
        )
        a, b = (
            np.ones((shape.m, shape.k), dtype=np.int64),
            np.ones((shape.k, shape.n), dtype=np.int64),
        )
        run = sy.schedule(design, shape)
        if _outcome(sy.simulate_systolic, sy, design, a, b, run.entries)[:2] != ("ok", run.cycles):
            return False
        for j, s in itertools.product(range(len(run.entries)), range(len(run.entries[0]))):
            moved = [list(e) for e in run.entries]
            moved[j][s] -= 1
            if moved[j][s] < 0 or (j and moved[j - 1][s] > moved[j][s]):
                continue
            if _outcome(sy.simulate_systolic, sy, design, a, b, moved)[0] != "error":
                return False
    return True


def battery(simcore: ModuleType) -> list[str]:
    """The model's checks on one copy of simcore; the names of those that fail."""
    sy, Shape = simcore.systolic, simcore.shape.Shape
    from_mapping = simcore.systolic.mapping
    failed: list[str] = []
    six, ws = Shape(6, 6, 6), sy.SystolicDesign(sy.SystolicArray(3, 3), "ws")
    single = sy.Assumptions(shadow=False, folds="sequence")
    chapter = [
        sy.schedule(ws, six).cycles,
        sy.schedule(ws.__class__(ws.array, "ws", None, single), six).cycles,
    ] + [
        sy.cycles(sy.SystolicDesign(ws.array, "ws", hbm=sy.HbmLink(w, b)), six)
        for w, b in ((1, 1), (1, 2), (2, 2))
    ]
    if chapter != [31, 52, 64, 49, 36]:
        failed.append("chapter")
    for case in GOLDEN:
        design = sy.SystolicDesign(
            sy.SystolicArray(case["rows"], case["cols"]), case["dataflow"], None, sy.SCALESIM
        )
        shape = Shape(case["m"], case["k"], case["n"])
        t = sy.design_traffic(design, shape)
        if (sy.cycles(design, shape), t.a_reads, t.b_reads) != (
            case["demand_rows"],
            case["ifmap_sram_reads"],
            case["filter_sram_reads"],
        ):
            failed.append("scalesim")
            break
    if not _tight(sy, Shape):
        failed.append("closed form tight")
    rng = random.Random(13)
    for _ in range(70):
        design = _random_design(sy, rng, 4)
        shape = Shape(rng.randint(1, 6), rng.randint(1, 7), rng.randint(1, 7))
        data = np.random.default_rng(rng.randint(0, 99))
        a, b = data.integers(-9, 10, (shape.m, shape.k)), data.integers(-9, 10, (shape.k, shape.n))
        entries = [list(e) for e in sy.schedule(design, shape).entries]
        expected = (
            "ok",
            sy.schedule(design, shape).cycles,
            sy.design_traffic(design, shape),
            (a @ b).tolist(),
        )
        for engine in (sy.simulate_systolic, sy.simulate_systolic_reference):
            if _outcome(engine, sy, design, a, b, entries) != expected:
                failed.append("closed form == engines")
        j, s = rng.randrange(len(entries)), rng.randrange(len(entries[0]))
        entries[j][s] = max(0, entries[j][s] - rng.randint(1, 2))
        if all(entries[i][s] >= entries[i - 1][s] for i in range(1, len(entries))):
            if _outcome(sy.simulate_systolic, sy, design, a, b, entries) != _outcome(
                sy.simulate_systolic_reference, sy, design, a, b, entries
            ):
                failed.append("event engine == reference")
    for dataflow, dims, words_per_cycle in LONG_PERIOD:
        design = sy.SystolicDesign(
            sy.SystolicArray(3, 3), dataflow, hbm=sy.HbmLink(words_per_cycle)
        )
        if sy.cycles(design, Shape(*dims)) != sy.schedule(design, Shape(*dims)).cycles:
            failed.append("fast cycle count, long period")
    for _ in range(150):
        design = _random_design(sy, rng, 6)
        shape = Shape(rng.randint(1, 40), rng.randint(1, 60), rng.randint(1, 60))
        if sy.cycles(design, shape) != sy.schedule(design, shape).cycles:
            failed.append("fast cycle count")
            break
    for _ in range(25):
        design = _random_design(sy, rng, 5)
        shape = Shape(rng.randint(1, 9), rng.randint(1, 12), rng.randint(1, 12))
        best = min(
            sy.cycles(design.with_mapping(sy.Mapping(r, c, o)), shape)
            for r, c, o in itertools.product(
                range(1, design.array.rows + 1),
                range(1, design.array.cols + 1),
                ("col-outer", "row-outer"),
            )
        )
        if from_mapping.best_mapping(design, shape).cycles != best:
            failed.append("best mapping")
            break
    return sorted(set(failed))


def test_the_battery_passes_on_the_real_model() -> None:
    assert battery(load_simcore_copy()) == []


@pytest.mark.parametrize("name", list(MUTANTS))
def test_the_battery_catches(name: str) -> None:
    assert battery(load_simcore_copy(MUTANTS[name])), f"mutant not caught: {name}"
