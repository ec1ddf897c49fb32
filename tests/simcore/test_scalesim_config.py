"""SCALE-Sim 3.0's .cfg files, read as SCALE-Sim reads them (scalesim/scale_config.py): the
files it publishes, what it ignores, and a one-line error naming the key for what it cannot run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.systolic.scalesim_config import (
    MAX_CONFIG_BYTES,
    ScalesimConfigError,
    parse_scalesim_config,
    read_scalesim_config,
)

# configs/google.cfg of github.com/scalesim-project/scale-sim-v3, as published
GOOGLE = """[general]
run_name = GoogleTPU_v1_os

[architecture_presets]
ArrayHeight:    256
ArrayWidth:     256
IfmapSramSzkB:    6144
FilterSramSzkB:   6144
OfmapSramSzkB:    2048
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Dataflow : os
Bandwidth : 10
ReadRequestBuffer: 512
WriteRequestBuffer: 512

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
SparsitySupport : false
SparseRep : ellpack_block
OptimizedMapping : false
BlockSize : 8
RandomNumberGeneratorSeed : 40

[run_presets]
InterfaceBandwidth: USER
UseRamulatorTrace: False
"""


def test_a_published_config_reads_as_scalesim_reads_it() -> None:
    config = parse_scalesim_config(GOOGLE)
    assert (config.run_name, config.array_rows, config.array_cols) == ("GoogleTPU_v1_os", 256, 256)
    assert (config.ifmap_kb, config.filter_kb, config.ofmap_kb) == (6144, 6144, 2048)
    assert config.dataflow == "os" and config.user_bandwidth and config.bandwidths == (10,)
    assert (config.offsets.filter, config.offsets.ofmap) == (10_000_000, 20_000_000)
    assert (config.ifmap_bank_bandwidth, config.ifmap_banks) == (10, 10)
    assert config.ofmap_bandwidth == 10 and config.memory_unsupported() is None


def test_what_scalesim_ignores_is_ignored() -> None:
    text = GOOGLE.replace("Bandwidth : 10", "bandwidth= 7, 3\nMemoryBanks: 4\nOnChipMemoryBanks: 1")
    text += "\n[extra]\nanything: at all\n; a comment\n# another\n"
    config = parse_scalesim_config(text)
    assert config.bandwidths == (7, 3) and config.ofmap_bandwidth == 7  # only the first is used
    calc = parse_scalesim_config(GOOGLE.replace("USER", "CALC").replace("Bandwidth : 10\n", ""))
    assert not calc.user_bandwidth and "CALC" in (calc.memory_unsupported() or "")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("ArrayHeight:    256", "", "missing key ArrayHeight in [architecture_presets]"),
        ("[layout]", "[Layout]", "missing section [layout]"),
        (
            "ArrayWidth:     256",
            "ArrayWidth: 25.6",
            "ArrayWidth in [architecture_presets] must be an integer",
        ),
        ("IfmapSramSzkB:    6144", "IfmapSramSzkB: -1", "IfmapSramSzkB must be a positive integer"),
        ("Dataflow : os", "Dataflow : rs", "Dataflow must be ws, os or is"),
        (
            "InterfaceBandwidth: USER",
            "InterfaceBandwidth: user",
            "InterfaceBandwidth must be USER or CALC",
        ),
        ("Bandwidth : 10", "Bandwidth : ten", "Bandwidth must be integers"),
        ("Bandwidth : 10", "Bandwidth : 0", "Bandwidth must be positive"),
        (
            "IfmapCustomLayout: False",
            "IfmapCustomLayout: maybe",
            "IfmapCustomLayout in [layout] must be true or false",
        ),
        (
            "ArrayWidth:     256",
            "ArrayWidth: 256\nArrayWidth: 128",
            "option 'arraywidth' in section 'architecture_presets' already exists",
        ),
        (
            "[sparsity]",
            "[network_presets]\n[sparsity]",
            "missing key TopologyCsvLoc in [architecture_presets]",
        ),
        ("[general]", "no section header", "File contains no section headers"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_key(old: str, new: str, message: str) -> None:
    assert old in GOOGLE
    with pytest.raises(ScalesimConfigError) as error:
        parse_scalesim_config(GOOGLE.replace(old, new, 1))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_the_file_is_read_within_a_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "scale.cfg"
    path.write_text(GOOGLE)
    assert read_scalesim_config(path).array_rows == 256
    path.write_text(GOOGLE + "#" * MAX_CONFIG_BYTES)
    with pytest.raises(ScalesimConfigError, match="more than the"):
        read_scalesim_config(path)
    path.write_bytes(b"\xff\xfe[general]")
    with pytest.raises(ScalesimConfigError, match="not UTF-8"):
        read_scalesim_config(path)
    with pytest.raises(ScalesimConfigError, match="cannot read"):
        read_scalesim_config(tmp_path / "missing.cfg")
