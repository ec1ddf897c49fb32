"""Fusion's search parameters declared as data: a region's `fuse` choice names each set of
disjoint candidates, a group's schedule parameters are its kind's domains, and a point fits
exactly when its violation is zero."""

from __future__ import annotations

from search_spaces.domains import Choice
from search_spaces.fusion import (
    APART,
    feasible_points,
    fuse_param,
    ga1_params,
    ga1_points,
    ga1_violation,
)
from simcore.fusion.groups import EpilogueGemm, FusedMlp, prefill
from simcore.ga1.fused.params import param_domains
from simcore.ga1.machine import Machine
from workloads.fusion_groups import regions
from workloads.networks import build


def test_fuse_names_every_choice_of_a_region() -> None:
    mlp = next(r for r in regions(build("gpt2", seq=32)) if len(r.candidates) == 5)
    param = fuse_param(mlp.choices())
    assert isinstance(param.domain, Choice) and param.structural
    labels = param.domain.values()
    assert labels[0] == APART and len(labels) == len(set(labels)) == 10
    assert "mlp h.mlp.c_fc..h.mlp.c_proj.bias" in labels


def test_schedule_parameters_are_the_kinds_domains() -> None:
    for group in (
        EpilogueGemm(64, 32, 48, ("bias",)),
        FusedMlp(16, 32, 64, 32),
        prefill(2, 64, 16),
    ):
        names = [p.name for p in ga1_params(group)]
        assert names == [d.name for d in param_domains(group)]


def test_a_point_fits_exactly_when_its_violation_is_zero() -> None:
    machine = Machine(slots=24)
    group = FusedMlp(64, 64, 128, 64)
    fits, fewest = feasible_points(group, machine)
    every = list(ga1_points(group))
    assert 0 < len(fits) < len(every)
    assert [p for p in every if ga1_violation(group, p, machine) == 0] == fits
    assert fewest == min(ga1_violation(group, p, Machine(slots=3)) for p in every) + 3
