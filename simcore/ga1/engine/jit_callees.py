"""The numba dispatchers behind jit.py's decorators: kernels (called from Python, compiled to
machine code and cached) and callees (called only by kernels, compiled into them).

Numba compiles every jitted function it meets to machine code of its own, with the code of all it
calls linked in and optimised again; each caller repeats that work with the callee inside it. A
helper six calls deep below a kernel is optimised and compiled seven times, and the engine's
periodic driver sits on such a tree. A function only kernels call needs none of it: a callee is
typed and lowered to LLVM once per signature, and its LLVM code (optimised function by function)
is linked into the kernels that call it, where LLVM optimises it, inlines it and emits machine
code once, with them. A callee has no Python wrapper and no disk cache of its own; the kernels
that hold it are cached.

Calls between the engine's functions are typed with plain argument types: numba would compile a
callee once more for each constant argument, and for each constant type inference passes through
on its way to a loop variable's type, code that no kernel keeps.

The machinery uses numba's compiler internals (a code library and a lowering pass of its own).
`AVAILABLE` is False when the installed numba lacks them: callees are then ordinary numba
functions (correct, slower to compile).
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable

import numba
from numba.core import types

OPTIONS: dict[str, Any] = {
    "nopython": True,
    "error_model": "numpy",  # a division by zero is the hardware's, not a Python exception
    "_nrt": False,  # kernels never allocate (jit.py)
    "no_cfunc_wrapper": True,  # no kernel is passed to C as a function pointer
}

try:
    from numba.core.codegen import JITCodeLibrary
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import LoweringPass, register_pass
    from numba.core.registry import CPUDispatcher
    from numba.core.typed_passes import AnnotateTypes

    AVAILABLE = True
except ImportError:  # pragma: no cover - another numba's layout
    AVAILABLE = False


if AVAILABLE:

    class _PlainDispatcher(CPUDispatcher):  # type: ignore[misc, valid-type]
        """A dispatcher typed for plain argument types at every call from compiled code."""

        def get_call_template(self, args: Any, kws: Any) -> Any:
            plain = tuple(types.unliteral(a) for a in args)
            return super().get_call_template(plain, {k: types.unliteral(v) for k, v in kws.items()})

    class _CalleeLibrary(JITCodeLibrary):  # type: ignore[misc, valid-type]
        """LLVM code that only its callers' libraries optimise and compile."""

        def _optimize_final_module(self) -> None:
            pass  # optimised in each caller, together with it

        def _finalize_final_module(self) -> None:
            # No machine code; numba still stores each function's environment pointer, so its
            # global gets a cell of its own (no kernel reads it: they never touch Python objects).
            engine = self._codegen._engine
            self._environment_cells = []
            for variable in self._final_module.global_variables:
                name = variable.name
                if variable.is_declaration or not name.startswith("_ZN08NumbaEnv"):
                    continue
                if engine.is_symbol_defined(name):
                    continue
                cell = ctypes.c_void_p(0)
                self._environment_cells.append(cell)
                engine.add_global_mapping(variable, ctypes.addressof(cell))
            self._finalized = True

    @register_pass(mutates_CFG=False, analysis_only=True)
    class _LowerIntoCalleeLibrary(LoweringPass):  # type: ignore[misc, valid-type]
        _name = "engine_callee_library"

        def __init__(self) -> None:
            LoweringPass.__init__(self)

        def run_pass(self, state: Any) -> bool:
            state.library = _CalleeLibrary(state.targetctx.codegen(), state.func_id.func_qualname)
            return False

    class _CalleePipeline(CompilerBase):  # type: ignore[misc, valid-type]
        def define_pipelines(self) -> list[Any]:
            manager = DefaultPassBuilder.define_nopython_pipeline(self.state)
            manager.add_pass_after(_LowerIntoCalleeLibrary, AnnotateTypes)
            manager.finalize()
            return [manager]

    class _CalleeDispatcher(_PlainDispatcher):
        """A callee; a call from Python (a test's) runs an ordinary compiled copy."""

        _from_python: Any = None
        cache_from_python = False

        def __call__(self, *args: Any, **kws: Any) -> Any:
            if self._from_python is None:
                self._from_python = make_kernel(self.py_func, self.cache_from_python)
            return self._from_python(*args, **kws)


def make_kernel(function: Callable[..., Any], cache: bool) -> Any:
    """A kernel: compiled to machine code on first call, callable from Python, cached on disk."""
    if not AVAILABLE:  # pragma: no cover
        return numba.njit(cache=cache, **_plain_options())(function)
    dispatcher = _PlainDispatcher(py_func=function, locals={}, targetoptions=dict(OPTIONS))
    if cache:
        dispatcher.enable_caching()
    return dispatcher


def make_callee(function: Callable[..., Any], cache: bool, forceinline: bool) -> Any:
    """A callee: compiled into the kernels that call it (with forceinline, inlined into them)."""
    if not AVAILABLE:  # pragma: no cover
        return numba.njit(cache=cache, forceinline=forceinline, **_plain_options())(function)
    options = {**OPTIONS, "no_cpython_wrapper": True, "forceinline": forceinline}
    dispatcher = _CalleeDispatcher(
        py_func=function, locals={}, targetoptions=options, pipeline_class=_CalleePipeline
    )
    dispatcher.cache_from_python = cache
    return dispatcher


def _plain_options() -> dict[str, Any]:
    return {k: v for k, v in OPTIONS.items() if k != "nopython"}
