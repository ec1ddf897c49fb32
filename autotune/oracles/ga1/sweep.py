"""The chapter's sweep: every hand-written schedule run on one shape and machine (`autotune
baseline`, `autotune sweep`)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from search_spaces.base import EXACT, MODEL, SCALED
from simcore.ga1.bounds import predicted_double_buffered_cycles, simple_bounds
from simcore.ga1.engine import chapter_generator
from simcore.ga1.machine import MACHINE_KEYS, Machine
from simcore.ga1.reduced import verify_at_scale
from simcore.ga1.schedules import ChapterSchedule
from simcore.shape import Shape

ROW_KEYS: tuple[str, ...] = (
    "schedule",
    "family",
    "bi",
    "bj",
    "buffers",
    "fits",
    "slots_needed",
    "tiles_moved",
    "loads",
    "stores",
    "cycles",
    "mxu_util",
    "dma_busy",
    "vs_best",
    "model_cycles",
    "model_ratio",
    "verified",
    "verification",
)

# What `autotune leaderboard` shows of a sweep's table (written in its metadata, "columns").
SHOWN: tuple[str, ...] = (
    "m",
    "k",
    "n",
    "slots",
    "dma_setup",
    "dma_words_per_cycle",
    "schedule",
    "fits",
    "cycles",
    "mxu_util",
    "vs_best",
    "verified",
)


def sweep_rows(
    shape: Shape, machine: Machine, schedules: Sequence[ChapterSchedule], verify: bool = True
) -> list[dict[str, object]]:
    """One row per schedule: its counts and timing, or fits=False when it needs too many slots;
    SizeError for a shape whose counts could pass 64 bits."""
    from autotune.oracles.ga1.oracle import ORACLE

    ORACLE.check_size(shape, machine)
    rows: list[dict[str, object]] = []
    for schedule in schedules:
        block = schedule.block(shape, machine)
        need = schedule.slots_needed(shape, machine)
        row: dict[str, object] = {key: None for key in ROW_KEYS}
        row["verification"] = "none"
        row.update(
            schedule=schedule.label(shape, machine),
            family=schedule.family,
            bi=block[0] if block else None,
            bj=block[1] if block else None,
            buffers=schedule.buffers,
            fits=need <= machine.slots,
            slots_needed=need,
        )
        if row["fits"]:
            generator = chapter_generator(schedule, shape, machine)
            result = generator.timing()
            row.update(
                tiles_moved=result.tiles_moved,
                loads=result.loads,
                stores=result.stores,
                cycles=result.cycles,
                mxu_util=result.mxu_util(machine),
                dma_busy=result.dma_busy,
            )
            if block and schedule.buffers == 2:
                model = predicted_double_buffered_cycles(shape, machine, *block)
                row.update(model_cycles=model, model_ratio=model / result.cycles)
            if verify:  # functionally and hazard-replayed: the program, or its reduced shape's
                found = verify_at_scale(generator)
                checked = found.verification
                row.update(
                    verified=checked.ok if checked is not None else None,
                    verification=MODEL if checked is None else SCALED if found.reduced else EXACT,
                )
        rows.append(row)
    fitted = [int(r["cycles"]) for r in rows if r["fits"]]  # type: ignore[call-overload]
    best = min(fitted) if fitted else None
    for row in rows:
        if row["fits"] and best:
            row["vs_best"] = int(row["cycles"]) / best  # type: ignore[call-overload]
    return rows


def sweep_frame(shape: Shape, machine: Machine, rows: Sequence[dict[str, object]]) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(ROW_KEYS))
    frame.insert(0, "m", shape.m)
    frame.insert(1, "k", shape.k)
    frame.insert(2, "n", shape.n)
    for position, key in enumerate(MACHINE_KEYS):
        frame.insert(3 + position, key, getattr(machine, key))
    for column in (
        "bi",
        "bj",
        "slots_needed",
        "tiles_moved",
        "loads",
        "stores",
        "cycles",
        "model_cycles",
    ):
        frame[column] = frame[column].astype("Int64")
    for column in ("mxu_util", "dma_busy", "vs_best", "model_ratio"):
        frame[column] = frame[column].astype("float64")
    frame["verified"] = frame["verified"].astype("boolean")
    return frame


def format_table(shape: Shape, machine: Machine, rows: Sequence[dict[str, object]]) -> str:
    """The chapter's table layout."""
    bounds = simple_bounds(shape, machine)
    lines = [
        f"{shape} product; scratchpad of {machine.slots} tile slots ({machine.scratchpad_words} words); "
        f"matrix unit alone needs {bounds.compute} cycles, DMA alone (each tile moved once) {bounds.dma} cycles",
        f"{'schedule':<35}{'tiles moved':>11} {'cycles':>8} {'MXU util':>9} {'DMA busy':>9} {'vs best':>8}  model, 2 buf",
    ]
    for row in rows:
        label = str(row["schedule"])
        if not row["fits"]:
            lines.append(f"{label:<35}  does not fit (needs {row['slots_needed']} slots)")
            continue
        text = (
            f"{label:<35}{row['tiles_moved']:>11} {row['cycles']:>8} {row['mxu_util']:>9.0%}"
            f" {row['dma_busy']:>9.0%} {row['vs_best']:>7.2f}x"  # one space apart, whatever the width
        )
        if row["model_cycles"] is not None:
            text += f"  {row['model_cycles']:>7} ({row['model_ratio']:.2f})"
        if row["verified"] is False:
            text += "  VERIFICATION FAILED"
        lines.append(text)
    return "\n".join(lines)
