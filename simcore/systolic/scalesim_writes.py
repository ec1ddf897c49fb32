"""SCALE-Sim 3.0's OFMAP write buffer (scalesim/memory/write_buffer.py), served a row at a time.

Each demand row writes its results into the buffer, one word after another, at the row's cycle.
A word taken while a drain is under way (cycle < drain end) stalls the array until the drain
ends if it leaves no free word. A word taken when no drain is under way starts one if fewer
than `active_words` words are free: the partly filled line is closed, and the next
`drain_lines` lines (or fewer, if fewer are waiting) go to DRAM one a cycle from that cycle.
Each drained line counts `bandwidth` words, except the unused tail of the block's last line,
and frees as many; so a partly filled line inside a block counts (and frees) its unused tail.

Lines are kept as runs of equal length, so a drain costs a few steps whatever its size.
"""

from __future__ import annotations

from collections import deque

from simcore.systolic.scalesim_buffers import WriteGeometry


class WriteBuffer:
    def __init__(self, geometry: WriteGeometry) -> None:
        self.g = geometry
        self.free = geometry.words
        self.drain_end = 0
        self.waiting: deque[list[int]] = deque()  # runs [line count, words per line]
        self.filling = 0
        self.writes = 0
        self.first_drain: int | None = None
        self.last_drain_end = 0

    def store(self, words: int) -> None:
        """Words written into the buffer (free space is the caller's)."""
        width = self.g.bandwidth
        self.filling += words
        full, self.filling = divmod(self.filling, width)
        if full:
            self._queue(full, width)

    def _queue(self, count: int, words: int) -> None:
        if self.waiting and self.waiting[-1][1] == words:
            self.waiting[-1][0] += count
        else:
            self.waiting.append([count, words])

    def _close_line(self) -> None:
        if self.filling:
            self._queue(1, self.filling)
            self.filling = 0

    def drain(self, cycle: int) -> int:
        """Send the next block of lines from `cycle`; returns its last cycle."""
        self._close_line()
        lines, last = 0, 0
        while lines < self.g.drain_lines and self.waiting:
            run = self.waiting[0]
            take = min(run[0], self.g.drain_lines - lines)
            lines += take
            last = run[1]
            run[0] -= take
            if not run[0]:
                self.waiting.popleft()
        words = lines * self.g.bandwidth - (self.g.bandwidth - last)
        self.writes += words
        self.free += words
        end = cycle + lines - 1
        if self.first_drain is None:
            self.first_drain = cycle
        self.last_drain_end = max(self.last_drain_end, end)
        return end

    def take(self, words: int) -> None:
        self.store(words)
        self.free -= words

    def serve(self, words: int, cycle: int) -> int:
        """A row's `words` writes at `cycle`; returns the cycle they are all accepted."""
        active = self.g.active_words
        while words > 0:
            if cycle < self.drain_end:
                if self.free > words:
                    self.take(words)
                    return cycle
                stalled = max(self.free, 1)  # the word that leaves nothing free waits
                self.take(stalled)
                words -= stalled
                cycle = self.drain_end
            elif self.free - words >= active:
                self.take(words)
                return cycle
            else:
                starter = max(self.free - active + 1, 1)  # leaves fewer than `active` free
                self.take(starter)
                words -= starter
                self.drain_end = self.drain(cycle)
        return cycle

    def finish(self, cycle: int) -> None:
        """After the last row: drain everything, one block after another."""
        self._close_line()
        while self.waiting:
            cycle = self.drain(cycle) + 1
