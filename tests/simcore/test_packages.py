"""simcore's packages: each public name is the function or class it documents, importable from
its package on first use, and no module is hidden behind a function of the same name."""

from __future__ import annotations

import importlib
import pkgutil
from types import FunctionType, ModuleType

import pytest

import simcore

PACKAGES = (
    "simcore",
    "simcore.ga1",
    "simcore.systolic",
    "simcore.ga1.engine",
    "simcore.energy",
    "simcore.ga1.vector",
    "simcore.ga1.fused",
    "simcore.fusion",
    "simcore.systolic.fused",
)


def submodules(package: ModuleType) -> list[str]:
    return [info.name for info in pkgutil.iter_modules(package.__path__)]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves_and_none_is_missing(name: str) -> None:
    package = importlib.import_module(name)
    for attribute in package.__all__:
        assert getattr(package, attribute) is not None
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError):
        getattr(package, "no_such_name")


@pytest.mark.parametrize("name", PACKAGES)
def test_no_function_shadows_a_module(name: str) -> None:
    package = importlib.import_module(name)
    for module in submodules(package):
        importlib.import_module(f"{name}.{module}")
        assert isinstance(getattr(package, module), ModuleType), f"{name}.{module}"
    assert not set(submodules(package)) & set(package.__all__)


def test_the_stable_names() -> None:
    from simcore.ga1.simulator import simulate
    from simcore.systolic.reports import report

    assert simcore.ga1.simulate is simulate and simcore.simulate is simulate
    assert simcore.systolic.report is report
    assert isinstance(simcore.ga1.simulate, FunctionType) and isinstance(
        simcore.systolic.schedule, FunctionType
    )


def test_the_documented_examples_run() -> None:
    import doctest

    import simcore.systolic.reports

    failures, tried = doctest.testmod(simcore.systolic.reports)
    assert tried >= 3 and failures == 0
