"""Transfer (`tune --transfer`): seed a new study with the best schedules of earlier studies on
nearby shapes and machines, scaled to the new shape.

A donor is a finished single-product study of the same oracle (its stored identity names the
shape and machine). Nearness is a distance in doublings: the tile counts of M, K and N, the
machine's parameters, the scratchpad counted twice (it decides which schedules fit). The nearest
`DONORS` studies within `MAX_DISTANCE` give their `PER_DONOR` best distinct schedules; each is
scaled by the new search (`Search.adopt`: a parameter at the top of its range, a block spanning
the whole matrix, stays at the top) and kept if it fits. Every seed is an enqueued trial whose
user attributes say where it came from (study, trial, shape, machine, cycles, storage).

A workload run transfers between its own studies without being asked: each GEMM's study starts
from the best schedules of the run's finished studies on the nearest other shapes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

import optuna
from optuna.trial import TrialState

from autotune import record
from autotune.errors import AutotuneError
from autotune.oracles import Oracle
from autotune.search.problem import Candidate, Search
from autotune.storage import read_studies
from simcore.shape import Shape, parse_shape

DONORS = 3  # studies seeds are taken from, nearest first
PER_DONOR = 3  # best distinct schedules taken from each
MAX_DISTANCE = 4.0  # in doublings (see distance)
SLOT_WEIGHT = 2.0  # a doubling of the scratchpad counts twice


@dataclass(frozen=True)
class Donor:
    study: str
    storage: str
    shape: Shape
    machine: Any
    distance: float


def distance(shape: Shape, machine: Any, other_shape: Shape, other: Any, oracle: Oracle) -> float:
    """Doublings between two problems: of each tile count, and of each machine parameter (the
    slots weighted by SLOT_WEIGHT); machines that differ in a value that is not a number (an
    architecture) are not near."""
    ours, theirs = (
        shape.tiles(oracle.tile_edge(machine)),
        other_shape.tiles(oracle.tile_edge(other)),
    )
    total = sum(abs(math.log2(a / b)) for a, b in zip(ours, theirs))
    mine, yours = machine.as_dict(), other.as_dict()
    for name, value in mine.items():
        their = yours.get(name, value)
        if not all(isinstance(v, (int, float)) for v in (value, their)):
            if value != their:
                return math.inf
            continue
        weight = SLOT_WEIGHT if name == "slots" else 1.0
        total += weight * abs(math.log2(max(value, 1) / max(their, 1)))
    return total


def find_donors(
    urls: list[str], oracle: Oracle, shape: Shape, machine: Any, exclude: str
) -> list[Donor]:
    """The nearest studies of the same oracle on one product, nearest first (ties by name)."""
    found = []
    for url in urls:
        for study in _studies(url):
            ident = record.study_identity(study) or {}
            if (
                study.study_name == exclude
                or ident.get("oracle") != oracle.name
                or "shape" not in ident
                or ident.get("machine_space")
            ):
                continue
            try:
                their_shape = parse_shape(str(ident["shape"]))
                their_machine = oracle.parse_machine(str(ident["machine"]))
            except (ValueError, TypeError, KeyError):
                continue  # a study this version cannot read is no donor
            gap = distance(shape, machine, their_shape, their_machine, oracle)
            if gap <= MAX_DISTANCE:
                found.append(Donor(study.study_name, url, their_shape, their_machine, gap))
    return sorted(found, key=lambda d: (d.distance, d.study, d.storage))[:DONORS]


def best_points(study: optuna.Study, count: int) -> list[tuple[dict[str, object], int, float]]:
    """A study's `count` best distinct feasible schedules: (parameters, trial, value)."""
    ranked: dict[str, tuple[dict[str, object], int, float]] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        try:
            found = record.TrialRecord.of_trial(trial)
        except AutotuneError:
            continue  # a record this version cannot read gives no seed
        if found is None or not found.feasible or not found.evaluation.point or not trial.values:
            continue
        point = dict(found.evaluation.point)
        key = json.dumps(point, sort_keys=True)
        if key not in ranked or trial.values[0] < ranked[key][2]:
            ranked[key] = (point, trial.number, float(trial.values[0]))
    return sorted(ranked.values(), key=lambda item: (item[2], item[1]))[:count]


def transfer_seeds(
    search: Search, urls: list[str], oracle: Oracle, shape: Shape, machine: Any, exclude: str
) -> list[tuple[Candidate, dict[str, object]]]:
    """Candidates scaled from the donors' best schedules, each with its provenance."""
    donors = find_donors(urls, oracle, shape, machine, exclude)
    return scaled_seeds(
        search,
        [(next(s for s in _studies(d.storage) if s.study_name == d.study), d) for d in donors],
    )


def sibling_seeds(
    search: Search,
    siblings: Sequence[tuple[optuna.Study, Shape, str]],
    oracle: Oracle,
    shape: Shape,
    machine: Any,
) -> list[tuple[Candidate, dict[str, object]]]:
    """Within one workload run: seeds from the nearest finished studies of its other shapes
    (same machine), each given as (study, shape, storage address)."""
    donors = [
        (
            study,
            Donor(
                study.study_name,
                url,
                their,
                machine,
                distance(shape, machine, their, machine, oracle),
            ),
        )
        for study, their, url in siblings
        if their != shape
    ]
    near = sorted(
        (d for d in donors if d[1].distance <= MAX_DISTANCE),
        key=lambda d: (d[1].distance, d[1].study),
    )
    return scaled_seeds(search, near[:DONORS])


def scaled_seeds(
    search: Search, donors: Sequence[tuple[optuna.Study, Donor]]
) -> list[tuple[Candidate, dict[str, object]]]:
    """Each donor's PER_DONOR best schedules scaled to the search, those that fit, with where they came from."""
    seeds: list[tuple[Candidate, dict[str, object]]] = []
    for study, donor in donors:
        for params, number, value in best_points(study, PER_DONOR):
            candidate = search.adopt(params, donor.shape, donor.machine)
            if candidate is None:
                continue
            seeds.append(
                (
                    candidate,
                    {
                        "study": donor.study,
                        "trial": number,
                        "shape": str(donor.shape),
                        "machine": donor.machine.key(),
                        "cycles": value,
                        "storage": donor.storage,
                        "distance": round(donor.distance, 3),
                    },
                )
            )
    return seeds


def _studies(url: str) -> list[optuna.Study]:
    try:
        return read_studies(url)
    except AutotuneError:
        return []  # an unreadable storage holds no donor
