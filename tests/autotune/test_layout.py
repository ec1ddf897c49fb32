"""docs/extending/layout.md held true: autotune's packages in layers, each importing only those
below it, and one default run followed call by call, entering its packages going down.

The static check reads every module's imports (a lazy import inside a function counts too); the
dynamic one traces `autotune.tune` on a small product with sys.setprofile and records, for each
call that crosses from one package into another, the pair. A call from a package into one above
it is a return to a package already left: the run's only ones are Optuna's optimize loop (in
autotune.storage) calling back the run's objective and the search's sampler."""

from __future__ import annotations

import ast
import logging
import sys
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# Top to bottom (docs/extending/layout.md): a package imports and calls only those after it.
LAYERS = (
    "autotune.cli",
    "autotune.api",
    "autotune.run",
    "autotune.settings",
    "autotune.results",
    "autotune.search",
    "autotune.storage",
    "autotune.oracles",
    "autotune.plugins",
    "autotune.record",
    "autotune.environment",
    "autotune.interrupt",
    "autotune.errors",
    "workloads",
    "search_spaces",
    "simcore",
)
# Imports that go up, each with its reason: results.load rebuilds a stale leaderboard by
# running the run's last stages again (autotune.run.rebuild), imported only when it must.
UPWARD_IMPORTS = {("autotune.results", "autotune.run")}
# Calls that go up in a default run: Optuna's optimize loop calls the objective and the sampler.
CALLBACKS = {("autotune.storage", "autotune.run"), ("autotune.storage", "autotune.search")}
# The packages a default run enters, in the order it first enters them.
ENTERED = (
    "autotune.api",  # keywords -> the plan and options
    "autotune.environment",  # the variables numba reads, checked first
    "autotune.run",  # the plan stage: validated, named, guarded
    "autotune.settings",  # each option as its declaration takes it
    "autotune.oracles",  # the oracle, its measures, its capabilities
    "autotune.plugins",  # found by its entry point
    "simcore",
    "search_spaces",  # its families
    "autotune.search",  # the searched problem, its sampler
    "autotune.storage",  # the study opened; Optuna's loop calls back the objective and sampler
    "autotune.errors",  # a candidate found infeasible while evaluated
    "autotune.interrupt",
    "autotune.results",  # rank, verify, write
    "autotune.record",
)


IMPORT = "import"  # a call made while a module is imported: not a call of the run


def package_of(path_or_module: str) -> str | None:
    """The layer a file or a module belongs to (None: not one of the project's)."""
    parts = path_or_module.replace("/", ".").removesuffix(".py").split(".")
    if parts[0] in ("workloads", "search_spaces", "simcore"):
        return parts[0]
    if parts[0] != "autotune" or len(parts) < 2 or parts[1] in ("__init__", "__main__"):
        return None
    return f"autotune.{parts[1]}"


def imports() -> set[tuple[str, str]]:
    found = set()
    for path in ROOT.glob("autotune/**/*.py"):
        me = package_of(str(path.relative_to(ROOT)))
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                target = package_of(name)
                if me and target and target != me:
                    found.add((me, target))
    return found


def up(pair: tuple[str, str]) -> bool:
    return LAYERS.index(pair[0]) > LAYERS.index(pair[1])


def test_every_package_imports_only_those_below_it() -> None:
    found = imports()
    assert {package_of(a) for a, _ in found} <= set(LAYERS)  # every package has its layer
    assert {pair for pair in found if up(pair)} == UPWARD_IMPORTS


def trace_default_run(tmp_path: Path) -> tuple[list[str], set[tuple[str, str]]]:
    """The packages entered, in order, and each pair (caller, callee) of packages a call
    crosses; imports (a module's body running) are not calls of the run."""
    from autotune import oracles
    from autotune.api import tune
    from autotune.search import sampling

    oracles._declared.cache_clear()  # found again, as by a fresh process
    oracles.get.cache_clear()
    sampling.specs.cache_clear()
    entered: list[str] = []
    crossings: set[tuple[str, str]] = set()
    root = str(ROOT) + "/"

    def package(frame: FrameType | None) -> str | None:
        """The package of the nearest frame of the project's (skipping Optuna's); IMPORT for
        a frame that runs while a module is imported."""
        while frame is not None:
            name = frame.f_code.co_filename
            found = package_of(name[len(root) :]) if name.startswith(root) else None
            if found is not None:
                return IMPORT if frame.f_code.co_name == "<module>" else found
            frame = frame.f_back
        return None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_back is None:
            return
        if frame.f_back.f_code.co_filename in (logging.__file__, "<frozen importlib._bootstrap>"):
            return  # a log filter or import hook an earlier command line installed: not the run
        callee, caller = package(frame), package(frame.f_back)
        if callee in (None, IMPORT) or caller in (IMPORT, callee):
            return
        if callee not in entered:
            entered.append(callee)
        if caller is not None:
            crossings.add((caller, callee))

    sys.setprofile(profile)
    try:
        tune("32x32x32", trials=8, storage=":memory:", results=tmp_path / "results")
    finally:
        sys.setprofile(None)
    return entered, crossings


def test_a_default_run_enters_its_packages_going_down(tmp_path: Path) -> None:
    import autotune.api  # noqa: F401 - loaded before the trace: the run, not the import, is traced

    entered, crossings = trace_default_run(tmp_path)
    assert tuple(entered) == ENTERED
    assert {pair for pair in crossings if up(pair)} == CALLBACKS
