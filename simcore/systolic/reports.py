"""One GEMM on one systolic design, in figures: the systolic counterpart of GA-1's `simulate`.
Cycles come from the closed form (`closed_form.cycles`), traffic from the tile model
(`model.design_traffic`); the cycle models in `cycle` hold both to the data moves."""

from __future__ import annotations

from dataclasses import dataclass

from simcore.shape import Shape
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import SystolicDesign, Traffic, design_traffic, hbm_words, tile_count


@dataclass(frozen=True)
class SystolicReport:
    """What `report` found for one GEMM on one design."""

    design: SystolicDesign
    shape: Shape
    cycles: int
    tiles: int
    traffic: Traffic  # on-chip buffer words, by operand
    hbm_words: int  # words over the HBM link (0 with the stationary tiles on chip)

    @property
    def macs(self) -> int:
        return self.shape.m * self.shape.k * self.shape.n

    @property
    def mac_utilization(self) -> float:
        """The share of the array's MAC slots that did useful work."""
        return self.macs / (self.design.array.pes * self.cycles)

    @property
    def words_per_mac(self) -> float:
        return self.traffic.words_per_mac


def report(design: SystolicDesign, shape: Shape) -> SystolicReport:
    """The cycles, tiles and traffic of C = A B (A is M x K, B is K x N) on `design`.

    >>> from simcore.shape import parse_shape
    >>> from simcore.systolic import SystolicArray, SystolicDesign, report
    >>> found = report(SystolicDesign(SystolicArray(128, 128), "ws"), parse_shape("512x1024x1024"))
    >>> found.cycles, found.tiles, f"{found.mac_utilization:.1%}"
    (33150, 64, '98.8%')
    """
    return SystolicReport(
        design,
        shape,
        cycles(design, shape),
        tile_count(design, shape),
        design_traffic(design, shape),
        hbm_words(design, shape),
    )
