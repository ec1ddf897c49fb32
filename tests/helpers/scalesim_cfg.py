"""A SCALE-Sim configuration file's text with every key SCALE-Sim 3.0 reads (its configs/*.cfg
layout), for the tests that write one: the array, SRAM sizes and bandwidth are filled in."""

from __future__ import annotations

TEMPLATE = """[general]
run_name = {name}

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: {ifmap_kb}
FilterSramSzkB: {filter_kb}
OfmapSramSzkB: {ofmap_kb}
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Bandwidth: {bandwidth}
Dataflow: ws
MemoryBanks: 1
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""


def scalesim_cfg(
    rows: object,
    cols: object,
    *,
    name: str = "test",
    ifmap_kb: int = 64,
    filter_kb: int = 64,
    ofmap_kb: int = 64,
    bandwidth: int = 10,
) -> str:
    """The configuration's text (`rows` and `cols` as written: a test may give any text)."""
    return TEMPLATE.format(
        name=name,
        rows=rows,
        cols=cols,
        ifmap_kb=ifmap_kb,
        filter_kb=filter_kb,
        ofmap_kb=ofmap_kb,
        bandwidth=bandwidth,
    )
