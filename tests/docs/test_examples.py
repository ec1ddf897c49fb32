"""Every command and Python example of README.md and docs/ runs as its page says (tests/docs/
pages.py reads them). The examples of a page run in order in one scratch folder, which holds
links to the checkout's inputs (workloads/, examples/, tools/, benchmarks/, tests/), so a command
may use what an earlier one made, as a reader following the page would (a parallel run gives
each test file to one worker, so they stay in order).

Each example runs whole processes (a tuning run, its numba engine), so all of them are marked
slow: they run with the full suite (CI), and `pytest -m "not slow"` keeps the check that every
page's examples are read. SLOW lists those that take minutes, and NOT_RUN those that need what a
test cannot have (a server, a peer's virtualenv, hours); each with its reason, below."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, Example, examples, pages, runs, shown_in

# Examples that take minutes, by "page ~ text" (an example of the page whose text holds it), a page
# (every example of it) or a folder, and why.
SLOW: dict[str, str] = {
    "docs/benchmarks.md": "a sweep of machines and a co-design over a workload: minutes",
    "docs/getting-started.md ~ bench_first_run": "a benchmark: compiles the engine from an empty cache, twice",
    "docs/exact.md": "CP-SAT and the exhaustive search (about 25 s of CPU a solve), and the "
    "commands that read the study they fill",
    "docs/guide/commands.md ~ --workload workloads/networks/transformer_b64.toml": "tunes every GEMM of a transformer: minutes",
    "docs/energy.md ~ tune --shape 128x128x128 --objectives cycles,energy": "1,000 trials of two objectives: a minute or more of CPU",
    "docs/energy.md ~ tune --oracle systolic --shape 128x128x128 --objectives": "1,000 trials of three objectives: a minute or more of CPU",
    "docs/energy.md ~ show ga1-128x128x128-s64-": "reads the study the slow example above makes",
    "docs/energy.md ~ transformer_b1.toml --search-machine": "a co-design of 60 machines over a workload: minutes",
    "docs/energy.md ~ plot codesign-energy": "draws the co-design the slow example above makes",
    "docs/energy.md ~ bench_energy --golden": "costs 30 GEMM x dataflow cases against ZigZag's golden figures",
}
# Examples a test cannot run, and why.
NOT_RUN: dict[str, str] = {
    "docs/benchmarks": "a benchmark's full run (minutes to hours, several with peers' "
    "virtualenvs); `python -m benchmarks --quick` runs each one's smoke test",
    "docs/guide/workers.md ~ --storage postgresql://": "needs a PostgreSQL server (tests/autotune/test_postgres_workers.py "
    "runs one)",
    "docs/guide/commands.md ~ --arch configs/google.cfg": "needs SCALE-Sim's topology and config files (a peer's files)",
    "docs/networks.md ~ ops model.onnx": "needs an ONNX model of the reader's (model.onnx)",
    "docs/networks.md ~ --tuned results/workload-gpt2_s256-s64-...": "names the study folder the run above prints (its name ends in a hash)",
    "docs/guide/commands.md ~ gemms model.onnx": "needs an ONNX model of the reader's (model.onnx)",
    "docs/guide/commands.md ~ gemms Resnet50.csv": "needs SCALE-Sim's topology file (Resnet50.csv)",
    "docs/oracles.md ~ --workload Resnet50.csv": "needs SCALE-Sim's topology file (Resnet50.csv)",
    "docs/oracles.md ~ read_scalesim_config": "needs SCALE-Sim's configs/google.cfg (a peer's file)",
    "docs/energy.md ~ --tech node.toml": "needs a technology table of the reader's (node.toml)",
    "docs/energy.md ~ --zigzag-python": "needs ZigZag in its own virtualenv (a peer)",
    "docs/trust.md": "needs SCALE-Sim in its own virtualenv (a peer)",
    "docs/extending/oracle.md ~ pip install -e examples/toy_oracle": "installs the example "
    "oracle into the environment (tests/autotune/oracles/test_example_oracle.py installs it into "
    "a folder of its own and tunes with it)",
    "docs/extending/oracle.md ~ --oracle toy": "needs the example oracle installed (the line "
    "above; tests/autotune/oracles/test_example_oracle.py runs it)",
    "docs/extending/oracle.md ~ toy_oracle/__init__.py": "a file the site includes (--8<--), not a script",
    "docs/extending/oracle.md ~ toy_oracle/guarded.py": "a file the site includes (--8<--), not a script",
}
# What a page takes as done before its examples (the reader ran the README's main job).
BEFORE: dict[str, list[str]] = {
    "docs/guide/commands.md": ["-m", "autotune", "--shape", "128x128x128"],
}
INPUTS = ("workloads", "examples", "tools", "benchmarks", "tests")
PATIENCE = 3600  # seconds: a hung example fails instead of holding the run


def _names(key: str, example: Example) -> bool:
    """Whether a key of the lists names the example: "page ~ text" (text in its command or
    script), its page, or its page's folder."""
    page, _, text = key.partition(" ~ ")
    if text:
        return page == example.page and text in example.text
    return key in (example.page, str(Path(example.page).parent))


def _reason(table: dict[str, str], example: Example) -> str | None:
    return next((reason for key, reason in table.items() if _names(key, example)), None)


def _cases() -> list[object]:
    cases: list[object] = []
    for page in pages():
        for example in examples(page):
            if not runs(example):
                continue
            skipped = _reason(NOT_RUN, example)
            marks = [pytest.mark.skip(reason=skipped)] if skipped else []
            marks += [pytest.mark.slow] if not skipped else []
            cases.append(pytest.param(example, id=example.id, marks=marks))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {}


def _folder(folders: dict[str, Path], page: str, factory: pytest.TempPathFactory) -> Path:
    """The page's scratch folder, with the checkout's inputs linked in."""
    if page not in folders:
        folder = factory.mktemp(page.replace("/", "_"))
        for name in INPUTS:
            (folder / name).symlink_to(ROOT / name)
        if page in BEFORE:
            subprocess.run(
                [sys.executable, *BEFORE[page]],
                cwd=folder,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                timeout=PATIENCE,
                check=True,
            )
        folders[page] = folder
    return folders[page]


def _run(example: Example, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    if example.kind == "python":
        argv = [sys.executable, "-c", example.text]
    else:
        argv = [sys.executable, *example.argv[1:]]
    return subprocess.run(
        argv,
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if example.kind == "command" else subprocess.PIPE,
        text=True,
        timeout=PATIENCE,
        check=False,
    )


@pytest.mark.parametrize("example", CASES)
def test_the_example_runs_as_its_page_says(
    example: Example, folders: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    done = _run(example, _folder(folders, example.page, tmp_path_factory))
    where = f"{example.id}: {example.text.splitlines()[0]}"
    if example.kind == "python":
        assert done.returncode == 0, f"{where}\n{done.stderr}"
        if example.output is not None:
            wanted = "\n".join(example.output) + "\n"
            checker = doctest.OutputChecker()
            flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
            assert checker.check_output(wanted, done.stdout, flags), (
                f"{where} printed\n{done.stdout}\nwhere the page shows\n{wanted}"
            )
        return
    if example.fails:
        assert done.returncode != 0, f"{where} succeeded where the page shows it refused"
        assert "Traceback" not in done.stdout, f"{where}\n{done.stdout}"
    else:
        assert done.returncode == 0, f"{where} exited {done.returncode}\n{done.stdout}"
    missing = shown_in(example.output or (), done.stdout)
    assert missing is None, f"{where}: the output lacks\n{missing}\nin\n{done.stdout}"


def test_the_pages_have_examples_and_each_listed_one_exists() -> None:
    """Each key of the lists above names an example that exists (its text was edited away)."""
    every = [e for page in pages() for e in examples(page)]
    for key in [*SLOW, *NOT_RUN]:
        assert any(_names(key, e) for e in every), f"{key} names no example of the pages"
    assert len([c for c in CASES]) >= 40
