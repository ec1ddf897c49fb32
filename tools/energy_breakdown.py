"""Print one GEMM's energy and area breakdown on each oracle (docs/energy.md shows the output).

  GA-1      the chapter's blocked schedule (bi x bj tiles of C, double buffered) on a machine of
            --slots slots, timed by the compiled engine
  systolic  an R x C weight-stationary array with shadow registers and an HBM link of
            --hbm-words words per cycle, timed by the closed form

Usage: python tools/energy_breakdown.py [--shape 128x128x128] [--tech FILE] [--slots 64]
       [--block 4x4] [--array 32x32] [--dataflow ws] [--hbm-words 16]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simcore.energy import TechnologyError, ga1_cost_of_timing, load_technology, systolic_cost_of  # noqa: E402
from simcore.ga1.engine import Blocked  # noqa: E402
from simcore.ga1.machine import Machine  # noqa: E402
from simcore.shape import ShapeError, parse_shape  # noqa: E402
from simcore.systolic.model import Assumptions, HbmLink, SystolicArray, SystolicDesign  # noqa: E402
from simcore.systolic.tie import parse_array  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--shape", default="128x128x128")
    parser.add_argument("--tech", help="a technology table (default: the shipped 45 nm one)")
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--block", default="4x4", help="GA-1 block of C tiles, BIxBJ")
    parser.add_argument("--array", default="32x32")
    parser.add_argument("--dataflow", default="ws", choices=("ws", "os", "is"))
    parser.add_argument("--hbm-words", type=float, default=16)
    args = parser.parse_args()
    try:
        tech = load_technology(args.tech)
        shape = parse_shape(args.shape)
        bi, bj = parse_array(args.block)
        rows, cols = parse_array(args.array)
    except (TechnologyError, ShapeError, ValueError) as exc:
        print(f"energy_breakdown: {exc}", file=sys.stderr)
        return 2
    machine = Machine(slots=args.slots)
    timing = Blocked(shape, machine, bi, bj).timing()
    print(f"GA-1: blocked {bi}x{bj}, double buffered, {shape}, {machine.key()}")
    print(ga1_cost_of_timing(machine, timing, tech).describe())
    design = SystolicDesign(
        SystolicArray(rows, cols),
        args.dataflow,
        assumptions=Assumptions(shadow=True),
        hbm=HbmLink(args.hbm_words, 2),
    )
    print(
        f"\nsystolic: {design.array} {args.dataflow}, shadow registers, HBM {args.hbm_words:g} words/cycle, {shape}"
    )
    print(systolic_cost_of(design, shape, tech).describe())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
