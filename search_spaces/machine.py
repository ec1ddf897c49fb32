"""The machine space: GA-1 parameters that may vary, within ranges, under a scratchpad budget."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import ClassVar

from search_spaces.domains import Choice, IntRange, Param, Point
from simcore.ga1.machine import Machine, MachineError

SEARCHABLE: tuple[str, ...] = ("slots", "dma_setup", "dma_words_per_cycle", "mxu_cycles")


def default_ranges(machine: Machine) -> dict[str, IntRange | Choice]:
    """Ranges around the base machine; bandwidth in powers of two."""
    return {
        "slots": IntRange(8, max(8, 2 * machine.slots)),
        "dma_setup": IntRange(max(0, machine.dma_setup // 4), machine.dma_setup),
        "dma_words_per_cycle": Choice(tuple(sorted({8, 16, 32, 64, machine.dma_words_per_cycle}))),
        "mxu_cycles": IntRange(max(1, machine.mxu_cycles // 2), machine.mxu_cycles),
    }


def _integer(text: str) -> int:
    """An integer in ASCII digits (int() would take other scripts' digits and '1_000')."""
    if not re.fullmatch(r"[+-]?[0-9]+", text.strip(), re.ASCII):
        raise ValueError(f"expected an integer, got {text.strip()!r}")
    return int(text)


def parse_ranges(text: str) -> dict[str, IntRange | Choice]:
    """'slots=16:128,dma_words_per_cycle=16|32|64' -> domains (LOW:HIGH or A|B|C)."""
    ranges: dict[str, IntRange | Choice] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, raw = item.partition("=")
        if not eq or key not in SEARCHABLE:
            raise ValueError(
                f"machine range {item!r}: expected KEY=LOW:HIGH or KEY=A|B|C with KEY one of {', '.join(SEARCHABLE)}"
            )
        if key in ranges:
            raise ValueError(f"machine range {key} is given twice")
        try:
            if ":" in raw:
                low, high = (_integer(v) for v in raw.split(":", 1))
                ranges[key] = IntRange(low, high)
            else:
                ranges[key] = Choice(tuple(_integer(v) for v in raw.split("|")))
        except ValueError as exc:
            raise ValueError(f"machine range {item!r}: {exc}") from None
    return ranges


def _check_range(base: Machine, name: str, domain: IntRange | Choice) -> None:
    """Every value of a range makes a machine, and a slots range reaches the 3 slots that the
    smallest schedule holds (its a, b and c tiles)."""
    values = (domain.low,) if isinstance(domain, IntRange) else domain.options
    for value in values:
        try:
            base.replace(**{name: int(value)})
        except MachineError as exc:
            raise ValueError(f"machine range {name}: {exc}") from None
    top = domain.high if isinstance(domain, IntRange) else max(int(v) for v in domain.options)
    if name == "slots" and top < 3:
        raise ValueError(
            f"machine range slots: at most {top} slots, fewer than the 3 tiles a schedule holds"
        )


@dataclass(frozen=True)
class MachineSpace:
    """Which machine parameters vary, and the scratchpad budget in words."""

    ranges: tuple[tuple[str, IntRange | Choice], ...]
    max_scratchpad_words: int
    limit: ClassVar[str] = "scratchpad"  # what `violation` grades (a constraint `scratchpad_over`)

    @staticmethod
    def create(
        base: Machine,
        overrides: dict[str, IntRange | Choice] | None,
        max_scratchpad_words: int | None,
    ) -> MachineSpace:
        ranges = default_ranges(base)
        for name, domain in (overrides or {}).items():
            _check_range(base, name, domain)
        ranges.update(overrides or {})
        budget = max_scratchpad_words if max_scratchpad_words is not None else base.scratchpad_words
        if budget < 3 * base.tile_words:
            raise ValueError(
                f"a scratchpad budget of {budget} words holds fewer than 3 tiles of {base.tile_words} words: no schedule fits"
            )
        return MachineSpace(tuple((k, ranges[k]) for k in SEARCHABLE if k in ranges), budget)

    def params(self) -> tuple[Param, ...]:
        return tuple(
            Param(name, domain, f"machine parameter {name}") for name, domain in self.ranges
        )

    def apply(self, base: Machine, point: Point) -> Machine:
        changes = {name: int(point[name]) for name, _ in self.ranges if name in point}
        return base.replace(**changes)

    def violation(self, machine: Machine) -> float:
        """How far over the scratchpad budget, in slots (0 when within it)."""
        return max(0.0, (machine.scratchpad_words - self.max_scratchpad_words) / machine.tile_words)

    def seed_point(self, base: Machine) -> Point:
        """The base machine, clipped into the ranges (so the baseline is always a trial)."""
        point: Point = {}
        for name, domain in self.ranges:
            value = getattr(base, name)
            if isinstance(domain, IntRange):
                point[name] = domain.clip(value)
            else:
                point[name] = (
                    value
                    if value in domain.options
                    else min(domain.options, key=lambda v: (abs(int(v) - value), v))
                )  # type: ignore[arg-type]
        return point

    def corners(self, base: Machine) -> list[Machine]:
        """Every corner of the ranges: a machine's counts grow with each parameter one way, so
        the corners bound every machine in between."""
        ends: list[tuple[str, list[int]]] = []
        for name, domain in self.ranges:
            values = [domain.low, domain.high] if isinstance(domain, IntRange) else domain.options
            ends.append((name, sorted({min(int(v) for v in values), max(int(v) for v in values)})))
        found = []
        for values in itertools.product(*(options for _, options in ends)):
            try:
                found.append(base.replace(**dict(zip((n for n, _ in ends), values))))
            except ValueError:  # not a machine at all: the search refuses it elsewhere
                continue
        return found or [base]

    def reachable(self, base: Machine) -> list[Machine]:
        """The machines that bound what an evaluation may simulate: the corners, each with no
        more slots than the scratchpad budget holds (a machine over it is never simulated)."""
        most = max(3, self.max_scratchpad_words // base.tile_words)
        found = {
            m.key(): m for m in (m.replace(slots=min(m.slots, most)) for m in self.corners(base))
        }
        return list(found.values())
