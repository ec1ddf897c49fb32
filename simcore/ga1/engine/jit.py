"""The engine's one decorator: numba's `njit` with its on-disk cache, or plain Python.

Every kernel of the engine is written once, as ordinary Python over flat integer and float
arrays, and compiled by numba on first use. The machine code is cached on disk (numba's cache,
in `__pycache__` next to these files or under NUMBA_CACHE_DIR), so the compile cost is paid once
per machine and per change of the engine's sources.

Numba notices a change to the file that holds a cached function, not to the files it calls into.
`_forget_stale_cache` therefore keys the whole engine's cache on a hash of all its sources: when
any engine file changes, every cached kernel of the engine is dropped and compiled again.

`PURE_PYTHON = True` (also under numba's NUMBA_DISABLE_JIT) runs the same source uncompiled, and
`CACHE = False` compiles it without the on-disk cache: the mutation tests' copies of simcore set
one or the other, so a mutated source never reads nor writes the cache.

Kernels never allocate: every array is made in Python and passed in, flat (no tuples of arrays).
That lets them run without numba's reference counting (`_nrt=False`), which otherwise costs two
atomic operations per array at every call between kernels, several times the work of the call.
Kernels may take views of an array (a section of a state), which allocate nothing either.

`get` and `put` index an array without numba's test for a negative index (counted from the end):
the hot loops' indices are offsets into a state, never negative, and the test cost a compare and
a conditional move at every access. They are plain indexing when the engine runs as Python.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np


def _jit_disabled() -> bool:
    """numba's own switch, read as numba reads it (a value that is not an integer is ignored)."""
    try:
        return int(os.environ.get("NUMBA_DISABLE_JIT", "0")) != 0
    except ValueError:
        return False


# Under NUMBA_DISABLE_JIT the engine runs as Python: its dispatchers would otherwise meet plain
# functions where they expect their own kind.
PURE_PYTHON = _jit_disabled()
CACHE = True  # numba's on-disk cache (the mutation tests' compiled copies turn it off)
HERE = Path(__file__).resolve().parent
STAMP = "engine-sources.sha1"

F = TypeVar("F", bound=Callable[..., object])


def _cache_dirs() -> list[Path]:
    """Where numba may keep the engine's kernels: next to the sources, and (NUMBA_CACHE_DIR set,
    then the only place numba uses) a folder named after this one's path below that directory."""
    dirs = [HERE / "__pycache__"]
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        from numba.core.caching import _CacheLocator

        dirs.append(
            Path(configured) / _CacheLocator.get_suitable_cache_subpath(str(HERE / "jit.py"))
        )
    return dirs


def _forget_stale_cache() -> None:
    digest = hashlib.sha1()
    for path in sorted(HERE.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    stamp = digest.hexdigest()
    for folder in _cache_dirs():
        marker = folder / STAMP
        try:
            if marker.is_file() and marker.read_text() == stamp:
                continue
            for stale in [*folder.glob("*.nbi"), *folder.glob("*.nbc")]:
                stale.unlink(missing_ok=True)
            folder.mkdir(parents=True, exist_ok=True)
            marker.write_text(stamp)
        except OSError:
            pass  # a read-only install: numba falls back to its own cache location


if not PURE_PYTHON:
    import numba

    from simcore.ga1.engine.jit_callees import make_callee, make_kernel

    if CACHE:
        _forget_stale_cache()


def _get(array: np.ndarray, index: int) -> int:
    return array[index]


def _put(array: np.ndarray, index: int, value: int) -> None:
    array[index] = value


if PURE_PYTHON:
    get, put = _get, _put
else:
    from numba.core import types as _types
    from numba.extending import intrinsic

    @intrinsic
    def get(typingctx: object, array: _types.Array, index: _types.Integer) -> tuple[object, object]:
        """array[index] for an index known to be in 0..len(array)-1: numba would test each signed
        index for a negative one (counted from the end), at every access of the hot loops."""

        def codegen(
            context: object, builder: object, signature: object, args: tuple[object, ...]
        ) -> object:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data  # type: ignore[attr-defined]
            return builder.load(builder.gep(data, [args[1]]))  # type: ignore[attr-defined]

        return array.dtype(array, index), codegen

    @intrinsic
    def put(
        typingctx: object, array: _types.Array, index: _types.Integer, value: _types.Integer
    ) -> tuple[object, object]:
        """array[index] = value, the index known to be in 0..len(array)-1 (as `get`)."""

        def codegen(
            context: object, builder: object, signature: object, args: tuple[object, ...]
        ) -> object:
            data = context.make_array(signature.args[0])(context, builder, args[0]).data  # type: ignore[attr-defined]
            value = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)  # type: ignore[attr-defined]
            builder.store(value, builder.gep(data, [args[1]]))  # type: ignore[attr-defined]
            return context.get_dummy_value()  # type: ignore[attr-defined]

        return _types.none(array, index, value), codegen


def kernel(function: F) -> F:
    """Compile `function` with numba (nopython, cached), or leave it as Python: a kernel that
    Python calls."""
    if PURE_PYTHON:
        return function
    return make_kernel(function, CACHE)  # type: ignore[no-any-return]


def callee(function: F) -> F:
    """A kernel that only other kernels call: compiled into each kernel that calls it, never on
    its own (jit_callees.py); LLVM decides whether to inline it."""
    if PURE_PYTHON:
        return function
    return make_callee(function, CACHE, forceinline=False)  # type: ignore[no-any-return]


def inline(function: F) -> F:
    """A small callee that LLVM copies into each caller (always inline). A call between kernels
    passes every array field by field and returns through memory; in the hot loops a call costs
    more than these functions' work."""
    if PURE_PYTHON:
        return function
    return make_callee(function, CACHE, forceinline=True)  # type: ignore[no-any-return]


def inline_ir(function: F) -> F:
    """`inline`, copied by numba itself (not LLVM) into each caller: the copies are typed with the
    caller's constant arguments, so a loop specialised on a constant flag loses its test."""
    if PURE_PYTHON:
        return function
    return numba.njit(cache=CACHE, error_model="numpy", _nrt=False, inline="always")(function)  # type: ignore[return-value, call-overload]


def cache_is_warm() -> bool:
    """Whether the compiled kernels are on disk where numba will look (NUMBA_CACHE_DIR when set):
    without them, the first call compiles for seconds."""
    folder = _cache_dirs()[-1]
    # every evaluation runs the periodic driver first (full simulation only as a fallback)
    return PURE_PYTHON or any(folder.glob("periodic.drive-*.nbi"))
