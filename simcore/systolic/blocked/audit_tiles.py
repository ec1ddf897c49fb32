"""The audit of the array's tiles in a timed program: every tile, whatever its block, checked
against the tile before it and against its block's memory events, from the machine's raw
parameters and the array's tiles (`model.tiles`), without the engines' stream code.

Rules (t_j = S_j + W_j, W_j the tile's stream window: its stream length, or the cycles its
busiest store port needs for its words when that is longer):
  * stream: S_j >= t_{j-1}; the streamed blocks and the C block of its step are in place;
  * ws/is: the stationary tile is read from its store in ceil(k n / read width) cycles, after
    the previous read, the previous tile's stream start and its block's arrival; the load starts no earlier than the
    read, nor than kt cycles before the read's end, the previous stream (shadow registers), the previous
    window's last item (none, overlapped) or every earlier tile's end (none, in sequence);
    S_j >= L_j + kt;
  * os: without shadow registers a tile streams only once the previous tile's drain has
    started (with them, the last product of its Ls items waits for it); a drain follows the tile's last
    product and the previous drain's rows; in sequence, every earlier tile is done;
  * each tile's end is its last product (or its drain) + 1, and its step ends with the latest.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from simcore.shape import Shape
from simcore.systolic.blocked.reference import Op
from simcore.systolic.machine import SystolicMachine
from simcore.systolic.model import SystolicDesign, Tile, tiles

NEVER = -(10**18)


def _port(machine: SystolicMachine, operand: str, lanes: int) -> tuple[str, Fraction, Fraction]:
    """The store of `operand` and one lane's share of its read and write widths."""
    for store in machine.memory.stores:
        if operand in store.holds:
            b = store.buffer
            return store.name, b.read_width / lanes, b.write_width / lanes
    acc = machine.memory.accumulator
    assert acc is not None
    return "accumulator", acc.read_width / lanes, acc.write_width / lanes


def _window(
    machine: SystolicMachine, design: SystolicDesign, ls: int, tile: Tile, lanes: int
) -> int:
    """The tile's stream window: Ls, or the busiest store port's cycles for the tile's words."""
    k, n = tile.rows, tile.cols
    in_buffer = any("c" in s.holds for s in machine.memory.stores)
    c_words = Fraction(machine.accumulator_bits, machine.word_bits) if in_buffer else Fraction(1)
    zero = Fraction(0)
    moves: list[tuple[str, Fraction, Fraction]]
    if design.dataflow == "os":
        moves = [("a", Fraction(k * ls), zero), ("b", Fraction(ls * n), zero)]
        moves.append(("c", zero, k * n * c_words))
    else:
        streamed, held = ("a", "b") if design.dataflow == "ws" else ("b", "a")
        back = ls * n * c_words if tile.row_fold else zero
        moves = [(streamed, Fraction(ls * k), zero), (held, Fraction(k * n), zero)]
        moves.append(("c", back, ls * n * c_words))
    reads: dict[str, Fraction] = {}
    writes: dict[str, Fraction] = {}
    widths: dict[str, tuple[Fraction, Fraction]] = {}
    for operand, r, w in moves:
        name, rw, ww = _port(machine, operand, lanes)
        widths[name] = (rw, ww)
        reads[name] = reads.get(name, Fraction(0)) + r
        writes[name] = writes.get(name, Fraction(0)) + w
    port = max(
        max(math.ceil(reads[x] / widths[x][0]), math.ceil(writes[x] / widths[x][1])) for x in widths
    )
    return max(ls, port)


def _in_place(ops: tuple[Op, ...], op: Op, held: str | None) -> tuple[int, int]:
    """(the stationary block in place, the streamed and C blocks in place) for a step."""
    fetch = stream = NEVER
    for n in op.after:
        operand = "c" if ops[n].kind.startswith("c-") else ops[n].kind[-1]
        if operand == held:
            fetch = max(fetch, ops[n].ready)
        else:
            stream = max(stream, ops[n].ready)
    for n in op.slot_after:
        stream = max(stream, ops[n].end)
    return fetch, stream


class _Checker:
    def __init__(self, machine: SystolicMachine, design: SystolicDesign, lanes: int) -> None:
        self.machine, self.design, self.lanes = machine, design, lanes
        a = design.assumptions
        self.shadow, self.sequence, self.drain = a.shadow, a.in_sequence, a.drain
        self.problems: list[str] = []
        self.prev: dict[str, int] = {}
        self.ends = 0

    def fail(self, where: str, what: str) -> None:
        self.problems.append(f"{where}: {what}")

    def stationary(
        self, where: str, tile: Tile, ls: int, timing: tuple[Any, ...], gates: tuple[Any, ...]
    ) -> None:
        fs, fe, load, stream, end = (int(x) for x in timing)
        kt, nt, k, n = tile.span_rows, tile.span_cols, tile.rows, tile.cols
        held = "b" if self.design.dataflow == "ws" else "a"
        width = _port(self.machine, held, self.lanes)[1]
        p = self.prev
        if fe - fs != math.ceil(Fraction(k * n) / width):
            self.fail(where, f"fetch of {fe - fs} cycles for {k * n} words at {width} a cycle")
        if fs < max(p.get("fe", 0), p.get("s", NEVER), gates[0]):
            self.fail(
                where, f"fetch starts at {fs}, before its data, the previous read's end or stream"
            )
        if load < max(fs, fe - kt, 0):
            self.fail(where, f"loads at {load}, before its fetch ends at {fe}")
        if p:
            limit = p["s"] if self.shadow else self.ends if self.sequence else p["s"] + p["w"] - 1
            if load < limit:
                self.fail(where, f"loads at {load}, over the previous tile's weights in use")
        window = _window(self.machine, self.design, ls, tile, self.lanes)
        first = max(load + kt, gates[1], p["s"] + p["w"] if p else NEVER)
        if self.shadow and self.sequence:
            first = max(first, self.ends)
        if stream < first:
            self.fail(where, f"streams at {stream}, before {first}")
        if end != stream + window + kt + nt - 2:
            self.fail(
                where, f"ends at {end}, its last product is at {stream + window + kt + nt - 3}"
            )
        self.prev = {"s": stream, "w": window, "fe": fe}
        self.ends = max(self.ends, end)

    def output(
        self, where: str, tile: Tile, ls: int, timing: tuple[Any, ...], gates: tuple[Any, ...]
    ) -> None:
        stream, drain, complete, end = timing
        mt, nt = tile.span_rows, tile.span_cols
        window = _window(self.machine, self.design, ls, tile, self.lanes)
        p = self.prev
        first = max(
            gates[1], p["s"] + p["w"] if p else NEVER, self.ends if self.sequence else NEVER
        )
        if p and p.get("d") is not None:
            first = max(first, p["d"] + 1 - ls if self.shadow else p["d"])
        if stream < first:
            self.fail(where, f"streams at {stream}, before {first}")
        if complete != stream + window + mt + nt - 2:
            self.fail(
                where, f"its last product + 1 is {complete}, not {stream + window + mt + nt - 2}"
            )
        last = complete
        if self.drain:
            least = max(stream + window + mt - 1, p["d"] + p["mt"] if p else NEVER)
            if drain is None or drain < least:
                self.fail(where, f"drains at {drain}, before {least}")
                return
            last = max(complete, drain + nt + mt - 1)
        if end != last:
            self.fail(where, f"ends at {end}, its last event is at {last - 1}")
        barrier = complete if self.shadow or not self.drain else last
        self.prev = {"s": stream, "w": window, "d": drain, "mt": mt}
        self.ends = max(self.ends, barrier)


def audit_tiles(
    machine: SystolicMachine, design: SystolicDesign, ops: tuple[Op, ...], lanes: int = 1
) -> list[str]:
    """Every tile against the one before it on its lane (each lane with its share of the
    store ports: their widths over the lanes)."""
    checks: dict[int, _Checker] = {}  # one per lane: each lane's tiles follow one another
    latests: dict[int, int] = {}
    held = {"ws": "b", "is": "a", "os": None}[design.dataflow]
    for n, op in enumerate(ops):
        if op.kind != "compute":
            continue
        check = checks.setdefault(op.lane, _Checker(machine, design, lanes))
        latest = latests.get(op.lane, 0)
        shape = Shape(*op.dims)
        cut = tiles(design, shape)
        ls = {"ws": shape.m, "is": shape.n, "os": shape.k}[design.dataflow]
        if len(cut) != len(op.tiles):
            check.fail(f"op {n}", f"{len(op.tiles)} tiles timed for {len(cut)}")
            continue
        gates = _in_place(ops, op, held)
        for j, (tile, timing) in enumerate(zip(cut, op.tiles)):
            where = f"op {n} tile {j}"
            if held is None:
                check.output(where, tile, ls, timing, gates)
            else:
                check.stationary(where, tile, ls, timing, gates)
            latest = max(latest, int(timing[-1]))
        latests[op.lane] = latest
        if op.end != latest:
            check.fail(f"op {n}", f"ends at {op.end}, its tiles at {latest}")
    return [problem for check in checks.values() for problem in check.problems]
