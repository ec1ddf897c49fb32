"""The GA-1 oracle and the workflows that only GA-1 has: the chapter's sweep of hand-written
schedules (`sweep`) and the exact optimum (`optimum`). `ORACLE` is what the entry-point group
`autotune.oracles` registers."""

from __future__ import annotations

from autotune.oracles.ga1.oracle import ORACLE, GA1Oracle
from autotune.oracles.ga1.sizes import chapter_best, largest_counts, padding_note

__all__ = ["ORACLE", "GA1Oracle", "chapter_best", "largest_counts", "padding_note"]
