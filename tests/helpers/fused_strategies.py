"""Hypothesis strategies for fused groups: a group of any kind and size, a schedule from its
domains, and a machine with just the slots that schedule needs (or a few more)."""

from __future__ import annotations

from hypothesis import strategies as st

from simcore.ga1.fused import (
    EPILOGUE_STEPS,
    EpilogueGemm,
    FusedAttention,
    FusedGroup,
    FusedMlp,
    FusedParams,
    slots_needed,
)
from simcore.ga1.fused.search import all_points
from simcore.ga1.machine import Machine


@st.composite
def gemm_groups(draw: st.DrawFn, most: int = 40) -> EpilogueGemm:
    steps = draw(st.lists(st.sampled_from(EPILOGUE_STEPS), max_size=3, unique=True))
    return EpilogueGemm(
        m=draw(st.integers(1, most)),
        k=draw(st.integers(1, most)),
        n=draw(st.integers(1, most)),
        epilogue=tuple(steps),
        batch=draw(st.integers(1, 2)),
        scale=draw(st.sampled_from([0.5, -1.25])) if "scale" in steps else 1.0,
        gelu=draw(st.sampled_from(["tanh", "erf"])),
    )


@st.composite
def mlp_groups(draw: st.DrawFn, most: int = 36) -> FusedMlp:
    return FusedMlp(
        m=draw(st.integers(1, most)),
        d=draw(st.integers(1, most)),
        hidden=draw(st.integers(1, 2 * most)),
        d_out=draw(st.integers(1, most)),
        activation=draw(st.sampled_from(["relu", "gelu", "silu"])),
        bias=draw(st.booleans()),
        gelu=draw(st.sampled_from(["tanh", "erf"])),
    )


@st.composite
def attention_groups(draw: st.DrawFn, most: int = 48) -> FusedAttention:
    causal = draw(st.booleans())
    queries = draw(st.integers(1, most))
    offset = draw(st.integers(0, 12)) if causal else 0
    keys = queries + offset + (draw(st.integers(0, 10)) if causal else 0)
    if not causal:
        keys = draw(st.integers(1, 2 * most))
    return FusedAttention(
        heads=draw(st.integers(1, 2)),
        queries=queries,
        keys=keys,
        head_dim=draw(st.integers(1, 24)),
        causal=causal,
        causal_offset=offset,
        k_layout=draw(st.sampled_from(["transposed", "rows"])),
    )


def groups() -> st.SearchStrategy[FusedGroup]:
    return st.one_of(gemm_groups(), mlp_groups(), attention_groups())


@st.composite
def fused_cases(
    draw: st.DrawFn,
    kinds: st.SearchStrategy[FusedGroup] | None = None,
    tiles: tuple[int, ...] = (8, 4, 2),
) -> tuple[FusedGroup, FusedParams, Machine]:
    """A group, one of its schedules, and a machine that fits it."""
    group = draw(kinds if kinds is not None else groups())
    params = draw(st.sampled_from(all_points(group)))
    T = draw(st.sampled_from(tiles))
    need = slots_needed(group, Machine(T=T), params)
    machine = Machine(
        T=T,
        slots=need + draw(st.integers(0, 2)),
        dma_setup=draw(st.sampled_from([16, 0, 40])),
        mxu_cycles=draw(st.sampled_from([8, 2, 30])),
        mxu_fill=draw(st.sampled_from([8, 0, 3])),
        vpu_lanes=draw(st.sampled_from([16, 4])),
        sfu_lanes=draw(st.sampled_from([4, 1])),
    )
    return group, params, machine
