"""Non-GEMM operations as GA-1 programs on the vector unit (docs/vector.md).

`vector_program(VectorOp(kind, rows, cols, ...), machine, VectorParams(...))` builds one
operation's program; `.timing()` times it exactly from a compact tree, `.program()` is the flat
program the reference simulator runs, `.verify()` checks it against numpy, the hazard replay and
the compiled engine. `param_domains(op)` declares the schedule parameters a search may vary.
"""

from __future__ import annotations

from simcore.ga1.vector.generator import (
    VectorProgram,
    VectorVerification,
    slots_needed,
    vector_program,
)
from simcore.ga1.vector.ops import KINDS, VectorOp, VectorOpError
from simcore.ga1.vector.params import (
    Domain,
    VectorParams,
    VectorParamsError,
    all_params,
    param_domains,
)
from simcore.ga1.vector.reference import ATOL, RTOL

__all__ = [
    "ATOL",
    "KINDS",
    "RTOL",
    "Domain",
    "VectorOp",
    "VectorOpError",
    "VectorParams",
    "VectorParamsError",
    "VectorProgram",
    "VectorVerification",
    "all_params",
    "param_domains",
    "slots_needed",
    "vector_program",
]
