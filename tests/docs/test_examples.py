"""Every command and Python example of README.md and docs/ runs as its page says (tests/docs/
pages.py reads them). The examples of a page run in order in one scratch folder, which holds
links to the checkout's inputs (workloads/, examples/, tools/, benchmarks/, tests/), so a command
may use what an earlier one made, as a reader following the page would.

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

# Examples that take minutes, by page:line (or page: every example of the page), and why.
SLOW: dict[str, str] = {
    "docs/benchmarks.md": "a sweep of machines and a co-design over a workload: minutes",
    "docs/getting-started.md:64": "a benchmark: compiles the engine from an empty cache, twice",
    "docs/exact.md": "CP-SAT and the exhaustive search (about 25 s of CPU a solve), and the "
    "commands that read the study they fill",
    "docs/guide/commands.md:163": "tunes every GEMM of a transformer: minutes",
    "docs/energy.md:151": "1,000 trials of two objectives: a minute or more of CPU",
    "docs/energy.md:152": "1,000 trials of three objectives: a minute or more of CPU",
    "docs/energy.md:153": "reads the study the slow example above makes",
    "docs/energy.md:197": "a co-design of 60 machines over a workload: minutes",
    "docs/energy.md:208": "draws the co-design the slow example above makes",
    "docs/energy.md:298": "costs 30 GEMM x dataflow cases against ZigZag's golden figures",
}
# Examples a test cannot run, and why.
NOT_RUN: dict[str, str] = {
    "docs/benchmarks": "a benchmark's full run (minutes to hours, several with peers' "
    "virtualenvs); `python -m benchmarks --quick` runs each one's smoke test",
    "docs/guide/workers.md:17": "needs a PostgreSQL server (tests/autotune/test_postgres_workers.py "
    "runs one)",
    "docs/guide/commands.md:342": "needs SCALE-Sim's topology and config files (a peer's files)",
    "docs/networks.md:13": "needs an ONNX model of the reader's (model.onnx)",
    "docs/networks.md:163": "names the study folder the run above prints (its name ends in a hash)",
    "docs/guide/commands.md:268": "needs an ONNX model of the reader's (model.onnx)",
    "docs/guide/commands.md:269": "needs SCALE-Sim's topology file (Resnet50.csv)",
    "docs/oracles.md:199": "needs SCALE-Sim's topology file (Resnet50.csv)",
    "docs/oracles.md:247": "needs SCALE-Sim's configs/google.cfg (a peer's file)",
    "docs/energy.md:173": "needs a technology table of the reader's (node.toml)",
    "docs/energy.md:297": "needs ZigZag in its own virtualenv (a peer)",
    "docs/trust.md": "needs SCALE-Sim in its own virtualenv (a peer)",
    "docs/extending/oracle.md:101": "needs the example oracle installed (pip install -e "
    "examples/toy_oracle; tests/autotune/test_example_oracle.py runs it)",
    "docs/extending/oracle.md:115": "a file the site includes (--8<--), not a script",
    "docs/extending/oracle.md:125": "a file the site includes (--8<--), not a script",
}
# What a page takes as done before its examples (the reader ran the README's main job).
BEFORE: dict[str, list[str]] = {
    "docs/guide/commands.md": ["-m", "autotune", "--shape", "128x128x128"],
}
INPUTS = ("workloads", "examples", "tools", "benchmarks", "tests")
PATIENCE = 3600  # seconds: a hung example fails instead of holding the run


def _reason(table: dict[str, str], example: Example) -> str | None:
    for key in (example.id, example.page, str(Path(example.page).parent)):
        if key in table:
            return table[key]
    return None


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
    """The lists above name examples that exist (a page edited moves its line numbers)."""
    found = {e.id for page in pages() for e in examples(page)}
    places = found | {e.page for page in pages() for e in examples(page)}
    places |= {str(Path(p).parent) for p in places}
    for key in [*SLOW, *NOT_RUN]:
        assert key in places, f"{key} names no example of the pages"
    assert len([c for c in CASES]) >= 40
