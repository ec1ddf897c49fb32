"""The independent hazard replay (the chapter's check 4), written apart from the timing rule.

It reads only the trace: for each slot, the uses in program order. A read must start after the
write that produced the value finished, plus that write's fill, unless the reader accumulates
onto an accumulating write (a chained product). A write must not start before every read of
the slot's previous value has finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence, cast


@dataclass(frozen=True)
class Hazard:
    index: int
    kind: str  # "read too early" or "write too early"
    slot: int
    start: int
    earliest: int

    def __str__(self) -> str:
        return f"instruction {self.index}: {self.kind} on slot {self.slot} (starts {self.start}, allowed from {self.earliest})"


@dataclass
class _SlotHistory:
    written_at: int = -1  # finish of the producing write (-1: never written)
    written_fill: int = 0
    written_by_accumulation: bool = False
    reads_end: int = 0  # latest finish of reads of the current value


# One instruction of a trace: index, engine, start, finish, slots read, slots written, fill.
_Record = tuple[int, str, int, int, Sequence[int], Sequence[int], int]


def replay(trace: Iterable[Sequence[object]]) -> list[Hazard]:
    """Every hazard in the trace; an empty list means the run was clean."""
    history: dict[int, _SlotHistory] = {}
    found: list[Hazard] = []
    for record in trace:
        index, _engine, start, finish, reads, writes, fill = cast(_Record, record)
        accumulated = set(reads) & set(writes)
        for slot in reads:
            h = history.get(slot)
            if h is None or h.written_at < 0:
                continue
            chained = slot in accumulated and h.written_by_accumulation
            earliest = h.written_at if chained else h.written_at + h.written_fill
            if start < earliest:
                found.append(Hazard(index, "read too early", slot, start, earliest))
        for slot in writes:
            h = history.get(slot)
            if h is not None and start < h.reads_end:
                found.append(Hazard(index, "write too early", slot, start, h.reads_end))
        for slot in reads:
            h = history.setdefault(slot, _SlotHistory())
            h.reads_end = max(h.reads_end, finish)
        for slot in writes:
            # A new value: its readers start afresh (an accumulation counts as its own read).
            history[slot] = _SlotHistory(
                written_at=finish,
                written_fill=fill,
                written_by_accumulation=slot in accumulated,
                reads_end=finish if slot in accumulated else 0,
            )
    return found
