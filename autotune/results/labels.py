"""What the `verified` column's labels mean, as every table and help text says it (read by the
command line's parser, so it imports nothing)."""

from __future__ import annotations

from typing import Mapping

VERIFIED_LABELS = (
    "verified: yes = exact (the program itself ran: numpy's product and the hazard replay); "
    "scaled = the same schedule on a reduced problem (verified-reduced); model = nothing ran but the timing or closed form; NO = a check failed; - = not checked"
)


def verified_label(row: Mapping[str, object]) -> str:
    """yes only for an exact check; the level of a weaker one; NO for a failure."""
    verified, level = row.get("verified"), row.get("verification")
    if verified is False:
        return "NO"
    if verified is True:
        return "yes"
    return str(level) if isinstance(level, str) and level not in ("none", "exact") else "-"
