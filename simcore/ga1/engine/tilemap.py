"""Which slot holds a tile, in memory bounded by the slots when the tiles are many (a 65536^3
product has 2 * 10^8 tiles; at most `slots` of them are resident at a time).

Up to DIRECT_TILES tiles the section is an entry per tile (one load per look-up). Beyond, it is
a hash table: open addressing with linear probing over a power-of-two table at least four times
the slots (a probe or two per look-up), keys then slots, -1 marking an empty entry; a removal
shifts the entries after it back (no tombstones), so the table never degrades. The section's
first entry says which of the two it is.
"""

from __future__ import annotations

import numpy as np

from simcore.ga1.engine.jit import get, inline, put

EMPTY = -1
DIRECT, HASHED = 0, 1  # the section's first entry
MIX, SHIFT = 2654435761, 12  # Knuth's multiplier: bits 12.. of tile * MIX spread neighbouring tiles
DIRECT_TILES = 1 << 18  # up to this many tiles, an entry per tile (2 MB)


def section(slots: int, tiles: int) -> np.ndarray:
    """The section, every tile in no slot, for `slots` slots and `tiles` tiles."""
    if tiles <= DIRECT_TILES:
        table = np.full(1 + tiles, EMPTY, dtype=np.int64)
        table[0] = DIRECT
    else:
        table = np.full(1 + 2 * (1 << max(3, (4 * slots - 1).bit_length())), EMPTY, dtype=np.int64)
        table[0] = HASHED
    return table


@inline
def _home(tile: int, mask: int) -> int:
    # bits 12 and up of the product agree whether it wraps at 64 bits (numba) or not (Python)
    return ((tile * MIX) >> SHIFT) & mask


@inline
def find(table: np.ndarray, tile: int) -> int:
    """The slot that holds `tile`, or -1."""
    if get(table, 0) == DIRECT:
        return get(table, 1 + tile)
    mask = ((table.shape[0] - 1) >> 1) - 1
    at = _home(tile, mask)
    while True:
        key = get(table, 1 + at)
        if key == tile:
            return get(table, 2 + at + mask)
        if key == EMPTY:
            return -1
        at = (at + 1) & mask


@inline
def insert(table: np.ndarray, tile: int, slot: int) -> None:
    """`tile` is in `slot` (it was in none)."""
    if get(table, 0) == DIRECT:
        put(table, 1 + tile, slot)
        return
    mask = ((table.shape[0] - 1) >> 1) - 1
    at = _home(tile, mask)
    while get(table, 1 + at) != EMPTY and get(table, 1 + at) != tile:
        at = (at + 1) & mask
    put(table, 1 + at, tile)
    put(table, 2 + at + mask, slot)


@inline
def remove(table: np.ndarray, tile: int) -> None:
    """`tile` is in no slot any more."""
    if get(table, 0) == DIRECT:
        put(table, 1 + tile, EMPTY)
        return
    mask = ((table.shape[0] - 1) >> 1) - 1
    at = _home(tile, mask)
    while get(table, 1 + at) != tile:
        if get(table, 1 + at) == EMPTY:
            return
        at = (at + 1) & mask
    hole, probe = at, (at + 1) & mask
    while get(table, 1 + probe) != EMPTY:
        home = _home(get(table, 1 + probe), mask)
        # the entry at probe may fill the hole if its home is not in (hole, probe], cyclically
        after_hole = home <= hole or home > probe if probe > hole else home <= hole and home > probe
        if after_hole:
            put(table, 1 + hole, get(table, 1 + probe))
            put(table, 2 + hole + mask, get(table, 2 + probe + mask))
            hole = probe
        probe = (probe + 1) & mask
    put(table, 1 + hole, EMPTY)
