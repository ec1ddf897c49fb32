"""A roofline oracle: a bi x bj block of C stays on chip, so each k step moves bi + bj tiles
and does bi x bj tile products; a block takes the longer of the two. Its machine is a rate."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from autotune.oracles import Oracle
from search_spaces.base import MODEL, Family, Verdict
from search_spaces.domains import IntRange, Param, Point

TILE = 8


@dataclass(frozen=True)
class Roofline:
    macs_per_cycle: int = 512
    words_per_cycle: int = 16
    buffer_tiles: int = 64

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def key(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.as_dict().items())


class Blocks(Family):
    name, oracle, description = "toy_blocks", "toy", "a bi x bj block of C tiles held on chip"
    limit = "buffer"  # what `violation` grades: an infeasible block is over the buffer limit

    def params(self, shape: Any, T: int) -> tuple[Param, ...]:
        mt, _, nt = shape.tiles(TILE)
        return (Param("bi", IntRange(1, mt), "block rows"), Param("bj", IntRange(1, nt), "columns"))

    def violation(self, point: Point, shape: Any, machine: Roofline) -> float:
        need = int(point["bi"]) * int(point["bj"]) + int(point["bi"]) + int(point["bj"])
        return float(max(0, need - machine.buffer_tiles))

    def seed_points(self, shape: Any, machine: Roofline) -> list[Point]:
        return [{"bi": 1, "bj": 1}]


class ToyOracle(Oracle):
    name, description = "toy", "a roofline: compute or traffic, whichever is longer"
    default_spaces = ("toy",)

    def parse_machine(self, text: str) -> Roofline:
        pairs = (item.split("=", 1) for item in text.split(",") if item.strip())
        try:
            return Roofline(**{key.strip(): int(value) for key, value in pairs})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"toy machine {text!r}: {exc}") from None

    def machine_from_record(self, record: Mapping[str, int]) -> Roofline:
        return Roofline(**record)

    def families(self, spaces: tuple[str, ...], machine: Any) -> tuple[Family, ...]:
        return (BLOCKS,)

    def family(self, name: str) -> Family | None:
        return BLOCKS if name == BLOCKS.name else None

    def evaluate(self, family: Family, point: Point, shape: Any, machine: Roofline) -> dict:
        mt, kt, nt = shape.tiles(TILE)
        bi, bj = int(point["bi"]), int(point["bj"])
        compute = bi * bj * TILE**3 / machine.macs_per_cycle
        traffic = (bi + bj) * TILE**2 / machine.words_per_cycle
        blocks = math.ceil(mt / bi) * math.ceil(nt / bj)
        return {"cycles": math.ceil(blocks * kt * max(compute, traffic)), "blocks": blocks}

    def verify(self, family: Family, point: Point, shape: Any, machine: Roofline) -> Verdict:
        return Verdict(True, MODEL, "a closed form: nothing was run")


BLOCKS = Blocks()
ORACLE = ToyOracle()
