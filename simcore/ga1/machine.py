"""The GA-1 machine: a frozen set of parameters, with the chapter's names."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping, Union

from simcore.shape import COUNT_LIMIT, parse_int
from simcore.systolic.tie import mxu_timing, parse_array

# Parameters a user may set, in the chapter's order.
MACHINE_KEYS: tuple[str, ...] = (
    "T",
    "slots",
    "dma_setup",
    "dma_words_per_cycle",
    "mxu_cycles",
    "mxu_fill",
    "vpu_lanes",
    "sfu_lanes",
)
# Not a Machine field: `mxu_array=RxC` derives mxu_cycles and mxu_fill from the systolic model.
MXU_ARRAY = "mxu_array"
# Parameters that may legitimately be zero (a fill or a setup cost of nothing).
_MAY_BE_ZERO = frozenset({"dma_setup", "mxu_fill"})


class MachineError(ValueError):
    """A machine parameter is missing, unknown or out of range."""


@dataclass(frozen=True)
class Machine:
    """GA-1's parameters. Defaults are the chapter's (16 slots; the sweep also uses 64)."""

    T: int = 8
    slots: int = 16
    dma_setup: int = 16
    dma_words_per_cycle: int = 16
    mxu_cycles: int = 8
    mxu_fill: int = 8
    vpu_lanes: int = 16
    sfu_lanes: int = 4

    def __post_init__(self) -> None:
        for key in MACHINE_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise MachineError(f"machine parameter {key} must be an integer, got {value!r}")
            low = 0 if key in _MAY_BE_ZERO else 1
            if value < low:
                bound = "negative" if low == 0 else "zero or negative"
                raise MachineError(f"machine parameter {key} must not be {bound}, got {value}")
            if value > COUNT_LIMIT:
                raise MachineError(
                    f"machine parameter {key} must be at most {COUNT_LIMIT:.3g} (a 64-bit "
                    f"count), got {value}"
                )

    @property
    def tile_words(self) -> int:
        return self.T * self.T

    @property
    def dma_cycles(self) -> int:
        """Cycles of one tile transfer: setup plus the words at the DMA's bandwidth."""
        return self.dma_setup + math.ceil(self.tile_words / self.dma_words_per_cycle)

    @property
    def peak_macs_per_cycle(self) -> float:
        return self.T**3 / self.mxu_cycles

    @property
    def scratchpad_words(self) -> int:
        return self.slots * self.tile_words

    def replace(self, **changes: int) -> Machine:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in MACHINE_KEYS}

    def key(self) -> str:
        """Canonical identifier, stable across runs: every parameter, in order."""
        return ",".join(f"{k}={getattr(self, k)}" for k in MACHINE_KEYS)


OverrideValue = Union[int, tuple[int, int]]


def parse_overrides(text: str) -> dict[str, OverrideValue]:
    """Parse 'KEY=VALUE[,KEY=VALUE...]' into a dict, rejecting unknown keys and non-integers.

    Every key takes an integer except `mxu_array`, which takes RxC and becomes (R, C).
    """
    result: dict[str, OverrideValue] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise MachineError(f"machine override {item!r} is not KEY=VALUE")
        key, _, raw = item.partition("=")
        key = key.strip()
        if not key:
            raise MachineError(f"machine override {item!r} names no parameter before '='")
        if key in result:
            raise MachineError(f"machine parameter {key} is given twice")
        if key == MXU_ARRAY:
            result[key] = _array(raw.strip())
            continue
        if key not in MACHINE_KEYS:
            known = ", ".join((*MACHINE_KEYS, MXU_ARRAY))
            raise MachineError(f"unknown machine parameter {key!r} (known: {known})")
        try:
            result[key] = parse_int(raw, f"machine parameter {key}")
        except ValueError as exc:
            raise MachineError(str(exc)) from None
    return result


def _array(value: object) -> tuple[int, int]:
    """An mxu_array value, 'RxC' or (R, C), as two positive ints."""
    if isinstance(value, str):
        try:
            return parse_array(value)
        except ValueError as exc:
            raise MachineError(f"machine parameter {MXU_ARRAY}: {exc}") from None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    ):
        return value[0], value[1]
    raise MachineError(
        f"machine parameter {MXU_ARRAY} must be RxC with positive R and C, got {value!r}"
    )


def machine_from(overrides: Mapping[str, OverrideValue], slots: int | None = None) -> Machine:
    """Build a machine from the chapter's defaults, a slot count and overrides (validated).

    With `mxu_array` (RxC or (R, C)), mxu_cycles and mxu_fill are derived from an R x C
    weight-stationary array running T x T x T products back to back (simcore.systolic.tie);
    giving either of them as well is an error.
    """
    params: dict[str, OverrideValue] = {}
    if slots is not None:
        params["slots"] = slots
    params.update(overrides)
    array = _array(params.pop(MXU_ARRAY)) if MXU_ARRAY in params else None
    if array is not None:
        clash = [key for key in ("mxu_cycles", "mxu_fill") if key in params]
        if clash:
            raise MachineError(
                f"{MXU_ARRAY} derives mxu_cycles and mxu_fill: do not also give {' or '.join(clash)}"
            )
    machine = Machine(**params)  # type: ignore[arg-type]  # validates every plain parameter
    if array is None:
        return machine
    mxu_cycles, mxu_fill = mxu_timing(machine.T, *array)
    return machine.replace(mxu_cycles=mxu_cycles, mxu_fill=mxu_fill)
