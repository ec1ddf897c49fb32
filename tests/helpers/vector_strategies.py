"""Hypothesis strategies for vector operations: an operation of any kind and size, a schedule
from its domains, and a machine with just the slots that schedule needs (or a few more)."""

from __future__ import annotations

from hypothesis import strategies as st

from simcore.ga1.machine import Machine
from simcore.ga1.vector import KINDS, VectorOp, VectorParams, all_params, slots_needed
from simcore.ga1.vector.ops import GELU_FORMS


@st.composite
def vector_ops(draw: st.DrawFn, most_rows: int = 40, most_cols: int = 70) -> VectorOp:
    kind = draw(st.sampled_from(sorted(KINDS)))
    causal = kind == "softmax" and draw(st.booleans())
    return VectorOp(
        kind,
        rows=draw(st.integers(1, most_rows)),
        cols=draw(st.integers(1, most_cols)),
        batch=draw(st.integers(1, 3)),
        scale=draw(st.sampled_from([1.0, 0.125, -0.7])) if kind in ("softmax", "scale") else 1.0,
        causal=causal,
        causal_offset=draw(st.integers(0, 20)) if causal else 0,
        eps=draw(st.sampled_from([1e-5, 1e-2])),
        gelu=draw(st.sampled_from(GELU_FORMS)),
    )


@st.composite
def vector_cases(
    draw: st.DrawFn, tiles: tuple[int, ...] = (8, 4, 2), most_rows: int = 40, most_cols: int = 70
) -> tuple[VectorOp, VectorParams, Machine]:
    """An operation, one of its schedules, and a machine that fits it."""
    op = draw(vector_ops(most_rows, most_cols))
    params = draw(st.sampled_from(all_params(op)))
    T = draw(st.sampled_from(tiles))
    need = slots_needed(op, Machine(T=T), params)
    machine = Machine(
        T=T,
        slots=need + draw(st.integers(0, 2)),
        dma_setup=draw(st.sampled_from([16, 0, 40])),
        vpu_lanes=draw(st.sampled_from([16, 4])),
        sfu_lanes=draw(st.sampled_from([4, 1])),
    )
    return op, params, machine
