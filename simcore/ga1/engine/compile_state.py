"""The layout of the compiled compiler's state (compile.py): the fields after the plan's
(plan.py) in the flat array `st`, and the rows one product may emit at most.

The compiler's sections follow the plan's: the ring of products between the matrix unit and the
DMA frontier (RING_AT), the order's position (POS_AT), which slot holds a tile (WHERE_AT), each
slot's tile and next use (TILE_AT, NEXT_AT), the two queues of free slots (FREE_AT), the
eviction candidates (EVICT_AT), the pending stores (PENDING_AT) and the ties' log (TIE_LOG_AT).
"""

from __future__ import annotations

from simcore.ga1.engine.plan import PLAN_END

(
    FRONTIER,
    BLOCKED,
    PENDING,
    GENERATED,
    FAILED_AT,
    LIVE,
    NEXT_P,
    SLOTS,
    RING_MASK,
    HEADROOM,
    RING_AT,
    POS_AT,
    WHERE_AT,
    TILE_AT,
    NEXT_AT,
    FREE_AT,
    EVICT_AT,
    PENDING_AT,
    STOP_P,
    WHERE_LEN,
    QUEUE,
) = range(PLAN_END, PLAN_END + 21)
# Two queues of free slots, q = 0: slots freed by a product's last read, q = 1: freed by a store;
# queue q's first entry and length are at QUEUE + 2 q and QUEUE + 2 q + 1. QUEUE + 4 counts the
# pairs of slots an eviction chose between by slot number alone (-1: not counted; the periodic
# timing counts them), logged in the ring at TIE_LOG_AT (evict.py's log_ties).
BY_PRODUCT, BY_STORE = 0, 1
TIES = QUEUE + 4
TIE_LOG_AT = QUEUE + 5
HEADER = QUEUE + 6
BATCH = 32  # products the order streams ahead at a time, at least
ALL_DUE = 1 << 62  # a product after which every pending store may go


def headroom(slots: int, lookahead: int) -> int:
    """Rows one product emits at most: the stores of every slot twice, and three rows for each
    product the frontier passes."""
    return 2 * slots + 3 * (lookahead + 2) + 2
