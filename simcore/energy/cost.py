"""What a GEMM costs: energy in pJ by category (compute, register, on-chip memory, off-chip), each
category's line items (a count times an energy per action), what the oracle does not count,
energy per MAC, the energy-delay product and the area in mm2 with its own line items."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

CATEGORIES: tuple[str, ...] = ("compute", "register", "on_chip", "off_chip")
# Never costed by either oracle; every Cost lists them.
NEVER_COSTED: tuple[str, ...] = (
    "leakage (static power)",
    "control and instruction issue",
    "clock tree",
    "interconnect wires between blocks",
)


class Item(NamedTuple):
    """`amount` actions of `each` picojoules (or um2 each, for area). A named tuple, not a
    dataclass: a trial makes a dozen, and a tuple is made several times faster."""

    name: str
    amount: float
    each: float

    @property
    def total(self) -> float:
        return self.amount * self.each


class Category(NamedTuple):
    """One part of the breakdown. `counted` False: the oracle does not count this component, and
    `pj` is 0 by omission, not by measurement (`why` says what is missing)."""

    name: str
    items: tuple[Item, ...]
    counted: bool = True
    why: str = ""

    @property
    def pj(self) -> float:
        return sum([count * each for _name, count, each in self.items])


@dataclass(frozen=True)
class Cost:
    """Energy and area of one GEMM on one machine, from the oracle's exact counts."""

    oracle: str
    technology: str
    macs: int
    cycles: int
    categories: tuple[Category, ...]
    area: tuple[Item, ...]
    not_counted: tuple[str, ...] = ()

    def category(self, name: str) -> Category:
        for category in self.categories:
            if category.name == name:
                return category
        raise KeyError(name)

    @functools.cached_property  # set in the instance's __dict__: allowed on a frozen dataclass
    def energy_pj(self) -> float:
        return sum([category.pj for category in self.categories])

    @property
    def energy_per_mac_pj(self) -> float:
        return self.energy_pj / self.macs if self.macs else 0.0

    @property
    def edp(self) -> float:
        """Energy-delay product in pJ x cycles (the oracles count cycles, not seconds)."""
        return self.energy_pj * self.cycles

    @functools.cached_property
    def area_mm2(self) -> float:
        return area_mm2(self.area)

    def breakdown(self) -> dict[str, float | None]:
        """pJ per category; None for a component the oracle does not count."""
        return {c.name: (c.pj if c.counted else None) for c in self.categories}

    def metrics(self) -> dict[str, float]:
        """The flat figures a trial record carries."""
        out = {
            "energy_pj": self.energy_pj,
            "energy_per_mac_pj": self.energy_per_mac_pj,
            "edp": self.edp,
            "area_mm2": self.area_mm2,
        }
        out.update({f"energy_{c.name}_pj": c.pj for c in self.categories if c.counted})
        return out

    def describe(self) -> str:
        """A readable table of the breakdown, every line item with its count."""
        lines = [f"{self.oracle} on {self.technology}: {self.macs} MACs, {self.cycles} cycles"]
        for category in self.categories:
            if not category.counted:
                lines.append(f"  {category.name:<9} not counted: {category.why}")
                continue
            lines.append(
                f"  {category.name:<9} {category.pj:>16,.1f} pJ  {_share(category.pj, self.energy_pj)}"
            )
            for item in category.items:
                lines.append(
                    f"    {item.name:<40} {item.amount:>14,.0f} x {item.each:>9.4g} pJ = {item.total:>14,.1f}"
                )
        lines.append(
            f"  total     {self.energy_pj:>16,.1f} pJ  ({self.energy_per_mac_pj:.4g} pJ/MAC, "
            f"EDP {self.edp:.4g} pJ x cycles)"
        )
        lines.append(f"  area      {self.area_mm2:>16.4f} mm2")
        for item in self.area:
            lines.append(
                f"    {item.name:<40} {item.amount:>14,.6g} x {item.each:>9.4g} um2 = {item.total / 1e6:>10.4f} mm2"
            )
        lines.append("  not counted: " + "; ".join((*self.not_counted, *NEVER_COSTED)))
        return "\n".join(lines)


def area_mm2(items: tuple[Item, ...]) -> float:
    """The area of a block list (um2 each) in mm2."""
    return sum([count * each for _name, count, each in items]) / 1e6


def _share(part: float, whole: float) -> str:
    return f"{part / whole:6.1%}" if whole else ""
