"""What an oracle measures, declared as data: one `Measure` per figure it reports.

An oracle lists its measures once, in `Oracle.measures`, in the order its leaderboard shows
their columns. Everything else reads that declaration: which objectives a run may name and in
which direction each is optimised, how a trial's value is read from its record or a leaderboard
row, which budget bounds a measure, how a workload totals it (a co-design's objectives, a
workload's summary), the labels of tables and plots, and the `--objectives` help. A new measure
is one declaration here or in the oracle's own module, and its computation in the oracle's
`evaluate` (or, for one the machine alone sets, `from_machine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

MINIMIZE, MAXIMIZE = "minimize", "maximize"

# How a workload totals a measure over its GEMMs (a co-design's objectives, a workload summary).
SUM = "sum"  # weighted by how many times each GEMM runs
MAX = "max"  # the largest over the GEMMs
MACHINE = "machine"  # the machine's own value, the same for every GEMM
PRODUCT = "product"  # the product of the totals of the measures named in `of` (EDP)
NONE = "none"  # not totalled: no objective of a co-design
TOTALS = (SUM, MAX, MACHINE, PRODUCT, NONE)


@dataclass(frozen=True)
class Measure:
    """One figure an oracle reports: an objective a search may optimise, or (objective=False) a
    column of the leaderboard only."""

    name: str  # the objective's name (`--objectives`), and the column's unless `column` says
    direction: str = MINIMIZE
    unit: str = ""  # "cycles", "pJ", "mm2", "words"
    column: str = ""  # the metric (and leaderboard column) it reads; "" = name
    total: str = NONE  # how a workload totals it (TOTALS)
    of: tuple[str, ...] = ()  # for PRODUCT: the measures whose totals are multiplied
    label: str = ""  # the axis and table label; "" = name with its unit
    machine_only: bool = False  # the machine alone sets it: an objective with a machine search
    objective: bool = True  # False: a reported figure, never an objective
    budget: str | None = None  # the plan setting that bounds it (e.g. "area_budget")
    dtype: str = "float"  # the leaderboard column's type: "int" or "float"
    help: str = ""  # one phrase for the `--objectives` help
    why: str = ""  # why its direction is what it is, where that is not obvious
    # Where no metric holds it: its value from the machine record (a machine parameter by default).
    from_machine: Callable[[Mapping[str, int]], float] | None = None

    def __post_init__(self) -> None:
        if self.direction not in (MINIMIZE, MAXIMIZE):
            raise ValueError(f"measure {self.name}: direction {self.direction!r}")
        if self.total not in TOTALS:
            raise ValueError(f"measure {self.name}: total {self.total!r} (one of {TOTALS})")
        if (self.total == PRODUCT) != bool(self.of):
            raise ValueError(f"measure {self.name}: a product total names the measures `of`")
        if self.dtype not in ("int", "float"):
            raise ValueError(f"measure {self.name}: dtype {self.dtype!r}")

    @property
    def key(self) -> str:
        """The metric it reads: its column."""
        return self.column or self.name

    @property
    def title(self) -> str:
        """How a plot's axis or a table names it."""
        return self.label or (f"{self.name} ({self.unit})" if self.unit else self.name)

    @property
    def maximized(self) -> bool:
        return self.direction == MAXIMIZE

    @property
    def total_column(self) -> str | None:
        """A co-design row's column of the workload's total (None: the row's own value)."""
        return f"total_{self.key}" if self.total in (SUM, PRODUCT) else None

    def value(self, source: Mapping[str, object]) -> float:
        """Its value in a trial's record or a leaderboard row: the metric, or (not measured) the
        machine's (`source["machine"]`, or the row itself, which holds the machine's columns)."""
        found = source.get(self.key)
        if found is not None:
            return float(found)  # type: ignore[arg-type]
        machine = source.get("machine")
        if not isinstance(machine, Mapping):
            machine = source
        if self.from_machine is not None:
            return float(self.from_machine(machine))  # type: ignore[arg-type]
        return float(machine[self.key])  # type: ignore[arg-type]


def find(measures: Iterable[Measure], name: str) -> Measure | None:
    """The measure called `name`, or None."""
    return next((m for m in measures if m.name == name), None)


def objectives(measures: Iterable[Measure]) -> tuple[Measure, ...]:
    return tuple(m for m in measures if m.objective)


def describe(measures: Iterable[Measure]) -> str:
    """The objectives, as a help text lists them: "cycles, energy (pJ), ..."."""
    return ", ".join(
        f"{m.name} ({m.unit})" if m.unit and m.unit != m.name else m.name
        for m in objectives(measures)
    )


# --- the measures every cost model may share -----------------------------------------------------

CYCLES = Measure(
    "cycles",
    unit="cycles",
    total=SUM,
    dtype="int",
    help="the product's cycles (a workload: weighted by each GEMM's count)",
)
ENERGY = Measure(
    "energy",
    unit="pJ",
    column="energy_pj",
    total=SUM,
    budget="energy_budget",
    help="the energy of one product",
)
ENERGY_PER_MAC = Measure("energy_per_mac_pj", unit="pJ", objective=False)
EDP = Measure(
    "edp",
    unit="pJ x cycles",
    label="EDP (pJ x cycles)",
    total=PRODUCT,
    of=("energy", "cycles"),
    help="energy x cycles",
)
AREA = Measure(
    "area",
    unit="mm2",
    column="area_mm2",
    total=MACHINE,
    budget="area_budget",
    help="the area the design occupies",
)
LOWER_BOUND = Measure("lower_bound", unit="cycles", objective=False, dtype="int")
MACS = Measure("macs", objective=False, dtype="int")
ENERGY_BREAKDOWN: tuple[Measure, ...] = tuple(
    Measure(f"energy_{part}_pj", unit="pJ", objective=False)
    for part in ("compute", "register", "on_chip", "off_chip")
)
# The measures whose budget the plan grades, each by the setting named in `budget`.
BUDGETED: tuple[Measure, ...] = (AREA, ENERGY)


@dataclass(frozen=True)
class TableColumn:
    """A column of the compact tables `tune` and `leaderboard` print (the full leaderboard has
    every measure): which leaderboard column it shows, and how."""

    key: str  # the leaderboard column
    title: str
    width: int
    format: str = ""  # a format spec for the value ("": as it is), e.g. ".0%", ".4g"
    varied: bool = False  # shown only where its values differ (a parameter a search varied)
    unless_objective: str = ""  # not shown when this objective has a column already

    def text(self, value: object) -> str:
        if not self.format:
            return str(value)
        if missing(value):
            return "-"
        return format(float(value), self.format)  # type: ignore[arg-type]


def missing(value: object) -> bool:
    """None, NaN, or pandas' NA (whose comparisons are NA, which has no truth value)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:
        return True


# What every oracle that costs energy and area shows in its compact table.
ENERGY_COLUMNS: tuple[TableColumn, ...] = (
    TableColumn("energy_per_mac_pj", "pJ/MAC", 7, ".4g"),
    TableColumn("area_mm2", "mm2", 7, ".4f", varied=True, unless_objective="area"),
)
