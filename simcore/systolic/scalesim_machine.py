"""A SCALE-Sim 3.0 configuration as a machine of this model (the machine file's layout), so that
a tuned run can take a `.cfg` as its architecture: the array and its dataflow, the three SRAMs
(ifmap holds A, filter B, ofmap C) at their sizes, and one DRAM link at the configuration's USER
bandwidth. The run is then timed by this model's rules, not by SCALE-Sim's memory model (which
the systolic command's `--assume scalesim` reproduces); what the translation assumes is written
into the machine's `assumed` table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simcore.systolic.scalesim_config import (
    ScalesimConfig,
    ScalesimConfigError,
    read_scalesim_config,
)

ASSUMED = {
    "clock": "SCALE-Sim counts cycles only: the clock is taken as 1 GHz",
    "words": "SCALE-Sim counts every element as one word of its SRAMs: operands, partial sums "
    "and outputs are all 8-bit words here, so the ofmap SRAM holds as many sums as SCALE-Sim's",
    "link": "SCALE-Sim's per-operand interfaces become one DRAM link shared by A, B and C, at the "
    "configuration's USER Bandwidth in words a cycle, with no latency per request",
    "widths": "every SRAM reads and writes max(ArrayHeight, ArrayWidth) words a cycle: enough for "
    "the array's rows and columns each cycle, as SCALE-Sim feeds them",
}


def machine_dict(config: ScalesimConfig, source: str) -> dict[str, Any]:
    """The machine file's layout for a configuration (ScalesimConfigError when it gives no USER
    bandwidth, or several)."""
    if not config.user_bandwidth:
        raise ScalesimConfigError(
            "InterfaceBandwidth CALC gives no bandwidth: a machine needs USER and a Bandwidth"
        )
    if len(set(config.bandwidths)) != 1:
        raise ScalesimConfigError(
            f"Bandwidth: a machine has one link, got {','.join(map(str, config.bandwidths))}"
        )
    width = f"{max(config.array_rows, config.array_cols)} words/cycle"

    def sram(operand: str, kb: int) -> dict[str, Any]:
        return {
            "holds": [operand],
            "capacity": f"{kb} KiB",
            "read_width": width,
            "write_width": width,
        }

    return {
        "name": config.run_name,
        "description": f"SCALE-Sim 3.0 configuration {config.run_name} ({source})",
        "array": {
            "rows": config.array_rows,
            "cols": config.array_cols,
            "dataflow": config.dataflow,
            "clock": "1 GHz",
        },
        "words": {"operand_bits": 8, "accumulator_bits": 8, "output_bits": 8},
        "buffers": {
            "ifmap": sram("a", config.ifmap_kb),
            "filter": sram("b", config.filter_kb),
            "ofmap": sram("c", config.ofmap_kb),
        },
        "dram": {"bandwidth": f"{config.bandwidths[0]} words/cycle", "latency": "0 cycles"},
        "sources": {"config": f"SCALE-Sim 3.0 configuration file {source}"},
        "assumed": dict(ASSUMED),
    }


def read_machine_dict(path: str | Path) -> dict[str, Any]:
    """A .cfg file's machine, in the machine file's layout."""
    return machine_dict(read_scalesim_config(path), Path(path).name)
