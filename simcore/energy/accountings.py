"""How the systolic model charges its counts: the accounting conventions of its energy.

The counts (systolic_counts) are those of the array; an accounting says what each one costs where
two models differ in what they charge for the same movement. Two are defined:

  PHYSICAL  (the default) what the systolic chain does: a MAC of a reduction over the array's
            rows (ws, is) reads the partial sum of the PE before it and writes its own (2 output
            register accesses); the first pass over an output tile reads no partial sum back;
            a final output is written into the buffer at word width.
  ZIGZAG    ZigZag's (zigzag-dse 3.9.1) conventions for the same movements, which it reports
            with element counts equal to ours:
              * a MAC of a spatial reduction also reads its PE's output register to pass the
                sum up (3 output register accesses a MAC);
              * when partial sums are read back at all, each such MAC also writes its output
                register from the buffer (4 a MAC; ZigZag counts that access per MAC although it
                moves fewer elements);
              * when partial sums are read back at all, the energy charges one read-back per
                pass over an output tile, the first included (M N K/r sums read, not
                M N (K/r - 1));
              * when partial sums are read back at all, every output is written into the buffer
                at partial-sum width, the final ones included.
            With one pass (K within the array's rows) only the first applies.

Output-stationary GEMMs reduce in time inside each PE and read no partial sum back, so both
accountings charge them alike.
"""

from __future__ import annotations

from dataclasses import dataclass


class AccountingError(ValueError):
    """An accounting name that is not defined."""


@dataclass(frozen=True)
class Accounting:
    """The conventions by which the systolic energy charges its counts (see the module)."""

    name: str
    transfer_read: bool  # a reduced MAC also reads its output register to pass the sum up
    readback_register_write: bool  # with read-backs, a reduced MAC also writes its register
    first_readback_charged: bool  # with read-backs, the first pass over a tile is charged one
    finals_at_accumulator_width: bool  # with read-backs, final outputs at partial-sum width


PHYSICAL = Accounting("physical", False, False, False, False)
ZIGZAG = Accounting("zigzag", True, True, True, True)
ACCOUNTINGS = {a.name: a for a in (PHYSICAL, ZIGZAG)}


def accounting(name: str) -> Accounting:
    """The accounting called `name` (physical or zigzag)."""
    try:
        return ACCOUNTINGS[name]
    except KeyError:
        known = ", ".join(ACCOUNTINGS)
        raise AccountingError(f"unknown accounting={name!r} (known: {known})") from None
