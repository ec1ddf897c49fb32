"""Start-up: the parser of every command is built, and argument errors reported, without loading
the libraries a run needs (their import is most of a second). How fast that is is measured in
benchmarks/speed/bench_startup.py; here, which modules load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.waiting import PATIENCE

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("optuna", "pandas", "numba", "matplotlib", "sqlalchemy", "pyarrow", "numpy")


def loaded_after(code: str) -> list[str]:
    """The heavy modules loaded once `code` has run in a fresh interpreter."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["tune", "--help"],
        ["plot", "--help"],
        ["tune", "--trials", "x"],
        ["systolic", "--shape", "8x8"],
        ["leaderboard"],
        ["optimum", "--help"],
        ["optimum", "--shape", "16x16x16", "--time-limit", "0"],
        ["--version"],
    ],
)
def test_help_and_argument_errors_load_no_heavy_library(argv: list[str]) -> None:
    code = (
        "import contextlib, io\nfrom autotune.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass"
    )
    assert loaded_after(code) == []


def test_importing_the_packages_loads_no_heavy_library() -> None:
    assert (
        loaded_after("import autotune, simcore, simcore.ga1, simcore.systolic, search_spaces") == []
    )
    assert loaded_after("from simcore.ga1 import Machine\nfrom simcore import Shape") == []


def test_a_command_that_runs_loads_what_it_needs() -> None:
    assert "numpy" in loaded_after("import simcore\nsimcore.simulate")
    assert "optuna" in loaded_after("import autotune.run.pipeline")


def test_commands_do_not_import_each_other() -> None:
    """What commands share lives in autotune/cli (args, workloads, limits); a command's own
    helper module (one without `register`) belongs to the command that imports it."""
    import ast

    folder = ROOT / "autotune" / "cli" / "commands"
    trees = {path.stem: ast.parse(path.read_text()) for path in sorted(folder.glob("*.py"))}
    commands = {
        name
        for name, tree in trees.items()
        if any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body)
    }
    for name in commands:
        imported = set()
        for node in ast.walk(trees[name]):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        others = {f"autotune.cli.commands.{c}" for c in commands - {name}}
        assert not imported & others, (name, imported & others)
    assert {"tune", "leaderboard", "gemms", "systolic"} <= commands
