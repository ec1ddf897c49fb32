"""The GA-1 machine: a frozen set of parameters, with the chapter's names."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping

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


def parse_overrides(text: str) -> dict[str, int]:
    """Parse 'KEY=VALUE[,KEY=VALUE...]' into a dict, rejecting unknown keys and non-integers."""
    result: dict[str, int] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise MachineError(f"machine override {item!r} is not KEY=VALUE")
        key, _, raw = item.partition("=")
        key = key.strip()
        if key not in MACHINE_KEYS:
            raise MachineError(f"unknown machine parameter {key!r} (known: {', '.join(MACHINE_KEYS)})")
        try:
            result[key] = int(raw.strip())
        except ValueError:
            raise MachineError(f"machine parameter {key} needs an integer, got {raw.strip()!r}") from None
    return result


def machine_from(overrides: Mapping[str, int], slots: int | None = None) -> Machine:
    """Build a machine from the chapter's defaults, a slot count and overrides (validated)."""
    params: dict[str, int] = {}
    if slots is not None:
        params["slots"] = slots
    params.update(overrides)
    return Machine(**params)
