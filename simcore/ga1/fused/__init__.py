"""Fused groups as GA-1 programs: a GEMM with its epilogue, the MLP's two products over row
blocks, and attention over blocks of keys with a running maximum and sum (docs/fusion.md).

`fused_program(group, machine, params)` builds one group's program; `.timing()` times it
exactly from a compact tree, `.program()` is the flat program the reference simulator runs,
`.verify()` checks it against numpy, the hazard replay and the compiled engine.
`param_domains(group)` declares the schedule parameters a search may vary.
"""

from __future__ import annotations

from simcore.fusion.groups import (
    EPILOGUE_STEPS,
    EpilogueGemm,
    FusedAttention,
    FusedGroup,
    FusedGroupError,
    FusedMlp,
    decode,
    prefill,
)
from simcore.ga1.fused.check import ATOL, RTOL, FusedVerification
from simcore.ga1.fused.params import (
    AttentionParams,
    FusedParams,
    FusedParamsError,
    GemmParams,
    MlpParams,
    default_params,
    param_domains,
    params_from,
)
from simcore.ga1.fused.program import FusedProgram, fused_program, slots_needed

__all__ = [
    "EPILOGUE_STEPS",
    "ATOL",
    "RTOL",
    "AttentionParams",
    "EpilogueGemm",
    "FusedAttention",
    "FusedGroup",
    "FusedGroupError",
    "FusedMlp",
    "FusedParams",
    "FusedParamsError",
    "FusedProgram",
    "FusedVerification",
    "GemmParams",
    "MlpParams",
    "decode",
    "default_params",
    "fused_program",
    "param_domains",
    "params_from",
    "prefill",
    "slots_needed",
]
