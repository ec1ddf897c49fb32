"""Package attributes imported on first use (PEP 562), so that a program that needs a shape or a
machine does not load numpy and every simulator with them. A package lists, for each of its
modules, the public names it re-exports; type checkers and the documentation read the same
names from the package's `if TYPE_CHECKING:` imports."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence


def exports(
    namespace: dict[str, Any], modules: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the package whose globals are `namespace`, its names
    defined in `modules` (a module below the package -> the names it defines)."""
    package = str(namespace["__name__"])
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        found = getattr(_submodule(namespace, module), name)
        namespace[name] = found  # later reads are plain attribute reads
        return found

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__


def _submodule(namespace: dict[str, Any], module: str) -> ModuleType:
    # The package's own attribute first: a second copy of the package (the mutation tests load
    # one) must reach its own modules, not those of the package in sys.modules.
    found = namespace.get(module)
    if isinstance(found, ModuleType):
        return found
    return importlib.import_module(f"{namespace['__name__']}.{module}")
