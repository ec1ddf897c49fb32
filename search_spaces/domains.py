"""Typed parameter domains, declared as data. autotune converts them to Optuna distributions;
search_spaces itself does not depend on Optuna."""
from __future__ import annotations

import itertools
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
        return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high and (value - self.low) % self.step == 0

    def clip(self, value: int) -> int:
        return min(self.high, max(self.low, value))


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


Domain = Union[IntRange, Choice]


@dataclass(frozen=True)
class Param:
    name: str
    domain: Domain
    help: str = ""


def grid(params: tuple[Param, ...]) -> Iterator[Point]:
    """Every combination of the parameters' values, in declaration order."""
    names = [p.name for p in params]
    for values in itertools.product(*(p.domain.values() for p in params)):
        yield dict(zip(names, values))
