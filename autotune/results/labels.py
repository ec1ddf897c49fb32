"""What the `verified` column's labels mean, as every table and help text says it (read by the
command line's parser, so it imports nothing)."""

from __future__ import annotations

VERIFIED_LABELS = (
    "verified: yes = exact (the program itself ran: numpy's product and the hazard replay); "
    "scaled / model = only a smaller design or the closed form was checked; NO = a check failed; - = not checked"
)
