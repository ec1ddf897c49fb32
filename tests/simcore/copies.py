"""Fresh, optionally mutated, copies of the simcore package for the mutation tests, and the
namespace that puts a copy's compiled engine behind the chapter's checker (checks.py)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Mapping, Sequence

import numpy as np

class MutationError(AssertionError):
    """A mutation's original text was not found exactly once: the source changed under it."""


def apply_mutations(source: str, replacements: Sequence[tuple[str, str]], where: str) -> str:
    for old, new in replacements:
        found = source.count(old)
        if found != 1:
            raise MutationError(f"mutation target found {found} times (expected once) in {where}: {old!r}")
        source = source.replace(old, new)
    return source


class _MutatingLoader(importlib.abc.Loader):
    """Executes a simcore module's source with the mutations applied (never from bytecode)."""

    def __init__(self, path: Path, replacements: Sequence[tuple[str, str]], applied: set[str], short: str) -> None:
        self.path = path
        self.replacements = replacements
        self.applied = applied
        self.short = short

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        source = apply_mutations(self.path.read_text(), self.replacements, str(self.path))
        self.applied.add(self.short)
        exec(compile(source, str(self.path), "exec"), module.__dict__)


class _MutatingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, root: Path, mutations: Mapping[str, Sequence[tuple[str, str]]], applied: set[str]) -> None:
        self.root = root
        self.mutations = mutations
        self.applied = applied

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        parts = fullname.split(".")
        if parts[0] != "simcore":
            return None
        short = ".".join(parts[1:]) or "__init__"  # the module's path below simcore, e.g. "ga1.timing"
        folder = self.root.joinpath(*parts[1:])
        package = (folder / "__init__.py").is_file()
        file = folder / "__init__.py" if package else self.root.joinpath(*parts[1:-1], parts[-1] + ".py")
        if not file.is_file():
            return None
        loader = _MutatingLoader(file, self.mutations.get(short, ()), self.applied, short)
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=str(file), is_package=package)
        if package:
            spec.submodule_search_locations = [str(folder)]
        spec.has_location = True
        return spec


JIT = "ga1.engine.jit"
# A copy's compiled engine must never read or write numba's on-disk cache (keyed by file, it
# would hand a mutated copy the real kernels, or the real package the mutant's): a copy runs the
# engine's source as Python, or (compiled=True) compiles it without the cache.
PURE_PYTHON_ENGINE = [("PURE_PYTHON = False", "PURE_PYTHON = True")]
UNCACHED_ENGINE = [("CACHE = True", "CACHE = False")]


def load_simcore_copy(mutations: Mapping[str, Sequence[tuple[str, str]]] | None = None, compiled: bool = False) -> ModuleType:
    """A fresh copy of the simcore package, each module's source mutated by its (old, new)
    replacements (keyed by the module's path below simcore, e.g. "ga1.timing"). Every old text must occur exactly once,
    and every named module must exist, so a refactor fails loudly instead of testing nothing.
    The real simcore in sys.modules is left untouched. The copy's engine runs as Python, or
    compiled (slow to load: every kernel it uses compiles)."""
    import simcore

    mutations = dict(mutations or {})
    mutations[JIT] = [*mutations.get(JIT, ()), *(UNCACHED_ENGINE if compiled else PURE_PYTHON_ENGINE)]
    root = Path(simcore.__file__).resolve().parent
    unknown = [name for name in mutations if not root.joinpath(*name.split(".")).with_suffix(".py").is_file()]
    if unknown:
        raise MutationError(f"no such simcore module(s): {unknown}")
    applied: set[str] = set()
    finder = _MutatingFinder(root, mutations, applied)
    # Import the copy with no simcore modules visible, so its imports bind to each other; the
    # patch restores sys.modules (the real package) afterwards.
    # Import the copy with no simcore modules visible, so its imports bind to each other; then
    # put the real package back. Only simcore's entries are swapped: other modules imported
    # meanwhile (numba loads parts of itself on first compile) must stay, or they load twice.
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
    missing = set(mutations) - applied
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
        return engine.KOuter(shape, machine, buffers) if bi is None else engine.Blocked(shape, machine, bi, bj, buffers)

    def streamed(shape: Any, machine: Any, bi: int | None, bj: int | None, buffers: int) -> tuple[Any, Any]:
        return generator(shape, machine, bi, bj, buffers).timing(), generator(shape, machine, bi, bj, buffers).verify(seed=M_SEED)

    def replay_program(machine: Any, program: Any, starts: Sequence[int], finishes: Sequence[int]) -> list[Any]:
        found, count = np.zeros((4 * len(program) + 1, 5), dtype=np.int64), np.zeros(1, dtype=np.int64)
        times = np.array([starts, finishes], dtype=np.int64).T.copy()
        engine.hazards.replay_rows(engine.hazards.new_history(machine.slots), found, count, program.code, times,
                                  len(program), 0, machine.mxu_fill, np.zeros(4, dtype=np.int64))
        return list(engine.generators.hazards_found(found, int(count[0])))

    names.update(
        simulate=engine.simulate, replay=engine.replay, streamed=streamed, replay_program=replay_program,
        blocked=lambda shape, machine, bi, bj, buffers=2: generator(shape, machine, bi, bj, buffers).program(),
        kouter=lambda shape, machine, buffers=2: generator(shape, machine, None, None, buffers).program(),
    )
    return SimpleNamespace(**names)


M_SEED = 7  # operands of the streamed verifications


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
