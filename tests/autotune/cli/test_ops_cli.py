"""`autotune ops`: a network's operations listed (kind, MACs, elements, layers, which oracle
times each), the GA-1 end-to-end report, and bad input as one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_error
from helpers.onnx_models import save, small_cnn

from autotune.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_listing_of_gpt2(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "ops", "gpt2")
    assert "h.softmax" in out and "softmax" in out
    assert "MACs: 32,832,159,744" in out and "untimed: none" in out


def test_json_one_object_per_operation(capsys: pytest.CaptureFixture[str]) -> None:
    listing = json.loads(_run(capsys, "ops", "bert_base", "--json"))
    ops = listing["operations"]
    assert all({"kind", "macs", "elements", "layers"} <= set(op) for op in ops)
    assert sum(op["macs"] * op["count"] for op in ops) == listing["macs"]
    assert listing["untimed"] == []
    tanh = next(op for op in ops if op["name"] == "pooler.tanh")
    assert tanh["timed_by"] == "ga1, systolic"
    gemm = next(op for op in ops if op["kind"] == "gemm")
    assert "ga1" in gemm["timed_by"]
    view = next(op for op in ops if op["kind"] == "permute")
    assert view["timed_by"].startswith("free")


def test_llama_decode_settings(capsys: pytest.CaptureFixture[str]) -> None:
    listing = json.loads(
        _run(capsys, "ops", "llama2_7b", "--phase", "decode", "--seq", "512", "--json")
    )
    read = next(op for op in listing["operations"] if op["kind"] == "kv_read")
    assert read["elements"] == 32 * 512 * 128 and read["count"] == 32


def test_onnx_every_node_listed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = save(small_cnn(), tmp_path / "cnn.onnx")
    listing = json.loads(_run(capsys, "ops", str(path), "--input-shape", "x=1x3x32x32", "--json"))
    layers = [layer for op in listing["operations"] for layer in op["layers"]]
    assert sorted(layers) == sorted(["conv1", "relu1", "dw", "pool", "flatten", "fc"])
    pool = next(op for op in listing["operations"] if op["name"] == "pool")
    assert listing["untimed"] == [] and pool["timed_by"] == "ga1, systolic"


def test_ga1_report_json_and_chart(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    chart = tmp_path / "gpt2.png"
    report = json.loads(
        _run(
            capsys, "ops", "gpt2", "--seq", "32", "--oracle", "ga1", "--json", "--chart", str(chart)
        )
    )
    assert chart.read_bytes().startswith(b"\x89PNG")
    assert report["untimed"] == []
    ops = report["operations"]
    assert all(op["timed"] for op in ops)
    assert report["total_cycles"] == sum(op["total_cycles"] for op in ops)
    non_gemm = sum(op["total_cycles"] for op in ops if op["kind"] not in ("gemm", "matmul"))
    assert report["non_gemm_share"] == pytest.approx(non_gemm / report["total_cycles"])
    assert 0 < report["non_gemm_share"] < 1
    assert sum(b["share"] for b in report["blocks"]) == pytest.approx(1.0)
    products = [op for op in ops if op["kind"] in ("gemm", "matmul")]
    assert all(op["ratio_to_bound"] >= 1 for op in products)  # a bound holds


def test_ga1_report_names_untimed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from helpers.onnx_models import model
    from onnx import helper

    nodes = [helper.make_node("Sin", ["x"], ["y"], name="wave")]
    path = save(model(nodes, {"x": [4, 8]}, ["y"]), tmp_path / "sin.onnx")
    out = _run(capsys, "ops", str(path), "--oracle", "ga1")
    assert "untimed (1, not in the total): wave (Sin)" in out
    out = _run(capsys, "ops", "mobilenet_v2", "--oracle", "ga1")
    assert "untimed: none" in out and "non-GEMM share of cycles" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ops", "transformer_b1", "--seq", "4"], "--seq applies to a bundled network"),
        (["ops", "gpt2", "--chart", "x.png"], "--chart draws the --oracle report"),
        (["ops", "gpt2", "--seq", "0"], "--seq must be a positive integer"),
        (["ops", "gpt2", "--phase", "decode"], "--phase: network gpt2 takes --seq, --batch only"),
        (["ops", "nothing_here"], "no bundled workload of that name"),
        (["ops", "CNN"], "--input-shape x=1x3x32x32"),
        (["ops", "gpt2", "--oracle", "ga1", "--machine", "bogus=1"], "--machine bogus=1"),
        (["ops", "gpt2", "--oracle", "systolic"], "(give --arch NAME)"),
        (["ops", "gpt2", "--oracle", "ga1", "--arch", "tpuv4i"], "--arch applies to --oracle"),
        (["ops", "gpt2", "--oracle", "systolic", "--arch", "nope"], "--arch nope: arch nope"),
        (["ops", "gpt2", "--oracle", "ga1", "--clock", "fast"], "--clock fast"),
        (
            [
                "ops",
                "gpt2",
                "--oracle",
                "systolic",
                "--arch",
                "gemmini",
                "--machine",
                "vector.lanes=0",
            ],
            "--arch gemmini --machine vector.lanes=0: vector.lanes: must be from 1 to 65536",
        ),
    ],
)
def test_bad_input_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    cnn = str(save(small_cnn(), tmp_path / "cnn.onnx"))  # its batch is dynamic
    assert message in run_error(capsys, [cnn if a == "CNN" else a for a in argv])


def test_systolic_report_times_every_operation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    chart = tmp_path / "gpt2.png"
    argv = ["ops", "gpt2", "--seq", "32", "--oracle", "systolic", "--arch", "gemmini"]
    report = json.loads(_run(capsys, *argv, "--json", "--chart", str(chart)))
    assert chart.read_bytes().startswith(b"\x89PNG")
    ops = report["operations"]
    assert report["untimed"] == [] and all(op["timed"] for op in ops)
    assert 0 < report["non_gemm_share"] < 1
    vector = [op for op in ops if op["kind"] in ("softmax", "layernorm", "gelu", "bias")]
    assert vector and all(op["energy_pj"] > 0 and op["dram_words"] > 0 for op in vector)
    assert all(op["ratio_to_bound"] >= 1 for op in ops if op["ratio_to_bound"] is not None)
    assert report["clock_hz"] == 1e9 and report["tokens"] == 32
    assert report["tokens_per_second"] == pytest.approx(32 / report["seconds"])
    assert report["joules_per_token"] == pytest.approx(report["energy_pj"] * 1e-12 / 32)


def test_an_onnx_model_on_a_systolic_machine(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = save(small_cnn(), tmp_path / "cnn.onnx")
    argv = ["ops", str(path), "--input-shape", "x=1x3x32x32", "--oracle", "systolic"]
    report = json.loads(_run(capsys, *argv, "--arch", "edge-npu", "--json"))
    assert report["untimed"] == [] and report["tokens"] is None
    pool = next(op for op in report["operations"] if op["kind"] == "pool")
    assert pool["cycles"] > 0 and pool["schedule"].startswith("vector unit")


def test_decode_rates_and_the_kv_cache(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ops", "llama2_7b", "--phase", "decode", "--seq", "64", "--oracle", "ga1"]
    report = json.loads(_run(capsys, *argv, "--clock", "2 GHz", "--json"))
    assert report["tokens"] == 1 and report["clock_hz"] == 2e9
    assert report["kv_cache_words"] == 2 * 32 * 64 * 4096  # K and V, 32 layers, 64 tokens
    assert report["seconds_per_token"] == pytest.approx(report["total_cycles"] / 2e9)
    out = _run(capsys, *argv)
    assert "tokens/s" in out and "J/token" in out and "KV cache read a run" in out


@pytest.mark.slow
def test_tuned_products_from_a_tune_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    workload = tmp_path / "one.csv"
    workload.write_text("name,shape,weight\nsmall,16x24x32,2\n")
    results = tmp_path / "results"
    argv = ["tune", "--workload", str(workload), "--trials", "2", "--results", str(results)]
    assert main(argv) == 0
    capsys.readouterr()
    (run,) = [p for p in results.iterdir() if (p / "workload.parquet").is_file()]
    report = json.loads(
        _run(capsys, "ops", str(workload), "--oracle", "ga1", "--tuned", str(run), "--json")
    )
    (op,) = report["operations"]
    assert op["method"] == "tuned, verified" and op["count"] == 2
    assert op["total_cycles"] == 2 * op["cycles"]
    message = run_error(
        capsys,
        ["ops", str(workload), "--oracle", "ga1", "--machine", "slots=16", "--tuned", str(run)],
    )
    assert "tuned on another machine (slots=64)" in message
