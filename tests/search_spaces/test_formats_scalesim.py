"""SCALE-Sim topology CSVs: its column meaning and output-size formula (scalesim/topology_utils.py
in SCALE-Sim 3.0), both formats, the irregular files its repository publishes, and the header
that tells them from autotune's own CSV."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore.shape import Shape
from workloads import WorkloadError, load_workload
from workloads.scalesim import output_size, topology_kind

CONV_HEADER = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
    "Num Filter, Strides,"
)
# Rows as SCALE-Sim's topologies/conv_nets/Resnet50.csv writes them: an annotated header, a row
# of empty cells, trailing annotation columns, and a last row without a trailing comma.
RESNET_LIKE = (
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
    "Strides,,,Eh,Ew,e2\n"
    ",,,,,,,,,,,,\n"
    "Conv1,224,224,7,7,3,64,2,,,110,110,12100\n"
    "CB2a_1,56,56,1,1,64,64,1,,,,,\n"
    "CB2a_2,56,56,3,3,64,64,1,,,,,\n"
    "IB2b_2,56,56,3,3,64,64,1,,,,,\n"
    "FC6,1,1,1,1,2048,1000,1,,,,,"
)


def _write(tmp_path: Path, text: str, name: str = "topo.csv", encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_scalesim_output_size_counts_a_window_past_the_edge() -> None:
    assert (
        output_size(224, 7, 2) == 110
    )  # ceil((224 - 7 + 2) / 2), not floor((224 - 7) / 2) + 1 = 109
    assert (
        output_size(224, 11, 4) == 55 and output_size(13, 3, 1) == 11 and output_size(1, 1, 1) == 1
    )


@given(ifmap=st.integers(1, 300), filt=st.integers(1, 11), stride=st.integers(1, 5))
def test_output_size_is_the_ceiling_formula(ifmap: int, filt: int, stride: int) -> None:
    if filt <= ifmap:
        import math

        assert output_size(ifmap, filt, stride) == int(math.ceil((ifmap - filt + stride) / stride))


def test_the_resnet_file_as_published(tmp_path: Path) -> None:
    workload = load_workload(_write(tmp_path, RESNET_LIKE))
    assert [(g.name, g.shape, g.weight, g.layers) for g in workload.gemms] == [
        ("Conv1", Shape(110 * 110, 7 * 7 * 3, 64), 1.0, ("Conv1",)),
        ("CB2a_1", Shape(56 * 56, 64, 64), 1.0, ("CB2a_1",)),
        ("CB2a_2", Shape(54 * 54, 3 * 3 * 64, 64), 2.0, ("CB2a_2", "IB2b_2")),  # merged, names kept
        ("FC6", Shape(1, 2048, 1000), 1.0, ("FC6",)),
    ]
    assert workload.summary == ("SCALE-Sim convolution topology: 5 layers",)


@pytest.mark.parametrize(
    "newline, bom", [("\n", False), ("\r\n", False), ("\r\n", True), ("\n", True)]
)
def test_line_ends_and_byte_order_mark(tmp_path: Path, newline: str, bom: bool) -> None:
    text = ("\ufeff" if bom else "") + newline.join(
        [CONV_HEADER, "Conv1 ,224 ,224 ,11 ,11 ,3 ,96 ,4 ,", "", "Conv2,27,27,5,5,96,256,1", ""]
    )
    gemms = load_workload(_write(tmp_path, text)).gemms
    assert [g.shape for g in gemms] == [Shape(55 * 55, 363, 96), Shape(23 * 23, 2400, 256)]


def test_gemm_format_columns_are_m_n_k(tmp_path: Path) -> None:
    text = "Layer,M,N,K,\r\nQKT,1024,1024,64,\r\nLinear1,1024,4800,1600,\r\nPW-FF-L2,1024,1600,3072"
    workload = load_workload(_write(tmp_path, text))
    assert [(g.name, g.shape, g.source) for g in workload.gemms] == [
        ("QKT", Shape(1024, 64, 1024), "GEMM"),
        ("Linear1", Shape(1024, 1600, 4800), "GEMM"),
        ("PW-FF-L2", Shape(1024, 3072, 1600), "GEMM"),
    ]


def test_gemm_format_with_a_sparsity_column(tmp_path: Path) -> None:
    text = "Layer, M, N, K, Sparsity,\nfc1, 8, 16, 32, 2:4,\n"
    assert load_workload(_write(tmp_path, text)).gemms[0].shape == Shape(8, 32, 16)


def test_depthwise_layers_run_once_per_channel(tmp_path: Path) -> None:
    text = f"{CONV_HEADER}\nConv1_DP,112,112,3,3,32,1,1,\nConv2,112,112,3,3,32,1,1,\n"
    dp, plain = load_workload(_write(tmp_path, text)).gemms
    assert (dp.shape, dp.weight, dp.source) == (Shape(110 * 110, 9, 1), 32.0, "Conv-DP")
    assert (plain.shape, plain.weight, plain.source) == (Shape(110 * 110, 288, 1), 1.0, "Conv")


def test_kinds_are_told_apart_by_header() -> None:
    assert topology_kind(CONV_HEADER + "\n") == "conv"
    assert topology_kind("layer,  m, n,k\n") == "gemm"
    assert topology_kind("name,shape,weight\na,8x8x8,1\n") is None
    assert topology_kind("# a comment\n\nname,shape,weight\n") is None


@pytest.mark.parametrize(
    "header, kind",
    [  # headers as files in SCALE-Sim's repository spell them; it reads columns by position
        (
            "Layer, IFMAP Width, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
            "Strides,",
            "conv",
        ),
        (
            "Layer name,Ifmap height,ifmap width,filter height,filter width,channel,num filters,"
            "strides,batch size,",
            "conv",
        ),
        ("Layer Name, M, N, K, Sparsity,", "gemm"),
        ("L,M,N,K,", "gemm"),
    ],
)
def test_header_spellings_scalesim_publishes(tmp_path: Path, header: str, kind: str) -> None:
    assert topology_kind(header + "\n") == kind
    row = "c1,10,12,3,3,4,8,1," if kind == "conv" else "c1,80,8,36,"
    assert load_workload(_write(tmp_path, f"{header}\n{row}\n")).gemms[0].shape == Shape(80, 36, 8)


def test_a_stride_width_column_as_scalesim_writes_it(tmp_path: Path) -> None:
    header = (
        "Layer name,IFMAP height,IFMAP width,Filter height,Filter width,Channels,Num filter,"
        "Stride height,Stride width,"
    )
    rows = "wide,10,10,3,3,4,8,1,2,\nsame,10,10,3,3,4,16,2,\n"
    wide, same = load_workload(_write(tmp_path, f"{header}\n{rows}")).gemms
    assert wide.shape == Shape(8 * 5, 36, 8)  # rows at stride 1, columns at stride 2
    assert same.shape == Shape(5 * 5, 36, 16)  # no width given: the one stride both ways


def test_a_header_that_names_no_layer_is_not_a_topology(tmp_path: Path) -> None:
    assert topology_kind("name,M,N,K\n") is None
    with pytest.raises(WorkloadError, match="or a SCALE-Sim topology's"):
        load_workload(_write(tmp_path, "id, IFMAP Height, IFMAP Width\n"))


def test_autotune_csv_still_reads(tmp_path: Path) -> None:
    gemms = load_workload(_write(tmp_path, "# mine\nname,shape,weight\na,8x16x32,2\n")).gemms
    assert [(g.name, g.shape, g.weight) for g in gemms] == [("a", Shape(8, 16, 32), 2.0)]


@pytest.mark.parametrize(
    "row, message",
    [
        ("Conv1,224,224,7,7,3,64", "expected 8 columns"),
        ("Conv1,224,224,7,x,3,64,2,", "Filter Width must be a whole number"),
        ("Conv1,224,224,7,7,0,64,2,", "Channels must be positive"),
        ("Conv1,5,5,7,7,3,64,1,", "filter is larger than"),
    ],
)
def test_bad_rows(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=message) as err:
        load_workload(_write(tmp_path, f"{CONV_HEADER}\n{row}\n"))
    assert "line 2" in str(err.value)


def test_an_empty_topology(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="empty"):
        load_workload(_write(tmp_path, CONV_HEADER + "\n,,,,,,,,\n"))
