"""SCALE-Sim 3.0's memory model: the fast model equals the request-by-request reference on any
small layer and configuration, its parts equal their definitions, and the compute figures it
builds on equal the systolic model's under `--assume scalesim`. SCALE-Sim's own figures are in
test_scalesim_memory_golden.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.shape import Shape
from simcore.systolic import SCALESIM, SystolicArray, SystolicDesign, cycles
from simcore.systolic.scalesim_buffers import ReadGeometry
from simcore.systolic.scalesim_config import ScalesimConfig, ScalesimConfigError
from simcore.systolic.scalesim_demand import demand_matrix, prefetch_length, prefetch_order
from simcore.systolic.scalesim_layer import (
    NULL,
    Offsets,
    ScalesimLayer,
    filter_addresses,
    folding,
    ifmap_addresses,
    ofmap_addresses,
)
from simcore.systolic.scalesim_memory import read_stall, scalesim_memory_report
from simcore.systolic.scalesim_memory_reference import reference_memory_report

BASE = ScalesimConfig(
    run_name="memory",
    array_rows=4,
    array_cols=4,
    ifmap_kb=1,
    filter_kb=1,
    ofmap_kb=1,
    dataflow="ws",
    offsets=Offsets(),
    bandwidths=(10,),
    user_bandwidth=True,
    ifmap_bank_bandwidth=10,
    ifmap_banks=1,
    filter_bank_bandwidth=10,
    filter_banks=1,
)


@st.composite
def layers(draw: st.DrawFn, most: int = 24) -> ScalesimLayer:
    if draw(st.booleans()):
        m, n, k = (draw(st.integers(1, most)) for _ in range(3))
        return ScalesimLayer.gemm("g", m, n, k)
    r, s = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stride_h, stride_w = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    return ScalesimLayer(
        "c",
        draw(st.integers(r, r + most // 3)),
        draw(st.integers(s, s + most // 3)),
        r,
        s,
        draw(st.integers(1, max(2, most // 8))),
        draw(st.integers(1, most)),
        stride_h,
        stride_w,
    )


configs = st.builds(
    lambda rows, cols, dataflow, kb, bandwidths: replace(
        BASE,
        array_rows=rows,
        array_cols=cols,
        dataflow=dataflow,
        ifmap_kb=kb[0],
        filter_kb=kb[1],
        ofmap_kb=kb[2],
        bandwidths=(bandwidths[0],),
        ifmap_bank_bandwidth=bandwidths[1],
        filter_bank_bandwidth=bandwidths[2],
    ),
    st.integers(1, 9),
    st.integers(1, 9),
    st.sampled_from(["ws", "os", "is"]),
    st.tuples(*(st.sampled_from([1, 1, 2]) for _ in range(3))),
    st.tuples(*(st.sampled_from([1, 2, 3, 7, 10, 50, 600]) for _ in range(3))),
)


def requests(config: ScalesimConfig, layer: ScalesimLayer) -> int:
    """Requests the reference steps through, about: the demand matrices' entries."""
    f = folding(layer, config.dataflow, config.array_rows, config.array_cols)
    return f.demand_rows * (2 * config.array_rows + config.array_cols)


@st.composite
def spilling(draw: st.DrawFn, budget: int = 30_000) -> tuple[ScalesimConfig, ScalesimLayer]:
    """A configuration and a GEMM too large for its 1 KB SRAMs, drawn to stall: few words per
    cycle, arrays wide enough to keep the reference quick."""
    config = replace(
        draw(configs),
        ifmap_kb=1,
        filter_kb=1,
        ofmap_kb=1,
        bandwidths=(draw(st.sampled_from([1, 2, 3, 5])),),
        ifmap_bank_bandwidth=draw(st.sampled_from([1, 2, 4])),
        filter_bank_bandwidth=draw(st.sampled_from([1, 2, 4])),
        array_rows=draw(st.integers(4, 16)),
        array_cols=draw(st.integers(4, 16)),
    )
    m, n, k = (draw(st.integers(20, 90)) for _ in range(3))
    layer = ScalesimLayer.gemm("g", m, n, k)
    while requests(config, layer) > budget:
        m, n, k = max(m * 3 // 4, 1), max(n * 3 // 4, 1), k
        layer = ScalesimLayer.gemm("g", m, n, k)
    return config, layer


@settings(max_examples=40, deadline=None)
@given(config=configs, layer=layers())
def test_the_fast_model_equals_the_reference(config: ScalesimConfig, layer: ScalesimLayer) -> None:
    assert scalesim_memory_report(config, layer) == reference_memory_report(config, layer)


@settings(max_examples=12, deadline=None)
@given(case=spilling())
def test_the_fast_model_equals_the_reference_when_memory_stalls(
    case: tuple[ScalesimConfig, ScalesimLayer],
) -> None:
    config, layer = case
    assert scalesim_memory_report(config, layer) == reference_memory_report(config, layer)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(config=configs, layer=layers(most=100))
def test_the_fast_model_equals_the_reference_on_larger_layers(
    config: ScalesimConfig, layer: ScalesimLayer
) -> None:
    assert scalesim_memory_report(config, layer) == reference_memory_report(config, layer)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(case=spilling(budget=150_000))
def test_the_fast_model_equals_the_reference_when_larger_layers_stall(
    case: tuple[ScalesimConfig, ScalesimLayer],
) -> None:
    config, layer = case
    assert scalesim_memory_report(config, layer) == reference_memory_report(config, layer)


@settings(max_examples=300, deadline=None)
@given(
    cycle=st.integers(0, 5000),
    before=st.integers(0, 60),
    count=st.integers(1, 9),
    words=st.sampled_from([1024, 2048, 4096]),
    bandwidth=st.integers(1, 80),
)
def test_a_rows_read_stall_is_scalesims_loop(
    cycle: int, before: int, count: int, words: int, bandwidth: int
) -> None:
    g = ReadGeometry(words, bandwidth, 10**6, 10**6)
    finish = cycle + 1  # read_buffer.py: the offset grows by a positive wait twice
    for q in range(before + 1, before + count + 1):
        wait = g.prefetch_end(q) - finish
        finish += 2 * wait if wait > 0 else wait
    assert read_stall(cycle, before, before + count, g) == finish - cycle - 1


@settings(max_examples=60, deadline=None)
@given(config=configs, layer=layers())
def test_the_demand_rows_are_the_systolic_models_cycles(
    config: ScalesimConfig, layer: ScalesimLayer
) -> None:
    f = folding(layer, config.dataflow, config.array_rows, config.array_cols)
    design = SystolicDesign(
        SystolicArray(config.array_rows, config.array_cols), config.dataflow, None, SCALESIM
    )
    assert f.demand_rows == cycles(design, Shape(layer.pixels, layer.window, layer.filters))
    matrices = {
        "ifmap": ifmap_addresses(layer, 0),
        "filter": filter_addresses(layer, 10**7),
        "ofmap": ofmap_addresses(layer, 2 * 10**7),
    }
    for name, matrix in matrices.items():
        demand = demand_matrix(f, name, matrix)
        assert demand.shape[0] == f.demand_rows
        # every fold reads its part: each real entry once per fold that holds it
        real = demand[demand != NULL]
        assert set(real.tolist()) == set(matrix[matrix != NULL].tolist())
        if name != "ofmap":
            order = prefetch_order(f, name, matrix)
            assert len(order) == prefetch_length(f, name, matrix.shape)
            assert sorted(order[order != NULL].tolist()) == sorted(matrix[matrix != NULL].tolist())


def test_an_sram_that_holds_the_layer_never_stalls() -> None:
    config = replace(BASE, ifmap_kb=64, filter_kb=64, ofmap_kb=64, bandwidths=(10,))
    layer = ScalesimLayer.gemm("g", 64, 32, 48)
    for dataflow in ("ws", "os", "is"):
        report = scalesim_memory_report(replace(config, dataflow=dataflow), layer)
        assert report.stall_cycles == 0
        assert report.total_cycles == report.demand_rows - 1
        # the first fill fetches each operand once, in whole lines of 10 words
        assert (
            report.ifmap_dram_reads == -(-prefetch_length_of(config, dataflow, "ifmap") // 10) * 10
        )
        assert report.ofmap_dram_writes == 64 * 32 * (-(-48 // 4) if dataflow != "os" else 1)


def prefetch_length_of(config: ScalesimConfig, dataflow: str, operand: str) -> int:
    layer = ScalesimLayer.gemm("g", 64, 32, 48)
    f = folding(layer, dataflow, config.array_rows, config.array_cols)
    return prefetch_length(f, operand, (64, 48) if operand == "ifmap" else (48, 32))


def test_a_small_sram_stalls_and_reads_operands_again() -> None:
    report = scalesim_memory_report(BASE, ScalesimLayer.gemm("g", 64, 64, 64))
    assert report.stall_cycles > 0
    assert report.total_cycles == report.demand_rows - 1 + report.stall_cycles
    assert report.ifmap_dram_reads > 64 * 64 and report.filter_dram_reads > 64 * 64
    assert report.dram == {
        "a_reads": report.ifmap_dram_reads,
        "b_reads": report.filter_dram_reads,
        "c_writes": report.ofmap_dram_writes,
    }


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"user_bandwidth": False, "bandwidths": ()}, "CALC"),
        ({"ifmap_custom_layout": True}, "IfmapCustomLayout"),
        ({"sparsity": True}, "SparsitySupport"),
        ({"ramulator": True}, "UseRamulatorTrace"),
        ({"ifmap_bank_bandwidth": 10, "ifmap_banks": 3}, "IfmapSRAMBankBandwidth"),
    ],
)
def test_what_the_model_does_not_reproduce_is_refused(change: dict, words: str) -> None:
    with pytest.raises(ScalesimConfigError, match=words):
        scalesim_memory_report(replace(BASE, **change), ScalesimLayer.gemm("g", 4, 4, 4))


def test_a_layer_is_scalesims_lowering() -> None:
    layer = ScalesimLayer("c", 224, 224, 11, 11, 3, 96, 4, 4)
    assert (layer.ofmap_height, layer.pixels, layer.window) == (55, 55 * 55, 363)
    ifmap = ifmap_addresses(layer, 0)
    assert ifmap.shape == (3025, 363) and (ifmap == NULL).any()  # windows past the edge
    gemm = ScalesimLayer.gemm("g", 5, 7, 3)
    assert (gemm.pixels, gemm.window, gemm.filters) == (5, 3, 7)
    assert (ifmap_addresses(gemm, 0) == np.arange(15).reshape(5, 3)).all()
    with pytest.raises(ValueError, match="filter is larger"):
        ScalesimLayer("c", 2, 2, 3, 3, 1, 1)
