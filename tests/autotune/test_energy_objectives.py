"""Energy and area in the tuner, without running a study: every evaluation of either oracle carries
the energy of its exact counts; energy, edp and area parse and combine as objectives; budgets
are graded (area before a candidate runs, energy after); the plan carries its technology table."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune import oracles
from autotune.cli.commands.tune import build_plan
from autotune.cli.main import build_parser
from autotune.errors import PlanError
from autotune.oracles import configured
from autotune.oracles.measures import AREA, CYCLES, EDP, ENERGY
from autotune.run.plan import RunPlan
from autotune.search.codesign import Codesign, machine_value
from autotune.search.objectives import directions
from autotune.search.problem import Candidate, Problem
from search_spaces.machine import MachineSpace
from simcore.energy import (
    default_technology,
    ga1_cost_of_timing,
    load_technology,
    shipped_table,
    systolic_cost_of,
)
from simcore.ga1.machine import Machine
from simcore.shape import Shape
from workloads import Gemm, Workload

SHAPE = Shape(32, 24, 40)
WORKLOADS = Path(__file__).resolve().parents[2] / "workloads" / "networks"
ENERGY_KEYS = (
    "energy_pj",
    "energy_per_mac_pj",
    "edp",
    "area_mm2",
    "energy_compute_pj",
    "energy_on_chip_pj",
    "energy_off_chip_pj",
)
ZIGZAG = load_technology(shipped_table("zigzag_tpu_like.toml"))


def plan_of(*argv: str) -> RunPlan:
    args = build_parser().parse_args(["tune", *argv])
    plan = build_plan(args)
    plan.validate()
    return plan


def ga1_point() -> tuple[oracles.Oracle, object, dict[str, object], Machine]:
    oracle = oracles.get("ga1")
    machine = Machine(slots=16)
    family = oracle.family("blocked")
    return oracle, family, family.seed_points(SHAPE, machine)[0], machine  # type: ignore[union-attr]


def test_ga1_evaluation_is_costed_from_its_own_timing() -> None:
    oracle, family, point, machine = ga1_point()
    metrics = oracle.evaluate(family, point, SHAPE, machine)  # type: ignore[arg-type]
    assert (
        set(ENERGY_KEYS) <= set(metrics) and "energy_register_pj" not in metrics
    )  # GA-1 counts no registers
    timing = family.generator(point, SHAPE, machine).timing()  # type: ignore[attr-defined]
    cost = ga1_cost_of_timing(machine, timing, default_technology())
    assert metrics["energy_pj"] == pytest.approx(cost.energy_pj) and metrics["macs"] == cost.macs
    assert metrics["edp"] == pytest.approx(cost.energy_pj * metrics["cycles"])  # type: ignore[operator]
    parts = sum(float(metrics[k]) for k in ENERGY_KEYS[4:])  # type: ignore[arg-type]
    assert parts == pytest.approx(float(metrics["energy_pj"]))  # type: ignore[arg-type]
    assert metrics["area_mm2"] == pytest.approx(oracle.machine_area_mm2(machine))
    assert oracle.area_mm2(family, point, SHAPE, machine) == metrics["area_mm2"]  # type: ignore[arg-type]


def test_systolic_evaluation_is_costed_from_its_model_counts() -> None:
    oracle = oracles.get("systolic")
    family = oracle.families((), oracle.default_machine())[0]
    point = family.seed_points(SHAPE, oracle.default_machine())[0]
    metrics = oracle.evaluate(family, point, SHAPE, oracle.default_machine())
    assert set(ENERGY_KEYS) | {"energy_register_pj"} <= set(metrics)
    design = family.design(point)  # type: ignore[attr-defined]
    cost = systolic_cost_of(design, SHAPE, default_technology(), int(metrics["cycles"]))  # type: ignore[call-overload]
    assert metrics["energy_pj"] == pytest.approx(cost.energy_pj) and metrics[
        "area_mm2"
    ] == pytest.approx(cost.area_mm2)
    assert oracle.area_mm2(family, point, SHAPE, oracle.default_machine()) == pytest.approx(
        cost.area_mm2
    )


def test_a_technology_table_configures_a_copy_of_the_oracle() -> None:
    oracle, family, point, machine = ga1_point()
    other = configured(oracle, technology=ZIGZAG)
    assert other is not oracle and other.tech() is ZIGZAG and oracle.tech() == default_technology()
    mine = oracle.evaluate(family, point, SHAPE, machine)  # type: ignore[arg-type]
    theirs = other.evaluate(family, point, SHAPE, machine)  # type: ignore[arg-type]
    assert theirs["cycles"] == mine["cycles"] and theirs["energy_pj"] != mine["energy_pj"]
    assert oracles.get("ga1") is oracle  # the registered oracle is unchanged


@pytest.mark.parametrize(
    "argv, objectives",
    [
        (["--shape", "32x32x32", "--objectives", "cycles,energy"], ("cycles", "energy")),
        (
            ["--shape", "32x32x32", "--search-machine", "--objectives", "cycles, edp ,area"],
            ("cycles", "edp", "area"),
        ),
        (
            [
                "--shape",
                "32x32x32",
                "--search-machine",
                "--objectives",
                "cycles,energy,area,scratchpad_words",
            ],
            ("cycles", "energy", "area", "scratchpad_words"),
        ),
        (
            [
                "--shape",
                "32x32x32",
                "--oracle",
                "systolic",
                "--objectives",
                "cycles,energy,words_per_mac",
            ],
            ("cycles", "energy", "words_per_mac"),
        ),
        (
            [
                "--workload",
                str(WORKLOADS / "chapter.toml"),
                "--search-machine",
                "--objectives",
                "cycles,edp,area",
            ],
            ("cycles", "edp", "area"),
        ),
    ],
)
def test_objectives_parse_and_combine(argv: list[str], objectives: tuple[str, ...]) -> None:
    plan = plan_of(*argv)
    assert plan.objectives == objectives
    measures = plan.objective_measures()
    assert [m.name for m in measures] == list(objectives)
    assert directions(measures) == ["minimize"] * len(objectives)  # energy, edp, area: minimised


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--objectives", "energy,cycles"], "the first objective must be cycles"),
        (["--objectives", "cycles,energy,energy"], "names an objective twice"),
        (["--objectives", "cycles,joules"], "unknown objective(s) joules"),
        (["--area-budget", "0.1"], "needs search_machine"),
        (["--energy-budget", "1e6"], "needs search_machine"),
        (
            ["--objectives", "cycles,area"],
            "cycles,area: area is the same for every schedule on a fixed machine; "
            "trading it against cycles needs search_machine",
        ),
        (
            ["--objectives", "cycles,energy,mxu_cycles"],
            "mxu_cycles is the same for every schedule",
        ),
    ],
)
def test_refused_objectives_and_budgets(argv: list[str], message: str) -> None:
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_of("--shape", "32x32x32", *argv)


def test_objectives_read_their_metric_columns() -> None:
    row = {
        "energy_pj": 5.0,
        "area_mm2": 0.25,
        "edp": 40.0,
        "cycles": 8,
        "total_cycles": 80,
        "total_energy_pj": 50.0,
    }
    assert [m.value(row) for m in (ENERGY, AREA, EDP, CYCLES)] == [5.0, 0.25, 40.0, 8.0]
    assert [machine_value(row, m) for m in (ENERGY, AREA, CYCLES)] == [50.0, 0.25, 80.0]


def budgeted_problem(area: float | None = None, energy: float | None = None) -> Problem:
    oracle = oracles.get("ga1")
    base = Machine(slots=16)
    families = oracle.families(("chapter",), base)
    space = MachineSpace.create(base, None, 128 * 64)
    return Problem(
        SHAPE,
        base,
        families,
        oracle,
        space,
        ("cycles", "energy"),
        area_budget=area,
        energy_budget=energy,
    )


def test_area_budget_is_graded_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = budgeted_problem(area=0.05)
    small = Candidate(
        "blocked",
        {"bi": 1, "bj": 1, "buffers": 1, "order": "row"},
        {"slots": 8, "dma_setup": 16, "dma_words_per_cycle": 8, "mxu_cycles": 8},
    )
    big = Candidate(
        "blocked", small.point, {**small.machine_point, "slots": 32, "dma_words_per_cycle": 64}
    )
    assert problem.fits(small) and not problem.fits(big)
    monkeypatch.setattr(
        type(problem.oracle), "evaluate", lambda *a: pytest.fail("an infeasible machine ran")
    )
    refused = problem.evaluate(big)
    area = problem.oracle.machine_area_mm2(problem.machine_for(big))
    assert not refused.feasible and refused.violation == pytest.approx(area / 0.05 - 1)  # type: ignore[operator]
    assert problem.constraints(refused) == {
        "slots_over": 0.0,
        "area_over": pytest.approx(area / 0.05 - 1),
    }  # type: ignore[operator]


def test_energy_budget_is_graded_after_the_run() -> None:
    free = budgeted_problem()
    candidate = free.seeds()[0]
    energy = float(free.evaluate(candidate).metrics["energy_pj"])
    within, over = budgeted_problem(energy=energy * 1.01), budgeted_problem(energy=energy / 2)
    kept = within.evaluate(candidate)
    assert kept.feasible and within.constraints(kept) == {"slots_over": 0.0, "energy_over": 0.0}
    refused = over.evaluate(candidate)
    assert not refused.feasible and refused.violation == pytest.approx(1.0)  # twice the budget
    assert over.constraints(refused)["energy_over"] == pytest.approx(1.0)


def test_codesign_carries_the_workloads_energy_and_the_machines_area() -> None:
    oracle = oracles.get("ga1")
    base = Machine(slots=16)
    workload = Workload("w", (Gemm("a", Shape(16, 32, 24), 2.0), Gemm("b", Shape(8, 8, 40), 1.0)))
    space = MachineSpace.create(base, None, None)
    search = Codesign(
        workload,
        base,
        oracle.families(("chapter",), base),
        space,
        ("cycles", "energy"),
        oracle,
        area_budget=1.0,
    )
    found = search.evaluate(search.seeds()[0])
    assert found.feasible
    shapes = found.metrics["shapes"]
    energy = sum(s["weight"] * s["energy_pj"] for s in shapes)
    assert found.metrics["energy_pj"] == pytest.approx(energy)
    assert found.metrics["edp"] == pytest.approx(energy * found.metrics["cycles"])
    assert found.metrics["area_mm2"] == pytest.approx(oracle.machine_area_mm2(base))
    assert search.constraints(found) == {"scratchpad_over": 0.0, "area_over": 0.0}
    rows = search.entries(found)
    assert [r.extras["total_energy_pj"] for r in rows] == [pytest.approx(energy)] * 2


def test_the_plan_carries_its_table() -> None:
    plain = RunPlan.of_shape(SHAPE, Machine())
    named_default = RunPlan.of_shape(SHAPE, Machine(), technology=load_technology())
    other = RunPlan.of_shape(SHAPE, Machine(), technology=ZIGZAG)
    gemm = plain.workload.gemms[0]
    assert named_default.technology is None and named_default.identity(gemm) == plain.identity(gemm)
    assert "technology" not in plain.identity(gemm) and "technology" in other.identity(gemm)
    assert plain.run_name(None) != other.run_name(None)
    assert RunPlan.from_json(other.to_json()) == other
    assert other.the_oracle().tech() == ZIGZAG and plain.the_oracle().tech() == default_technology()


def test_codesign_energy_budget_is_graded_on_the_workloads_total() -> None:
    oracle = oracles.get("ga1")
    base = Machine(slots=16)
    workload = Workload("w", (Gemm("a", Shape(16, 32, 24), 2.0),))
    space = MachineSpace.create(base, None, None)
    families = oracle.families(("chapter",), base)
    free = Codesign(workload, base, families, space, ("cycles", "energy"), oracle)
    energy = float(free.evaluate(free.seeds()[0]).metrics["energy_pj"])
    over = Codesign(
        workload, base, families, space, ("cycles", "energy"), oracle, energy_budget=energy / 4
    )
    refused = over.evaluate(over.seeds()[0])
    assert not refused.feasible and refused.violation == pytest.approx(3.0)  # four times the budget
    assert over.constraints(refused) == {"scratchpad_over": 0.0, "energy_over": pytest.approx(3.0)}
    assert over.fits(over.seeds()[0])  # known only once the machine has run
