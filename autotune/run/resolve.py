"""A run's settings, as the command line's flags and the Python API's keywords give them, turned
into a `RunPlan` (what is tuned) and `RunOptions` (how it is run). Both front ends call the
functions here, so one setting means the same in both; settings keep the plan's names
(`spaces`, `objectives`, `search_machine`, `workload`, ...).

Nothing here imports Optuna, pandas, numba (or numpy) until a plan is made: the command line
reads the defaults below while it builds its parser."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from autotune import oracles
from autotune import settings as declared
from autotune.errors import PlanError, SettingTypeError, Text, ref
from autotune.oracles.capabilities import Architectures, MachineSearch
from autotune.settings import DEFAULT_TRIALS, SHORT_TRIALS  # noqa: F401 - the run's defaults, also here
from simcore.shape import Shape, ShapeError, parse_shape
from workloads import (
    DynamicShapeError,
    Workload,
    WorkloadError,
    bundled_workloads,
    load_workload,
)

if TYPE_CHECKING:
    from autotune.oracles import Oracle
    from autotune.run.options import RunOptions
    from autotune.run.plan import RunPlan

# The plan's fields that `plan_of` takes in another form, or that the run sets itself (the
# sampler's encoding); every other field of RunPlan is a setting given as it is stored.
_GIVEN = frozenset(
    {"workload", "oracle", "machine", "arch", "spaces", "objectives", "pe_budget", "input_shapes"}
)
_NOT_PLAIN = _GIVEN | {"single", "encoding"}


def plan_of(
    shape: Shape | str | None = None,
    *,
    workload: str | Path | Workload | None = None,
    oracle: str | None = None,
    machine: Any = None,
    arch: str | os.PathLike[str] | None = None,
    spaces: str | Sequence[str] | None = None,
    objectives: str | Sequence[str] | None = None,
    pe_budget: int | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    **settings: Any,
) -> RunPlan:
    """The plan of one product (`shape`) or of a `workload` (a file of any installed format,
    workloads.formats: TOML, CSV, a SCALE-Sim topology, an ONNX model...; a bundled network's name;
    or a `Workload`; `input_shapes` fixes an ONNX model's dynamic input shapes by input name). `machine` is the oracle's machine, `KEY=VALUE,...` text or a mapping of its
    keys (None: the oracle's default); `arch` a machine with its memory system, a bundled
    architecture's name or a file, which `machine`'s KEY=VALUE overrides change (it implies the
    oracle that takes architectures when `oracle` is None, the default GA-1 otherwise); `spaces` and `objectives` are comma-separated names or
    sequences of names (None: the oracle's defaults). `pe_budget` is the systolic oracle's
    budget of processing elements, or a co-design's most MACs per cycle. `technology` is an
    energy and area table (a TOML file, or a `simcore.energy.Technology`; None: the shipped
    one). Other settings are the plan's fields (`search_machine`, `machine_range`,
    `area_budget`, `energy_budget`, ...). The pipeline validates the plan."""
    from autotune.run.plan import RunPlan  # the searches' modules: loaded once a plan is made

    plain = {f.name for f in dataclasses.fields(RunPlan)} - _NOT_PLAIN
    unknown = sorted(set(settings) - plain)
    if unknown:
        known = sorted(plain | _GIVEN)
        raise TypeError(f"unknown setting(s) {', '.join(unknown)} (known: {', '.join(known)})")
    for name, value in {**settings, "pe_budget": pe_budget}.items():
        if name in declared.SETTINGS and not isinstance(value, (str, os.PathLike)):
            declared.check(name, value)  # as the command line's flag takes it
    found = oracle_for(oracle, arch)
    # An oracle that searches machines takes pe_budget as a co-design's setting (most MACs per
    # cycle); for any other it is a parameter of its machine (`machine pe_budget=N`).
    codesign_budget = pe_budget is not None and found.capability(MachineSearch) is not None
    the_machine = machine_of(found, machine, arch, pe_budget=None if codesign_budget else pe_budget)
    if codesign_budget:
        if shape is not None or not settings.get("search_machine"):
            raise PlanError(
                Text(
                    ref("pe_budget", pe_budget),
                    " bounds a co-design (a workload with ",
                    ref("search_machine"),
                    f"): the {found.name} machine has no PE budget",
                ),
                setting="pe_budget",
            )
        settings["pe_budget"] = pe_budget
    settings.update(
        oracle=found.name,
        spaces=_spaces(spaces),
        objectives=_objectives(
            objectives,
            found,
            the_machine,
            workload is not None and not settings.get("search_machine"),
        ),
    )
    if isinstance(settings.get("technology"), (str, os.PathLike)):
        settings["technology"] = _technology(settings["technology"])
    if shape is None and workload is None:
        raise PlanError("give a shape (one product) or a workload (several)", setting="shape")
    if shape is not None and workload is not None:
        raise PlanError("give a shape or a workload, not both", setting="workload")
    if shape is not None:
        if input_shapes:
            raise PlanError(
                Text(ref("input_shapes"), " apply to an ONNX workload, not to a shape"),
                setting="input_shapes",
            )
        return RunPlan.of_shape(_shape(shape), the_machine, **settings)
    return RunPlan(_workload(workload, input_shapes), the_machine, False, **settings)


def options_of(
    plan: RunPlan,
    *,
    trials: int | None = None,
    results: str | os.PathLike[str] = "results",
    **options: Any,
) -> RunOptions:
    """How the plan is run: `trials`, the finished trials each study holds when the run ends
    (None: 1000 for one product, 40 per GEMM of a workload or for a co-design; `more_trials=N`
    instead runs N more than it holds), the `results` folder, and RunOptions' other fields by name (`sampler`,
    `seed`, `study`, `storage`, `workers`, `timeout`, ...)."""
    from autotune.run.options import RunOptions  # Optuna and pandas: only once a run is made

    known = option_names()
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    if trials is not None and options.get("more_trials") is not None:
        raise PlanError(
            Text(
                "give ",
                ref("trials"),
                " (the trials a study holds at the end) or ",
                ref("more_trials"),
                " (trials added to those it holds), not both",
            ),
            setting="more_trials",
        )
    for name, value in {"trials": trials, **options}.items():
        if name in declared.SETTINGS:
            declared.check(name, value)  # as the command line's flag takes it
    count = trials if trials is not None else DEFAULT_TRIALS if plan.single else SHORT_TRIALS
    if not isinstance(results, (str, os.PathLike)):
        raise SettingTypeError(
            Text(ref("results"), f" must be a folder's path, got {type(results).__name__}"),
            setting="results",
        )
    return RunOptions(trials=count, results=Path(results), **options)


def option_names() -> frozenset[str]:
    """The names `options_of` takes besides `trials` and `results`."""
    from autotune.run.options import RunOptions

    return frozenset(f.name for f in dataclasses.fields(RunOptions)) - {"trials", "results"}


def oracle_for(name: str | None, arch: str | os.PathLike[str] | None = None) -> Oracle:
    """The oracle `name`; None: the first installed one that takes architectures when `arch`
    is given, else the default. PlanError for an oracle that takes no architecture."""
    if name is None and arch is not None:
        for candidate in oracles.names():
            if oracles.get(candidate).capability(Architectures) is not None:
                return oracles.get(candidate)
    found = oracles.get(name or oracles.DEFAULT_ORACLE)
    if arch is not None and found.capability(Architectures) is None:
        raise PlanError(
            Text(
                ref("arch"),
                f" describes a systolic machine with its memory: the {found.name} oracle takes "
                "no architecture",
            ),
            setting="arch",
        )
    return found


def machine_of(
    oracle: Oracle,
    machine: Any = None,
    arch: str | os.PathLike[str] | None = None,
    **keys: int | None,
) -> Any:
    """The oracle's machine of `machine`: None (its default), `KEY=VALUE,...` text, a mapping
    of its keys, or a machine of its own; each of `keys` that is not None sets that machine
    parameter, and one given both ways with two values is an error. With `arch`, the machine
    of that architecture, changed by the KEY=VALUE overrides of `machine`."""
    wanted = {key: value for key, value in keys.items() if value is not None}
    if (
        machine is not None
        and not isinstance(machine, (str, Mapping))
        and not hasattr(machine, "as_dict")
    ):
        raise SettingTypeError(
            Text(
                ref("machine"),
                f" must be KEY=VALUE text, a mapping or a {oracle.name} machine, got "
                f"{type(machine).__name__} {machine!r}"[:200],
            ),
            setting="machine",
        )
    if machine is not None and not isinstance(machine, (str, Mapping)):
        given: dict[str, object] = dict(machine.as_dict())
        items: list[str] = []
    else:
        items = (
            [f"{k}={v}" for k, v in machine.items()]
            if isinstance(machine, Mapping)
            else [part.strip() for part in (machine or "").split(",") if part.strip()]
        )
        given = {k.strip(): v.strip() for k, _, v in (item.partition("=") for item in items)}
    for key, value in wanted.items():
        if key in given and str(given[key]) != str(value):
            raise PlanError(
                f"{key} {value} and machine {key}={given[key]} disagree: give it once",
                setting="machine",
            )
        if key not in given:
            items.append(f"{key}={value}")
    if machine is not None and not isinstance(machine, (str, Mapping)):
        if arch is not None:
            raise PlanError(Text("give a machine or ", ref("arch"), ", not both"), setting="arch")
        return machine
    if arch is not None:
        return _arch_machine(oracle, str(arch), ",".join(items))
    try:
        return oracle.parse_machine(",".join(items))
    except ValueError as exc:
        raise PlanError(str(exc), setting="machine") from None


def _arch_machine(oracle: Oracle, arch: str, overrides: str) -> Any:
    """The architecture alone first (a fault of the file names `arch`), then its overrides (a
    fault of theirs names `machine`)."""
    maker = oracle.capability(Architectures)
    assert maker is not None  # oracle_for chose an oracle that takes architectures
    try:
        found = maker.arch_machine(arch)
    except ValueError as exc:
        raise PlanError(str(exc), setting="arch") from None
    if not overrides:
        return found
    try:
        return maker.arch_machine(arch, overrides)
    except ValueError as exc:
        raise PlanError(str(exc), setting="machine") from None


def _technology(path: str | os.PathLike[str]) -> Any:
    from simcore.energy import TechnologyError, load_technology

    try:
        return load_technology(Path(path))
    except TechnologyError as exc:
        raise PlanError(f"{path}: {str(exc).splitlines()[0]}", setting="technology") from None


def _shape(shape: Shape | str) -> Shape:
    if isinstance(shape, Shape):
        return shape
    try:
        return parse_shape(str(shape))
    except ShapeError as exc:
        raise PlanError(str(exc), setting="shape") from None


def _workload(
    workload: str | Path | Workload | None, input_shapes: Mapping[str, Sequence[int]] | None
) -> Workload:
    if isinstance(workload, Workload):
        return workload
    shapes = {name: tuple(int(d) for d in dims) for name, dims in (input_shapes or {}).items()}
    try:
        return load_workload(workload_source(str(workload)), shapes or None)
    except DynamicShapeError as exc:
        raise PlanError(str(exc), setting="input_shapes") from None
    except WorkloadError as exc:
        raise PlanError(str(exc)) from None  # the message names the workload file


def workload_source(path: str | Path) -> str | Path:
    """`path` as load_workload reads it. A folder is never a workload file: a bare name that
    is a folder here and a bundled network's name is that network; any other folder is refused
    (WorkloadError)."""
    if not Path(path).is_dir():
        return path
    bundled = bundled_workloads()
    text = str(path)
    if "/" not in text and os.sep not in text and text in bundled:
        return bundled[text]
    raise WorkloadError(f"workload {text} is a directory, not a workload file")


def _spaces(spaces: str | Sequence[str] | None) -> str:
    if spaces is None:
        return ""  # the oracle's
    text = spaces if isinstance(spaces, str) else ",".join(spaces)
    if not text.strip(" ,"):
        raise PlanError(
            Text(ref("spaces"), " is empty: name a search space, or leave it out"),
            setting="spaces",
        )
    return text


def _objectives(
    objectives: str | Sequence[str] | None, oracle: Oracle, machine: Any, per_gemm: bool = False
) -> tuple[str, ...]:
    if objectives is None:
        # A workload tuned GEMM by GEMM ranks each GEMM by cycles alone (its summary adds them up).
        return ("cycles",) if per_gemm else oracle.objectives_of(machine)
    names = objectives.split(",") if isinstance(objectives, str) else list(objectives)
    found = tuple(name.strip() for name in names if name.strip())
    if not found:
        raise PlanError(
            Text(ref("objectives"), " is empty: name at least cycles"), setting="objectives"
        )
    return found
