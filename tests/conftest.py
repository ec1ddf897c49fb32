"""Shared fixtures: the chapter's reference listings (a differential oracle) and the checker.

Shared helpers (the chapter's checker, mutated copies of simcore, hypothesis strategies) live in
the tests/helpers package; test modules import those, never each other.

The package never imports the reference; tests may, and skip cleanly when it is not there.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Let `import simcore` work from a plain checkout (no install, no PYTHONPATH).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REFERENCE_GA1_DIR = ROOT.parent / "shared" / "reference" / "ga1"

from tests.helpers.examples import load_profile  # noqa: E402 (needs ROOT on sys.path)

load_profile()  # hypothesis: `dev` unless AUTOTUNE_HYPOTHESIS_PROFILE=ci


class ReferenceGA1(NamedTuple):
    """The chapter's listings: `ga` (Machine, Sim) and `schedules` (blocked, kouter, ...)."""

    ga: ModuleType
    schedules: ModuleType


def _load_module(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before exec: dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_reference_ga1() -> ReferenceGA1 | None:
    """The reference modules, or None when the listings are absent."""
    ga_path = REFERENCE_GA1_DIR / "ga.py"
    schedules_path = REFERENCE_GA1_DIR / "schedules.py"
    if not (ga_path.is_file() and schedules_path.is_file()):
        return None
    # The listing's schedules.py does `from ga import ...`: it must find ga under that name. The
    # schedules module gets a private name so it cannot shadow anything called `schedules`.
    ga = _load_module("ga", ga_path)
    schedules = _load_module("ga1_reference_schedules", schedules_path)
    return ReferenceGA1(ga, schedules)


@pytest.fixture(scope="session")
def reference_ga1() -> ReferenceGA1:
    """(ga, schedules) from <project root>/../shared/reference/ga1; skips when absent."""
    reference = load_reference_ga1()
    if reference is None:
        pytest.skip(f"reference listings not found in {REFERENCE_GA1_DIR}")
    return reference


@pytest.fixture(scope="session")
def chapter_checks() -> ModuleType:
    """The chapter's checker, tests/helpers/ga1_chapter_checker.py."""
    from tests.helpers import ga1_chapter_checker

    return ga1_chapter_checker


def pytest_addoption(parser: pytest.Parser) -> None:
    # Here, not in tests/autotune/storage/conftest.py: pytest only takes options from the top conftest.
    parser.addoption(
        "--require-postgres",
        action="store_true",
        default=False,
        help="fail (instead of skipping) the PostgreSQL tests when initdb/pg_ctl are not installed (CI)",
    )
