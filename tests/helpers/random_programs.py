"""Random GA-1 programs on random machines, for the differential and engine property tests.

`cases()` draws a machine, DRAM tensors (small integers, some inf and nan) and a program using
every opcode, ending with a store of every slot to the dump tensor DUMP.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

TENSORS = ("A", "B", "C")
DUMP = "D"


@st.composite
def machines(draw: st.DrawFn) -> dict[str, int]:
    return {
        "T": draw(st.sampled_from([1, 2, 3, 4, 8])),
        "slots": draw(st.integers(1, 4)),  # few slots: instructions collide on them often
        "dma_setup": draw(st.integers(0, 20)),
        "dma_words_per_cycle": draw(st.integers(1, 32)),
        "mxu_cycles": draw(st.integers(1, 10)),
        "mxu_fill": draw(st.integers(0, 10)),
        "vpu_lanes": draw(st.integers(1, 16)),
        "sfu_lanes": draw(st.integers(1, 8)),
    }


VSCALE_CONSTANTS = (-2.0, -1.0, 0.0, 0.5, 1.0, 3.0)


def draw_instruction(
    draw: st.DrawFn, T: int, slots: int, shapes: dict[str, tuple[int, int]], kinds: tuple[str, ...]
) -> tuple[Any, ...]:
    """One instruction of a kind in `kinds`. Drawn imperatively: building strategy objects per
    example would cost more than running both simulators."""
    kind = draw(st.sampled_from(kinds))

    def slot() -> int:
        return draw(st.integers(0, slots - 1))

    if kind in ("load", "store"):
        name = draw(st.sampled_from(TENSORS))
        rows, cols = shapes[name]
        # Up to one tile past the edge: partial tiles and tiles wholly outside the tensor.
        return (
            kind,
            slot(),
            name,
            draw(st.integers(0, -(-rows // T))),
            draw(st.integers(0, -(-cols // T))),
        )
    if kind == "zero":
        return ("zero", slot())
    if kind == "mxu":
        return ("mxu", slot(), slot(), slot())
    if kind == "mxu_same":
        s = slot()
        return ("mxu", s, s, s)  # c == a == b
    if kind in ("exp", "bcastcol", "transpose"):
        return (kind, slot(), slot())
    if kind == "sfu":
        return ("sfu", draw(st.sampled_from(["rsqrt", "erf"])), slot(), slot())
    if kind == "vscale":
        return ("vscale", slot(), slot(), draw(st.sampled_from(VSCALE_CONSTANTS)))
    if kind == "rowred":
        return ("rowred", draw(st.sampled_from(["sum", "max"])), slot(), slot())
    if kind == "masklen":
        return ("masklen", slot(), draw(st.integers(-1, T + 1)), draw(st.integers(-1, T + 1)))
    if kind in ("relu", "neg"):
        return ("vop", kind, slot(), slot(), slot() if draw(st.booleans()) else None)
    return ("vop", kind, slot(), slot(), slot())  # add sub mul div max


# Swarm testing: each example draws from a few instruction kinds only, so that the sequences a
# bug needs (load, load, max, store) are likely rather than diluted among sixteen kinds.
KINDS = (
    "zero",
    "mxu",
    "mxu_same",
    "exp",
    "vscale",
    "rowred",
    "bcastcol",
    "masklen",
    "add",
    "sub",
    "mul",
    "div",
    "max",
    "relu",
    "neg",
)


# The instructions beyond the chapter (its listing does not run them).
EXTENSION_KINDS = ("sfu", "transpose")


@st.composite
def cases(
    draw: st.DrawFn, kinds: tuple[str, ...] = KINDS
) -> tuple[dict[str, int], dict[str, np.ndarray], list[tuple[Any, ...]]]:
    params = draw(machines())
    T = params["T"]
    dram = {}
    for name in TENSORS:
        rows, cols = draw(st.integers(1, 2 * T + 1)), draw(st.integers(1, 2 * T + 1))
        # Small integers from a drawn seed (cheaper than drawing each value), and in half the
        # tensors some inf and nan: max, relu and division must treat them as the listing does.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = rng.integers(-3, 4, size=(rows, cols)).astype(np.float64)
        if draw(st.booleans()):
            special = rng.random((rows, cols)) < 0.25
            values[special] = rng.choice([math.inf, -math.inf, math.nan], size=int(special.sum()))
        dram[name] = values
    shapes = {name: value.shape for name, value in dram.items()}
    # An explicit length: plain st.lists keeps programs short, and the interesting bugs need a
    # few instructions to line up (a load, a producer, a consumer, a store).
    length = draw(st.sampled_from(range(25)))
    palette = tuple(draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=5, unique=True)))
    kinds = ("load", "load", "store", *palette)
    program = [draw_instruction(draw, T, params["slots"], shapes, kinds) for _ in range(length)]
    # End by storing every slot to a dump tensor: the whole final scratchpad is compared, not
    # only what the random stores happened to write out.
    dram[DUMP] = np.zeros((params["slots"] * T, T))
    program += [("store", s, DUMP, s, 0) for s in range(params["slots"])]
    return params, dram, program
