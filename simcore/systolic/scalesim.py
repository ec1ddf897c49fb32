"""The figures SCALE-Sim 3.0 reports for one GEMM, counted its way, under its assumptions
(`SCALESIM`) and its mapping (the whole array, column folds outer):

* Total Cycles (COMPUTE_REPORT.csv): the last 0-based cycle index, one less than the cycles
  (the rows of its demand matrices) when nothing stalls;
* SRAM IFMAP reads and SRAM Filter reads (DETAILED_ACCESS_REPORT.csv): the reads of A and B;
* SRAM OFMAP writes: for ws and is every fold's partial (or final) sums; for os the M N results
  plus R + C per fold, which compute/systolic_compute_os.py adds after flipping each fold's
  padded R x C output block.

A convolution is the GEMM of SCALE-Sim's im2col operand matrices (workloads/scalesim.py). tests/simcore/test_scalesim_golden.py and
tests/search_spaces/test_scalesim_topologies_golden.py hold these against SCALE-Sim's own runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.shape import Shape
from simcore.systolic.closed_form import cycles
from simcore.systolic.model import SCALESIM, Mapping, SystolicDesign, design_traffic, tile_count


@dataclass(frozen=True)
class ScalesimReport:
    total_cycles: int
    ifmap_sram_reads: int
    filter_sram_reads: int
    ofmap_sram_writes: int


def is_scalesim(design: SystolicDesign) -> bool:
    """SCALE-Sim's assumptions, its mapping and no HBM link: its figures apply."""
    whole = Mapping(design.array.rows, design.array.cols, "col-outer")
    return design.assumptions == SCALESIM and design.used == whole and design.hbm.on_chip


def scalesim_report(design: SystolicDesign, shape: Shape) -> ScalesimReport:
    if not is_scalesim(design):
        raise ValueError(
            "SCALE-Sim's figures need its assumptions and the whole array, column folds outer"
        )
    t = design_traffic(design, shape)
    writes = t.psum_writes + t.c_writes
    if design.dataflow == "os":
        writes = t.c_writes + tile_count(design, shape) * (design.array.rows + design.array.cols)
    return ScalesimReport(cycles(design, shape) - 1, t.a_reads, t.b_reads, writes)
