"""Smoke tests of `autotune systolic --arch`: a machine with its memory system (one GEMM and a
workload, energy, area, --tech), a SCALE-Sim .cfg against SCALE-Sim's own figures
(tests/simcore/golden/scalesim_memory.json), and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autotune.cli.main import main
from simcore.energy import load_technology
from simcore.energy.memory import memory_cost
from simcore.energy.systolic import systolic_cost_of
from simcore.energy.technology import shipped_table
from simcore.shape import Shape
from simcore.systolic.archs import load_arch
from simcore.systolic.blocked import BlockSchedule, MemoryRun, evaluate
from simcore.systolic.blocked.batch import evaluate_batch, lane_design
from simcore.systolic.blocked.schedule import Batch
from simcore.systolic.model import Mapping, SystolicArray, SystolicDesign

GOLDEN = json.loads(
    (Path(__file__).parents[2] / "simcore" / "golden" / "scalesim_memory.json").read_text()
)
COLUMNS = GOLDEN["provenance"]["columns"]
SHAPE = ["--shape", "64x256x256", "--arch", "gemmini"]


def json_lines(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict]:
    assert main(argv) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _rerun(out: dict, arch: str) -> MemoryRun:
    """The reported schedule evaluated again, outside the command."""
    machine = load_arch(arch)
    s = out["schedule"]
    schedule = BlockSchedule(
        s["bm"], s["bk"], s["bn"], s["order"], tuple(s["buffering"]), tuple(s["span"])
    )
    design = SystolicDesign(machine.array, machine.dataflow)
    return evaluate(machine, design, schedule, Shape(out["m"], out["k"], out["n"]))


# --- a machine with its memory ---------------------------------------------------------------


def test_one_gemm_on_a_bundled_machine(capsys: pytest.CaptureFixture[str]) -> None:
    (out,) = json_lines(capsys, ["systolic", *SHAPE, "--json"])
    run = _rerun(out, "gemmini")
    assert out["arch"] == "gemmini" and out["array"] == "16x16" and out["dataflow"] == "ws"
    assert out["cycles"] == run.cycles and out["stall_cycles"] == run.stall_cycles
    dram = run.counts.dram
    assert (out["dram"]["a_reads"], out["dram"]["b_reads"]) == (dram.a_reads, dram.b_reads)
    assert out["dram"]["c_final_writes"] == 64 * 256
    assert out["dram"]["a_reads"] >= 64 * 256 and out["dram"]["b_reads"] >= 256 * 256
    cost = memory_cost(run, load_technology())
    assert out["energy_pj"] == pytest.approx(cost.energy_pj)
    assert out["area_mm2"] == pytest.approx(cost.area_mm2) and out["area_mm2"] > 0
    assert any(line.startswith("DRAM reads of B") for line in out["energy_lines"]["off_chip"])
    assert out["energy_breakdown"]["off_chip"] > 0
    assert out["bound"]["cycles"] <= out["cycles"] and out["bound_ratio"] >= 1
    assert out["bound"]["by"] in ("compute", "array", "ports", "memory")
    assert 1 <= out["schedule"]["evaluated"] <= 400


def test_one_gemm_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["systolic", *SHAPE, "--evaluations", "20"]) == 0
    out = capsys.readouterr().out
    for word in ("gemmini: 16x16 ws", "schedule", "stalled", "DRAM", "bound", "energy", "area"):
        assert word in out
    assert "best of 20 evaluated" in out and "off chip (DRAM)" in out


def test_machine_changes_the_architecture(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["systolic", "--shape", "1x1024x1024", "--arch", "tpu-v1", "--json"]
    (base,) = json_lines(capsys, argv)
    (fast,) = json_lines(capsys, [*argv, "--machine", "dram.bandwidth=68 GB/s,dram.latency=0 ns"])
    assert fast["dram_words_per_cycle"] == pytest.approx(2 * base["dram_words_per_cycle"])
    assert fast["dram_latency"] == 0 and fast["cycles"] < base["cycles"]


def test_tech_prices_the_dram_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = shipped_table("default_45nm.toml").read_text()
    assert "\ndram_read_pj = 162.5\n" in text
    doubled = tmp_path / "doubled.toml"
    doubled.write_text(text.replace("\ndram_read_pj = 162.5\n", "\ndram_read_pj = 325.0\n"))
    argv = ["systolic", *SHAPE, "--evaluations", "5", "--json"]
    (base,) = json_lines(capsys, argv)
    (dear,) = json_lines(capsys, [*argv, "--tech", str(doubled)])
    assert dear["cycles"] == base["cycles"]
    lines, dear_lines = base["energy_lines"]["off_chip"], dear["energy_lines"]["off_chip"]
    reads = [key for key in lines if key.startswith("DRAM reads")]
    assert reads and all(dear_lines[k] == pytest.approx(2 * lines[k]) for k in reads)
    assert dear["energy_breakdown"]["on_chip"] == pytest.approx(base["energy_breakdown"]["on_chip"])


def test_a_workload_totals_tokens_and_joules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    workload = tmp_path / "two.toml"
    workload.write_text(
        '[[gemm]]\nname = "up"\nshape = "1x256x512"\nweight = 2\n\n'
        '[[gemm]]\nname = "down"\nshape = "1x512x256"\nweight = 1\n'
    )
    argv = ["systolic", "--workload", str(workload), "--arch", "gemmini", "--evaluations", "30"]
    *rows, total = json_lines(capsys, [*argv, "--tokens", "4", "--layers", "2", "--json"])
    assert [r["name"] for r in rows] == ["up", "down"] and total["total"]
    cycles = 2 * rows[0]["cycles"] + rows[1]["cycles"]
    assert total["cycles"] == cycles
    assert total["seconds"] == pytest.approx(cycles / 1e9)  # gemmini's clock: 1 GHz
    assert total["tokens_per_second"] == pytest.approx(4 / (2 * total["seconds"]))
    energy = 2 * rows[0]["energy_pj"] + rows[1]["energy_pj"]
    assert total["joules_per_token"] == pytest.approx(2 * energy * 1e-12 / 4)
    assert total["stall_cycles"] == 2 * rows[0]["stall_cycles"] + rows[1]["stall_cycles"]
    assert total["dram"]["b_reads"] >= 2 * 256 * 512 + 512 * 256
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "tokens/s" in text and "J/token" in text and "total (weighted)" in text


def test_the_heads_of_one_operation_are_timed_together(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    workload = tmp_path / "heads.toml"
    workload.write_text(
        '[[gemm]]\nname = "scores"\nshape = "1x128x512"\nweight = 8\nlayers = ["attn/scores"]\n\n'
        '[[gemm]]\nname = "proj"\nshape = "1x128x512"\nweight = 2\nlayers = ["q", "k"]\n'
    )
    argv = ["systolic", "--workload", str(workload), "--arch", "tpuv4i", "--evaluations", "20"]
    heads, proj, total = json_lines(capsys, [*argv, "--json"])
    assert (heads["runs"], proj["runs"], proj["lanes"]) == (8, 1, 1)
    assert total["gemms"] == 10 and total["macs"] == 10 * 128 * 512
    assert total["cycles"] == heads["cycles"] + 2 * proj["cycles"]
    machine = load_arch("tpuv4i")
    s = heads["schedule"]
    schedule = BlockSchedule(
        s["bm"], s["bk"], s["bn"], s["order"], tuple(s["buffering"]), tuple(s["span"])
    )
    design = lane_design(machine, SystolicDesign(machine.array, "ws"), heads["lanes"])
    batch = Batch(8, heads["lanes"])
    again = evaluate_batch(machine, design, schedule, Shape(1, 128, 512), batch, "reference")
    assert heads["cycles"] == again.cycles and heads["bound"]["cycles"] == again.bound.cycles
    assert heads["dram"]["b_reads"] == 8 * 128 * 512
    assert heads["weights_over_link"] == -(-8 * 128 * 512 * 2 * 1050 // 614000) + 158
    assert main(argv) == 0
    assert "8 on " in capsys.readouterr().out


def test_the_array_alone_is_costed_too(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["systolic", "--shape", "64x64x64", "--array", "8x8", "--dataflow", "os"]
    (out,) = json_lines(capsys, [*argv, "--json"])
    design = SystolicDesign(SystolicArray(8, 8), "os").with_mapping(Mapping(8, 8, "col-outer"))
    cost = systolic_cost_of(design, Shape(64, 64, 64), load_technology(), out["cycles"])
    assert out["energy_pj"] == pytest.approx(cost.energy_pj)
    assert out["area_mm2"] == pytest.approx(cost.area_mm2)
    assert out["dataflows"]["os"]["energy_breakdown"]["compute"] > 0
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "energy (nJ)" in text and "area (mm2)" in text and "45 nm" in text


# --- SCALE-Sim's configuration ---------------------------------------------------------------


def _case(topology: str, dataflow: str) -> dict:
    return next(
        c
        for c in GOLDEN["cases"]
        if c["topology"] == topology and c["config"]["dataflow"] == dataflow
    )


def _write_case(case: dict, folder: Path) -> tuple[Path, Path]:
    cfg = folder / "scale.cfg"
    cfg.write_text(GOLDEN["provenance"]["config_template"].format(**case["config"]))
    topology = folder / "topology.csv"
    if case["gemm"]:  # a GEMM row M, N, K reads as M, K, 1, K, 1, N, 1, 1
        lines = ["Layer, M, N, K,"]
        lines += [
            f"{x['name']}, {x['row'][0]}, {x['row'][5]}, {x['row'][1]}," for x in case["layers"]
        ]
    else:
        lines = [
            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
            "Num Filter, Strides, Stride width,"
        ]
        lines += [f"{x['name']}, {', '.join(map(str, x['row']))}," for x in case["layers"]]
    topology.write_text("\n".join(lines) + "\n")
    return cfg, topology


@pytest.mark.parametrize(
    ("topology", "dataflow"),
    [
        ("conv_nets/Resnet_test.csv", "ws"),
        ("conv_nets/Resnet_test.csv", "os"),
        ("conv_nets/Resnet_test.csv", "is"),
        ("dlrm/dlrm_fwd.csv", "ws"),
        ("GEMM_mnk/gnmt.csv", "is"),
    ],
)
def test_a_scalesim_config_runs_what_scalesim_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, topology: str, dataflow: str
) -> None:
    case = _case(topology, dataflow)
    cfg, csv = _write_case(case, tmp_path)
    argv = ["systolic", "--workload", str(csv), "--arch", str(cfg), "--assume", "scalesim"]
    *rows, total = json_lines(capsys, [*argv, "--json"])
    assert len(rows) == len(case["layers"]) and total["total"]
    for row, layer in zip(rows, case["layers"], strict=True):
        theirs = dict(zip(COLUMNS, layer["figures"], strict=True))
        assert row["name"] == layer["name"]
        assert row["cycles"] == theirs["Total Cycles"]
        assert row["stall_cycles"] == theirs["Stall Cycles"]
        assert row["cycles_with_prefetch"] == theirs["Total Cycles (incl. prefetch)"]
        assert row["dram"] == {
            "a_reads": theirs["DRAM IFMAP Reads"],
            "b_reads": theirs["DRAM Filter Reads"],
            "c_writes": theirs["DRAM OFMAP Writes"],
        }
    assert total["cycles"] == sum(r["cycles"] for r in rows)
    assert total["dram"]["b_reads"] == sum(r["dram"]["b_reads"] for r in rows)
    assert main(argv) == 0
    assert "SCALE-Sim 3.0 memory model" in capsys.readouterr().out


def test_a_scalesim_config_with_one_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    case = _case("GEMM_mnk/gnmt.csv", "is")
    cfg, _ = _write_case(case, tmp_path)
    layer = case["layers"][0]
    m, k, n = layer["row"][0], layer["row"][1], layer["row"][5]
    argv = ["systolic", "--shape", f"{m}x{k}x{n}", "--arch", str(cfg), "--assume", "scalesim"]
    (out,) = json_lines(capsys, [*argv, "--json"])
    theirs = dict(zip(COLUMNS, layer["figures"], strict=True))
    assert out["cycles"] == theirs["Total Cycles"] and out["stall_cycles"] == theirs["Stall Cycles"]


# --- one-line errors -------------------------------------------------------------------------


def _config(tmp_path: Path, replace: tuple[str, str] | None = None) -> str:
    text = GOLDEN["provenance"]["config_template"].format(
        **_case("dlrm/dlrm_fwd.csv", "ws")["config"]
    )
    if replace is not None:
        assert replace[0] in text
        text = text.replace(*replace)
    path = tmp_path / "bad.cfg"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("ArrayHeight: 8\n", ""), "missing key ArrayHeight"),
        (("IfmapSramSzkB: 1\n", "IfmapSramSzkB: -4\n"), "IfmapSramSzkB must be a positive"),
        (("\nBandwidth: 2\n", "\nBandwidth: 0\n"), "Bandwidth must be positive"),
        (("InterfaceBandwidth: USER", "InterfaceBandwidth: CALC"), "CALC is not reproduced"),
        (("[layout]", "[layouts]"), "missing section [layout]"),
    ],
)
def test_a_bad_scalesim_config_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: tuple[str, str], says: str
) -> None:
    cfg = _config(tmp_path, change)
    argv = ["systolic", "--shape", "8x8x8", "--arch", cfg, "--assume", "scalesim"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"autotune: error: --arch {cfg}: ") and says in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "extra",
    [
        ["--shape", "8x8x8", "--arch", "no-such-machine"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--array", "4x4"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--hbm-words", "2"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--check"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--dataflow", "os"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--evaluations", "0"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--tech", "/no/such/table.toml"],
        ["--shape", "8x8x8x8", "--arch", "gemmini"],
        ["--arch", "gemmini"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--machine", "dram.speed=3"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--machine", "dram.bandwidth=-1 GB/s"],
        ["--shape", "8x8x8", "--array", "4x4", "--machine", "dram.latency=3 cycles"],
        ["--shape", "8x8x8", "--arch", "CFG", "--assume", "scalesim", "--machine", "a.b=1"],
        ["--shape", "10000000x10000000x10000000", "--arch", "tpu-v1"],
        ["--shape", "8x8x8", "--arch", "gemmini", "--tokens", "2"],
        ["--shape", "8x8x8", "--array", "4x4", "--tech", "/no/such/table.toml"],
        ["--workload", "resnet50", "--array", "4x4", "--tech", "TECH"],
        ["--shape", "8x8x8", "--array", "4x4", "--layers", "32"],
        ["--shape", "8x8x8"],
        ["--shape", "8x8x8", "--arch", "CFG"],
        ["--shape", "8x8x8", "--arch", "CFG", "--assume", "scalesim", "--tokens", "2"],
        ["--shape", "8x8x8", "--arch", "CFG", "--assume", "scalesim", "--dataflow", "os"],
        ["--shape", "8x8x8", "--arch", "missing.cfg", "--assume", "scalesim"],
        ["--shape", "8x8x8", "--arch", "ARCH"],
    ],
)
def test_bad_arch_input_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str]
) -> None:
    arch = tmp_path / "bad.toml"
    arch.write_text('name = "bad"\n[array]\nrows = 4\ncols = 4\ndataflow = "ws"\n')
    tech = shipped_table("default_45nm.toml")
    named = {"CFG": _config(tmp_path), "ARCH": str(arch), "TECH": str(tech)}
    argv = [named.get(x, x) for x in extra]
    assert main(["systolic", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("autotune: error: ") and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.parametrize(("arch", "clock"), [("tpu-v1", 700e6), ("tpuv4i", 1050e6)])
def test_llama_decode_is_bound_by_its_weights_over_the_link(
    capsys: pytest.CaptureFixture[str], arch: str, clock: float
) -> None:
    argv = ["systolic", "--workload", "llama2_7b_decode_b1", "--arch", arch, "--layers", "32"]
    *rows, total = json_lines(capsys, [*argv, "--json"])
    assert total["gemms"] == 71 and all(row["bound_ratio"] >= 1 for row in rows)
    assert 1 <= total["weights_over_link_ratio"] <= 1.05
    weights = sum(row["weight"] * row["k"] * row["n"] for row in rows)
    assert total["dram"]["b_reads"] == weights  # every weight and cached word read once
    assert [row["runs"] for row in rows] == [1, 32, 32, 1, 1]  # the heads timed together
    assert total["tokens_per_second"] == pytest.approx(clock / (32 * total["cycles"]))
