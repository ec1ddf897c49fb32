"""Typed parameter domains, declared as data. autotune converts them to Optuna distributions;
search_spaces itself does not depend on Optuna."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterator, Union

Value = Union[int, str, bool]
Point = dict[str, Value]


@dataclass(frozen=True)
class IntRange:
    low: int
    high: int
    step: int = 1
    log: bool = False

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"empty integer range {self.low}..{self.high}")
        if self.step < 1:
            raise ValueError("step must be at least 1")

    def values(self) -> list[Value]:
        return list(range(self.low, self.high + 1, self.step))

    def contains(self, value: Value) -> bool:
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and self.low <= value <= self.high
            and (value - self.low) % self.step == 0
        )

    def clip(self, value: int) -> int:
        return min(self.high, max(self.low, value))

    def nearby(self, value: Value) -> list[tuple[int, Value]]:
        """Values around `value`, 1, 2, 4, 8... steps away (a factor 2, 4, 8... on a log range),
        nearest first, below before above, each with its distance class relative to the range:
        class 1 is up to an eighth of the range (at least 2 steps), each class beyond doubles it."""
        assert isinstance(value, int)
        base = max(2.0, ((self.high - self.low) // self.step + 1) / 8)
        found: list[tuple[int, Value]] = []
        for scale in range(1, 64):
            reach = 1 << (scale - 1)
            moves = (
                (value // (2 * reach), value * 2 * reach)
                if self.log
                else (value - reach * self.step, value + reach * self.step)
            )
            inside = [v for v in moves if self.contains(v) and v != value]
            if not inside and (moves[0] < self.low and moves[1] > self.high):
                break
            distance = scale if self.log else 1 + max(0, math.ceil(math.log2(reach / base)))
            found += [(distance, v) for v in inside]
        return found


@dataclass(frozen=True)
class Choice:
    options: tuple[Value, ...]

    def __post_init__(self) -> None:
        if not self.options:
            raise ValueError("a choice needs at least one option")

    def values(self) -> list[Value]:
        return list(self.options)

    def contains(self, value: Value) -> bool:
        return value in self.options

    def nearby(self, value: Value) -> list[tuple[int, Value]]:
        """Every other option, all at distance class 1."""
        return [(1, option) for option in self.options if option != value]


Domain = Union[IntRange, Choice]


@dataclass(frozen=True)
class Unless:
    """A parameter's condition in the conditional encoding: the parameter is not used (not
    suggested, and fixed at `fixed`) when the earlier parameter `param` takes one of `values`."""

    param: str
    values: tuple[Value, ...]
    fixed: Value


@dataclass(frozen=True)
class Param:
    name: str
    domain: Domain
    help: str = ""
    unless: Unless | None = None  # when the parameter does not matter (see Unless)
    structural: bool = (
        False  # a choice between kinds of schedule: searches refine the best of each kind
    )

    def used(self, point: Point) -> bool:
        """Whether the parameter matters, given the values of the parameters it depends on."""
        return self.unless is None or point[self.unless.param] not in self.unless.values


def conditional_order(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """The parameters in the order the conditional encoding suggests them: every parameter a
    condition depends on first (declaration order), then the rest (declaration order)."""
    first = {p.unless.param for p in params if p.unless is not None}
    return tuple(p for p in params if p.name in first) + tuple(
        p for p in params if p.name not in first
    )


def grid(params: tuple[Param, ...]) -> Iterator[Point]:
    """Every combination of the parameters' values, in declaration order."""
    names = [p.name for p in params]
    for values in itertools.product(*(p.domain.values() for p in params)):
        yield dict(zip(names, values))
