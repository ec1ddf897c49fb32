"""Fused programs verified: on random groups, shapes, schedules and machines, the outputs equal
numpy's within the stated tolerance, the hazard replay is clean, and the compiled engine, the
tree timed periodically and the tree timed in full all equal the reference simulator; the tree
is the flat program, instruction by instruction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from simcore.ga1.engine.programs import time_program
from simcore.ga1.fused import (
    AttentionParams,
    EpilogueGemm,
    FusedAttention,
    FusedMlp,
    GemmParams,
    MlpParams,
    decode,
    fused_program,
    prefill,
)
from simcore.ga1.fused.search import feasible_points
from simcore.ga1.machine import Machine
from simcore.ga1.vector.emit import expand, timing_fields
from simcore.ga1.vector.timing import FULL, PERIODIC
from tests.helpers.fused_strategies import attention_groups, fused_cases

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=150, **SETTINGS)
@given(case=fused_cases())
def test_random_fused_programs_are_verified(case) -> None:
    group, params, machine = case
    verification = fused_program(group, machine, params).verify(seed=3)
    assert verification.ok, f"{group.describe()} {params}: {verification.describe()}"


@settings(max_examples=120, **SETTINGS)
@given(case=fused_cases(kinds=attention_groups()))
def test_fused_attention_equals_numpy_on_random_shapes(case) -> None:
    """softmax(Q K^T / sqrt(d)) V, causal or not, K by rows or transposed, any schedule."""
    group, params, machine = case
    verification = fused_program(group, machine, params).verify(seed=11)
    assert verification.ok, f"{group.describe()} {params}: {verification.describe()}"


def _same_as_flat(group, params, machine) -> None:
    fused = fused_program(group, machine, params)
    program, tree = fused.program(), fused.tree()
    assert np.array_equal(
        timing_fields(np.concatenate(list(expand(tree)))), timing_fields(program.code)
    )
    want = time_program(machine, program)
    for method in (PERIODIC, FULL):
        got = fused.timing(method)
        assert (got.cycles, got.busy, got.loads, got.stores, got.products) == (
            want.cycles, want.busy, want.loads, want.stores, want.products,
        ), method  # fmt: skip


@pytest.mark.slow
@settings(max_examples=150, **SETTINGS)
@given(case=fused_cases(tiles=(2,)))
def test_the_timing_tree_is_the_program_and_times_as_it_does(case) -> None:
    """Tiles of 2, so every repeat of the tree is used."""
    _same_as_flat(*case)


@pytest.mark.parametrize(
    "group",
    [
        EpilogueGemm(19, 9, 23, ("bias", "silu"), batch=2),
        FusedMlp(19, 13, 61, 11),
        FusedAttention(2, 9, 53, 6),
        prefill(2, 41, 6),
        decode(3, 67, 5, "rows"),
    ],
    ids=lambda g: g.describe(),
)
def test_schedules_across_a_groups_domains_time_as_their_program(group) -> None:
    """Up to 60 feasible schedules, spread evenly over the domains' points."""
    machine = Machine(T=2, slots=48)
    points = feasible_points(group, machine)
    for params in points[:: max(1, len(points) // 60)]:
        _same_as_flat(group, params, machine)


def test_a_one_tile_gemm_with_relu_timed_by_hand() -> None:
    # zero C; load A, load B (20 each); the product 40-48, readable at 56 (fill 8); relu 56-61
    # (64 / 16 + 1); the store 61-81
    group = EpilogueGemm(8, 8, 8, ("relu",))
    params = GemmParams(bm=1, bn=1, buffers=1)
    timing = fused_program(group, Machine(), params).timing()
    assert (timing.cycles, timing.loads, timing.stores, timing.products) == (81, 2, 1, 1)


def test_verification_reports_each_check() -> None:
    group = FusedAttention(1, 12, 40, 8, causal=True, causal_offset=28)
    verification = fused_program(group, Machine(slots=32), AttentionParams(bk=2)).verify()
    assert verification.ok and verification.label == "verified"
    assert verification.worst <= 1.0 and len(set(verification.timings)) == 1
    assert "hazard replay clean" in verification.describe()


def test_llm_sized_attention_is_timed_from_its_tree() -> None:
    machine = Machine(slots=128)
    fused = fused_program(decode(32, 2048, 128), machine, AttentionParams(bk=4, s_buffers=2))
    timing = fused.timing()
    assert timing.method == PERIODIC and fused.instructions() > 600_000
    per_head = 2 * 256 * 16 + 16  # K and V tiles, Q tiles
    assert (timing.loads, timing.stores) == (32 * per_head, 32 * 16)


@pytest.mark.slow
def test_a_large_group_is_verified_on_its_reduced_stand_in() -> None:
    machine = Machine(slots=96)
    fused = fused_program(prefill(4, 300, 64), machine, AttentionParams(bq=2, bk=4))
    verification = fused.verify(most=50_000)
    assert verification.label == "verified-reduced", verification.describe()
    assert verification.reduced is not None and "causal" in verification.reduced


def test_periodic_timing_equals_full_timing_at_a_middle_size() -> None:
    machine = Machine(slots=64)
    for group, params in [
        (prefill(3, 200, 32), AttentionParams(bq=2, bk=2, s_buffers=2)),
        (FusedMlp(100, 64, 256, 64, bias=False), MlpParams(bm=2, bh=2, h_buffers=2)),
        (EpilogueGemm(120, 64, 200, ("gelu",)), GemmParams(bm=2, bn=4, c_buffers=2)),
    ]:
        fused = fused_program(group, machine, params)
        periodic, full = fused.timing(PERIODIC), fused.timing(FULL)
        assert periodic.method == PERIODIC
        assert (periodic.cycles, periodic.busy, periodic.loads, periodic.stores) == (
            full.cycles, full.busy, full.loads, full.stores,
        )  # fmt: skip
