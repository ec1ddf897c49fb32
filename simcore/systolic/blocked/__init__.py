"""The schedule above the array: a GEMM cut into blocks that fit the machine's buffers, the blocks
run in a loop order, each operand single or double buffered, every block's operands fetched
over the DRAM link and its results drained back (`schedule`: the parameters and the feasibility
arithmetic). The time of a schedule follows from events (`reference`: the readable engine that
steps them one by one; `fast`: the same timing with runs of identical blocks jumped), every
block's tiles following the previous block's on the array (`stream`), the words it moves from
the loop structure (`counts`), and no schedule beats the bounds of `bounds`. `evaluate` is the
one call an oracle makes; `space` is the schedule as a search space, `enumerate` an enumerative
search for benchmarks."""

from simcore.systolic.blocked.evaluate import MemoryRun, evaluate
from simcore.systolic.blocked.schedule import (
    LOOP_ORDERS,
    BlockSchedule,
    Feasibility,
    feasibility,
    footprints,
)

__all__ = [
    "LOOP_ORDERS",
    "BlockSchedule",
    "Feasibility",
    "MemoryRun",
    "evaluate",
    "feasibility",
    "footprints",
]
