"""Fresh, optionally mutated, copies of the simcore package for the mutation tests, and the
namespace that puts a copy's compiled engine behind the chapter's checker.

A copy is imported from simcore's own files through a finder of its own: every module is parsed,
the rewrites aimed at it (ast_mutation.Rewrite) are applied to its syntax tree, and the tree is
compiled into a fresh module object. The real simcore in sys.modules is left untouched.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import CodeType, ModuleType, SimpleNamespace
from typing import Any

import numpy as np

from tests.helpers.ast_mutation import MutationError, Rewrite, mutated_tree

JIT = "ga1.engine.jit"
# A copy's engine never reads or writes numba's on-disk cache (keyed by file, it would hand a
# mutated copy the real kernels, or the real package the mutant's): a copy runs the engine's
# source as Python, or (compiled=True) compiles it without the cache.
PURE_PYTHON_ENGINE = Rewrite(JIT, "", "PURE_PYTHON = $value", "PURE_PYTHON = True", count=1)
UNCACHED_ENGINE = Rewrite(JIT, "", "CACHE = $value", "CACHE = False", count=1)
M_SEED = 7  # operands of the streamed verifications

_UNMUTATED: dict[
    tuple[Path, int], CodeType
] = {}  # (file, mtime) -> code: compiled once per session


def _code(path: Path, rewrites: Sequence[Rewrite]) -> CodeType:
    if rewrites:
        return compile(mutated_tree(path.read_text(), rewrites, str(path)), str(path), "exec")
    key = (path, path.stat().st_mtime_ns)
    if key not in _UNMUTATED:
        _UNMUTATED[key] = compile(ast.parse(path.read_text(), str(path)), str(path), "exec")
    return _UNMUTATED[key]


class _MutatingLoader(importlib.abc.Loader):
    """Executes a simcore module from its syntax tree, rewritten (never from bytecode on disk)."""

    def __init__(
        self, path: Path, rewrites: Sequence[Rewrite], loaded: set[str], short: str
    ) -> None:
        self.path, self.rewrites, self.loaded, self.short = path, rewrites, loaded, short

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        code = _code(self.path, self.rewrites)
        self.loaded.add(self.short)
        exec(code, module.__dict__)


class _MutatingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, root: Path, rewrites: dict[str, list[Rewrite]], loaded: set[str]) -> None:
        self.root, self.rewrites, self.loaded = root, rewrites, loaded

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        parts = fullname.split(".")
        if parts[0] != "simcore":
            return None
        short = (
            ".".join(parts[1:]) or "__init__"
        )  # the module's path below simcore, e.g. "ga1.timing"
        folder = self.root.joinpath(*parts[1:])
        package = (folder / "__init__.py").is_file()
        file = (
            folder / "__init__.py"
            if package
            else self.root.joinpath(*parts[1:-1], parts[-1] + ".py")
        )
        if not file.is_file():
            return None
        loader = _MutatingLoader(file, self.rewrites.get(short, []), self.loaded, short)
        spec = importlib.machinery.ModuleSpec(
            fullname, loader, origin=str(file), is_package=package
        )
        if package:
            spec.submodule_search_locations = [str(folder)]
        spec.has_location = True
        return spec


def load_simcore_copy(rewrites: Iterable[Rewrite] = (), compiled: bool = False) -> ModuleType:
    """A fresh copy of the simcore package with the rewrites applied to its modules' syntax
    trees. Every rewrite must find its target (MutationError otherwise) and every module named
    must exist and load, so a refactor fails loudly instead of testing nothing. The copy's engine
    runs as Python, or compiled (slow to load: every kernel it uses compiles)."""
    import simcore

    by_module: dict[str, list[Rewrite]] = defaultdict(list)
    for rewrite in (*rewrites, UNCACHED_ENGINE if compiled else PURE_PYTHON_ENGINE):
        by_module[rewrite.module].append(rewrite)
    root = Path(simcore.__file__).resolve().parent
    unknown = [name for name in by_module if not _module_file(root, name).is_file()]
    if unknown:
        raise MutationError(f"no such simcore module(s): {unknown}")
    loaded: set[str] = set()
    finder = _MutatingFinder(root, dict(by_module), loaded)
    # Import the copy with no simcore modules visible, so its imports bind to each other; then put
    # the real package back. Only simcore's entries are swapped: other modules imported meanwhile
    # (numba loads parts of itself on first compile) must stay, or they load twice.
    real = {name: module for name, module in sys.modules.items() if _is_simcore(name)}
    for name in real:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    try:
        copy = importlib.import_module("simcore")
        for child in _module_names(root):
            importlib.import_module(f"simcore.{child}")  # modules __init__ does not import
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _is_simcore(n)]:
            del sys.modules[name]
        sys.modules.update(real)
    missing = set(by_module) - loaded
    if missing:
        raise MutationError(f"mutated module(s) never loaded: {sorted(missing)}")
    return copy


def engine_namespace(copy: ModuleType) -> SimpleNamespace:
    """The copy's public names with the compiled engine's simulator, replay and chapter
    generators in place of the reference's, and `streamed`: a schedule timed and verified the
    way the tuner runs it."""
    engine = copy.ga1.engine
    names = {name: getattr(copy, name) for name in dir(copy) if not name.startswith("_")}

    def generator(shape: Any, machine: Any, bi: int | None, bj: int | None, buffers: int) -> Any:
        if bi is None:
            return engine.KOuter(shape, machine, buffers)
        return engine.Blocked(shape, machine, bi, bj, buffers)

    def streamed(
        shape: Any, machine: Any, bi: int | None, bj: int | None, buffers: int
    ) -> tuple[Any, Any]:
        timing = generator(shape, machine, bi, bj, buffers).timing()
        return timing, generator(shape, machine, bi, bj, buffers).verify(seed=M_SEED)

    def replay_program(
        machine: Any, program: Any, starts: Sequence[int], finishes: Sequence[int]
    ) -> list[Any]:
        found, count = (
            np.zeros((4 * len(program) + 1, 5), dtype=np.int64),
            np.zeros(1, dtype=np.int64),
        )
        times = np.array([starts, finishes], dtype=np.int64).T.copy()
        engine.hazards.replay_rows(
            engine.hazards.new_history(machine.slots),
            found,
            count,
            program.code,
            times,
            len(program),
            0,
            machine.mxu_fill,
            np.zeros(4, dtype=np.int64),
        )
        return list(engine.generators.hazards_found(found, int(count[0])))

    names.update(
        simulate=engine.simulate,
        replay=engine.replay,
        streamed=streamed,
        replay_program=replay_program,
        blocked=lambda shape, machine, bi, bj, buffers=2: generator(
            shape, machine, bi, bj, buffers
        ).program(),
        kouter=lambda shape, machine, buffers=2: generator(
            shape, machine, None, None, buffers
        ).program(),
    )
    return SimpleNamespace(**names)


def _module_file(root: Path, name: str) -> Path:
    folder = root.joinpath(*name.split("."))
    return (
        folder / "__init__.py" if (folder / "__init__.py").is_file() else folder.with_suffix(".py")
    )


def _is_simcore(name: str) -> bool:
    return name == "simcore" or name.startswith("simcore.")


def _module_names(root: Path) -> list[str]:
    """Every module below simcore, dotted ("ga1.timing"), packages before their modules."""
    names = []
    for file in sorted(root.rglob("*.py")):
        parts = file.relative_to(root).with_suffix("").parts
        if parts == ("__init__",):
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names
