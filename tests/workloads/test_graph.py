"""The network model: operations validated against their kind's declaration, tensors connected,
GEMM lists and graphs of GEMMs derived both ways."""

from __future__ import annotations

import pytest

from simcore.shape import Shape
from workloads.graph import KINDS, Operation, connect
from workloads.model import Gemm, Workload, WorkloadError
from workloads.network import gemm_graph, gemm_workload, load_graph


def test_each_kind_declares_its_macs_and_elements() -> None:
    assert Operation("p", "gemm", (4, 5, 6)).macs == 120
    assert Operation("p", "gemm", (4, 5, 6)).elements == 24
    assert Operation("a", "matmul", (3, 4, 5, 6)).macs == 360
    assert Operation("c", "conv", (2, 4, 5, 6)).elements == 48
    assert Operation("s", "softmax", (2, 3, 4)).macs == 0
    assert Operation("s", "softmax", (2, 3, 4)).elements == 24
    assert Operation("k", "shape", ()).elements == 0
    assert {kind.family for kind in KINDS.values()} == {
        "product",
        "vector",
        "view",
        "copy",
        "shape",
        "other",
    }


@pytest.mark.parametrize(
    ("kind", "dims", "message"),
    [
        ("nope", (1,), "unknown kind 'nope'"),
        ("gemm", (1, 2), "3 positive integers"),
        ("softmax", (1, 0, 2), "3 positive integers"),
        ("reshape", (True,), "1 positive integers"),
    ],
)
def test_bad_operations_are_refused(kind: str, dims: tuple[int, ...], message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        Operation("x", kind, dims)


def test_count_must_be_positive() -> None:
    with pytest.raises(WorkloadError, match="count must be > 0"):
        Operation("x", "gemm", (1, 1, 1), count=0)


def test_connect_records_producers_and_consumers() -> None:
    ops = [
        Operation("mm", "gemm", (2, 3, 4), ("a", "b"), ("c",)),
        Operation("sm", "softmax", (1, 2, 4), ("c",), ("d",)),
        Operation("ln", "layernorm", (1, 2, 4), ("c",), ("e",), count=3),
    ]
    shapes = {t: ((2, 4), 2) for t in "acde"} | {"b": ((3, 4), 4)}
    graph = connect("g", ops, shapes)
    assert graph.tensors["c"].producer == "mm"
    assert graph.tensors["c"].consumers == ("sm", "ln")
    assert graph.tensors["a"].producer == ""
    assert graph.tensors["b"].bytes == 48
    assert graph.macs == 24 and graph.counts() == {"layernorm": 3, "gemm": 1, "softmax": 1}


def test_connect_refuses_a_broken_graph() -> None:
    two = [
        Operation("x", "relu", (1, 1, 1), (), ("t",)),
        Operation("y", "relu", (1, 1, 1), (), ("t",)),
    ]
    with pytest.raises(WorkloadError, match="written by 'x' and 'y'"):
        connect("g", two, {"t": ((1,), 2)})
    with pytest.raises(WorkloadError, match="has no shape"):
        connect("g", two[:1], {})
    with pytest.raises(WorkloadError, match="used twice"):
        connect("g", [two[0], two[0]], {"t": ((1,), 2)})


def test_gemm_list_and_graph_of_gemms_round_trip() -> None:
    workload = Workload("w", (Gemm("a", Shape(2, 3, 4), 2.5), Gemm("b", Shape(5, 6, 7), 3)))
    graph = gemm_graph(workload)
    assert [op.kind for op in graph.operations] == ["gemm", "gemm"]
    assert graph.macs == 2.5 * 24 + 3 * 210
    back = gemm_workload(graph)
    assert [(g.shape, g.weight) for g in back.gemms] == [
        (g.shape, g.weight) for g in workload.gemms
    ]


def test_a_gemm_file_reads_as_a_graph_of_gemms() -> None:
    graph = load_graph("transformer_b1")
    assert all(op.kind == "gemm" for op in graph.operations)
    with pytest.raises(WorkloadError, match="apply to bundled networks only"):
        load_graph("transformer_b1", seq=3)


def test_graph_products_merge_as_a_tune_run_takes_them() -> None:
    graph = load_graph("gpt2", seq=256)
    workload = gemm_workload(graph)
    assert sum(g.macs * g.weight for g in workload.gemms) == graph.macs
    assert len(workload.gemms) == len({g.shape for g in workload.gemms})


def test_a_graph_network_loads_as_its_gemms() -> None:
    from workloads import load_workload
    from workloads.networks import build

    loaded = load_workload("gpt2")
    assert loaded.gemms == gemm_workload(build("gpt2")).gemms
    with pytest.raises(WorkloadError, match="built as graphs: gpt2, bert_base"):
        load_workload("no_such_network")


def test_a_scalesim_topology_reads_as_a_graph_of_gemms(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "net.csv"
    path.write_text(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
        "Num Filter, Strides,\nConv1,224,224,11,11,3,96,4,\n"
    )
    graph = load_graph(str(path))
    assert [op.kind for op in graph.operations] == ["gemm"] and graph.macs > 0
