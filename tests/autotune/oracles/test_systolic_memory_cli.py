"""The command line of architectures: `autotune archs`, a tuned run with `--arch` (its figures in
the JSON lines, its study resumed), one-line refusals of bad architectures, an LLM shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

from autotune import api
from autotune.cli.main import main
from autotune.run.resolve import plan_of
from simcore.systolic.archs import bundled_archs

if TYPE_CHECKING:
    import optuna

GEMMINI = Path(__file__).parents[3] / "simcore" / "systolic" / "archs" / "gemmini.toml"
MEMORY_COLUMNS = {"stall_cycles", "dram_words", "a_reads", "b_reads", "c_reads", "c_writes"}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # results/ of in-memory studies land here


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_archs_lists_every_bundled_architecture(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["archs"]) == 0
    out = capsys.readouterr().out
    for name in bundled_archs():
        assert f"\n{name} " in out
    assert "256x256 ws" in out and "24 MiB (a)" in out and "Jouppi" in out
    assert "vector 1024 lanes" in out  # tpuv4i's
    assert main(["archs", "--json"]) == 0
    found = lines(capsys.readouterr().out)
    assert [a["name"] for a in found] == list(bundled_archs())
    tpu = next(a for a in found if a["name"] == "tpu-v1")
    assert tpu["array"] == "256x256" and tpu["clock_mhz"] == 700 and tpu["dram"] == "ddr"
    assert {"name", "holds", "capacity"} == set(tpu["buffers"][0]) and tpu["sources"]


def complete(study: optuna.Study) -> int:
    return sum(t.state.name == "COMPLETE" for t in study.trials)


def tune(*extra: str) -> list[str]:
    return ["--shape", "48x40x56", "--trials", "6", "--verify-top", "1", *extra]


def test_a_tuned_run_on_an_architecture_reports_its_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = tune("--arch", "edge-npu", "--storage", ":memory:", "--json", "--top", "3")
    assert main(argv) == 0
    rows = lines(capsys.readouterr().out)
    assert rows and all(MEMORY_COLUMNS <= set(row) for row in rows)
    best = rows[0]
    assert best["family"] == "systolic-blocked" and best["arch"] == "edge-npu"
    assert best["cycles"] >= best["lower_bound"] and best["verification"] == "exact"
    assert best["stall_cycles"] == best["cycles"] - best["compute_cycles"]


def test_memory_measures_are_objectives(capsys: pytest.CaptureFixture[str]) -> None:
    argv = tune("--arch", "gemmini", "--storage", ":memory:", "--json")
    assert main([*argv, "--objectives", "cycles,dram_words,stall_cycles"]) == 0
    rows = lines(capsys.readouterr().out)
    assert rows and all(row["pareto"] for row in rows)


def test_overrides_apply_on_top_of_an_architecture(capsys: pytest.CaptureFixture[str]) -> None:
    argv = tune("--arch", str(GEMMINI), "--storage", ":memory:", "--json", "--top", "1")
    assert main([*argv, "--machine", "dram.bandwidth=64 B/cycle,dram.latency=0 cycles"]) == 0
    spec = json.loads(lines(capsys.readouterr().out)[0]["arch_spec"])
    assert spec["dram"] == {"bandwidth": "64 B/cycle", "kind": "ddr", "latency": "0 cycles"}


def test_a_study_on_an_architecture_resumes(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    stored: Callable[[Path, str], optuna.Study],
) -> None:
    argv = tune("--arch", "gemmini", "--json", "--top", "1")
    assert main(argv) == 0
    first = lines(capsys.readouterr().out)[0]
    study = first["study"]
    assert study.startswith("systolic-48x40x56-gemmini")
    assert complete(stored(tmp_path, study)) == 6
    assert main([*argv[:3], "9", *argv[4:]]) == 0
    again = lines(capsys.readouterr().out)[0]
    assert again["study"] == study and again["cycles"] <= first["cycles"]
    assert complete(stored(tmp_path, study)) == 9  # resumed to its target of 9 trials
    plan = plan_of("48x40x56", arch="gemmini")
    assert plan.oracle == "systolic"
    assert type(plan).from_json(json.loads(json.dumps(plan.to_json()))) == plan


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--arch", "nosuch"], "--arch: arch nosuch: no such file and no bundled machine"),
        (["--arch", "gemmini", "--oracle", "ga1"], "the ga1 oracle takes no architecture"),
        (["--arch", "MISSING"], "--arch: dram.bandwidth: missing key"),
        (["--arch", "NEGATIVE"], "--arch: buffers.scratchpad.capacity: expected a size"),
        (["--arch", "SMALL"], "--arch: buffers.scratchpad.capacity: 256 words is too small"),
        (["--arch", "gemmini", "--pe-budget", "64"], "--machine: systolic machine key pe_budget"),
        (["--arch", "gemmini", "--machine", "dram.bandwidth=fast"], "--machine: dram.bandwidth"),
        (["--oracle", "systolic", "--machine", "dram.latency=3 cycles"], "name the architecture"),
    ],
)
def test_bad_architectures_are_one_line_and_exit_2(
    extra: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = GEMMINI.read_text()
    files = {
        "MISSING": text.replace('bandwidth = "16 B/cycle"', ""),
        "NEGATIVE": text.replace('capacity = "256 KiB"', 'capacity = "-1 KiB"'),
        "SMALL": text.replace('capacity = "256 KiB"', 'capacity = "256 B"'),
    }
    for name, content in files.items():
        assert content != text
        (tmp_path / name).write_text(content)
    extra = [str(tmp_path / e) if e in files else e for e in extra]
    assert main(tune("--storage", ":memory:", *extra)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_llm_shape_on_a_tpu_is_quick(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--shape", "4096x4096x11008", "--arch", "tpu-v1", "--trials", "4"]
    assert main([*argv, "--storage", ":memory:", "--json", "--top", "1", "--verify-top", "1"]) == 0
    best = lines(capsys.readouterr().out)[0]
    assert best["verification"] == "scaled" and best["ratio_to_bound"] < 2


def test_the_api_takes_an_architecture() -> None:
    result = api.tune("32x32x32", arch="edge-npu", trials=4, storage=":memory:", verify_top=1)
    assert result.best is not None and result.best.family == "systolic-blocked"
