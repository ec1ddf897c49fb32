"""What the benchmarks of the optimum (docs/benchmarks/optimum.md) share: lower_bound as it was
before the optimum table (its `old bound` column), and the tuner's best on an instance."""

from __future__ import annotations

import math
import warnings

import optuna

from autotune.results import leaderboard as board
from autotune.run import pipeline
from autotune.run.plan import RunPlan
from autotune.storage import MEMORY
from simcore.ga1.lower_bounds import compute_pipeline_bound, window_products
from simcore.ga1.machine import Machine
from simcore.ga1.program import Program
from simcore.shape import Shape


def previous_bound(shape: Shape, machine: Machine) -> int:
    """lower_bound as it was before this benchmark: the pipeline bound, and the I/O bound whose
    windows hold S tiles written before them (I >= X (ceil(P / F(S + X)) - 1) + 1)."""
    Mt, Kt, Nt = shape.tiles(machine.T)
    P, S, compulsory = Mt * Kt * Nt, machine.slots, Mt * Kt + Kt * Nt + Mt * Nt
    x_max = min(3 * S + 8, compulsory - S)
    tiles = compulsory
    if x_max >= 1:
        F = window_products(S + x_max, Mt, Nt, Mt * Nt)
        tiles = max(
            [compulsory]
            + [X * (math.ceil(P / F[S + X]) - 1) + 1 for X in range(1, x_max + 1) if F[S + X] > 0]
        )
    return max(compute_pipeline_bound(shape, machine), tiles * machine.dma_cycles)


# The spaces the tables of docs/benchmarks/optimum.md were measured with (the plain families);
# bench_proven_gap.py compares others, the default among them.
TABLE_SPACES = "chapter,general,strips"


def tuner_best(
    shape: Shape, machine: Machine, trials: int, seed: int, spaces: str = TABLE_SPACES
) -> tuple[int, str, Program]:
    """The tuner's best schedule on this instance: cycles, family, program (Optuna kept quiet).
    `spaces` as --space takes them ("": the default spaces)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    spec = RunPlan.of_shape(shape, machine, spaces=spaces)
    name = f"optimum-{shape}-{machine.key()}".replace(",", "-").replace("=", "")
    options = pipeline.RunOptions(
        trials=trials, seed=seed, storage=MEMORY, verify_top=1, write=False, study=name
    )
    outcome = pipeline.run(spec, options)
    top = board.json_rows(outcome.studies[0].frame.head(1))[0]
    found = board.family_of(str(top["family"]))
    assert found is not None and top["verified"], top
    oracle, family = found
    program = oracle.program(family, board.schedule_point(top), shape, machine)
    assert isinstance(program, Program)
    return int(top["cycles"]), str(top["family"]), program  # type: ignore[call-overload]
