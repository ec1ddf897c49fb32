"""The machine file's layout, read strictly: every key known, every quantity in its unit and
range, every operand held somewhere, every buffer big enough for one array tile. Errors are one
line that names the key (`ArchError`)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Mapping

from simcore.memory import (
    Buffer,
    Link,
    UnitError,
    parse_bandwidth,
    parse_bytes,
    parse_cycles,
    parse_frequency,
    parse_rate,
)
from simcore.systolic.machine import (
    DRAM_KINDS,
    OPERANDS,
    ArchError,
    MemorySystem,
    Store,
    SystolicMachine,
)
from simcore.systolic.model import DATAFLOWS, SystolicArray
from simcore.systolic.vector_unit import VectorUnit

TOP = {"name", "description", "array", "words", "buffers", "accumulator", "dram"}
OPTIONAL_TOP = {"description", "words", "accumulator", "vector", "sources", "assumed"}
ARRAY = {"rows", "cols", "dataflow", "clock"}
OPTIONAL_ARRAY = {"arrays"}
WORDS = {"operand_bits", "accumulator_bits", "output_bits"}
BUFFER = {"holds", "capacity", "read_width", "write_width"}
DRAM = {"kind", "bandwidth", "latency", "setup"}
VECTOR = {"lanes", "special_cycles", "port_share"}
MAX_LANES = 1 << 16
# Physical ranges a machine file must stay in.
MAX_SIDE = 1 << 16
MAX_BYTES = Fraction(1 << 40)  # 1 TiB
MAX_CLOCK, MIN_CLOCK = Fraction(10**11), Fraction(10**3)  # 100 GHz, 1 kHz
MAX_RATE, MIN_RATE = Fraction(1 << 20), Fraction(1, 1 << 20)  # words per cycle
MIN_SHARE = Fraction(1, 1 << 20)  # the vector unit's least share of its store's ports
MAX_CYCLES = 1 << 24


def _keys(where: str, data: object, allowed: set[str], required: set[str]) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ArchError(
            f"{where.rstrip('.') or 'machine'}: expected a table, got {type(data).__name__}"
        )
    for key in data:
        if key not in allowed:
            raise ArchError(f"{where}{key}: unknown key (known: {', '.join(sorted(allowed))})")
    for key in sorted(required):
        if key not in data:
            raise ArchError(f"{where}{key}: missing key")
    return data


def _unit(where: str, parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except UnitError as exc:
        raise ArchError(f"{where}: {exc}") from None


def _bounded(
    where: str, value: Fraction | int, high: Fraction | int, low: Fraction | int = 0
) -> None:
    if value > high or value < low:
        raise ArchError(
            f"{where}: {_g(value)} is outside the physical range {_g(low)} to {_g(high)}"
        )


def _g(value: Fraction | int) -> str:
    """A quantity in six significant digits, however far past a float's range it is."""
    exact = Fraction(value)
    try:
        return f"{float(exact):g}"
    except OverflowError:
        return f"{Decimal(exact.numerator) / Decimal(exact.denominator):.6g}"


def _int(where: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArchError(f"{where}: expected a whole number, got {value!r}")
    if not low <= value <= high:
        raise ArchError(f"{where}: must be from {low} to {high}, got {value}")
    return value


def _text(where: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ArchError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _words(where: str, raw: object, word_bits: int, per_word_bits: int) -> int:
    """A capacity in words of `per_word_bits`, whole words only."""
    size = _unit(where, lambda: parse_bytes(raw, per_word_bits))
    _bounded(where, size, MAX_BYTES, 0)
    words = size * 8 / per_word_bits
    if words.denominator != 1:
        raise ArchError(f"{where}: {raw!r} is not a whole number of {per_word_bits}-bit words")
    return int(words)


def _width(where: str, raw: object, bits: int) -> Fraction:
    rate = _unit(where, lambda: parse_rate(raw, bits))
    _bounded(where, rate, MAX_RATE, MIN_RATE)
    return rate


def _buffer(where: str, raw: Mapping[str, Any], bits: int, capacity_bits: int) -> Buffer:
    return Buffer(
        _words(where + "capacity", raw["capacity"], bits, capacity_bits),
        _width(where + "read_width", raw["read_width"], capacity_bits),
        _width(where + "write_width", raw["write_width"], capacity_bits),
    )


def _stores(raw: object, bits: int, acc_bits: int, has_accumulator: bool) -> tuple[Store, ...]:
    tables = _keys("buffers.", raw, set(raw) if isinstance(raw, Mapping) else set(), set())
    if not tables:
        raise ArchError("buffers: give at least one buffer")
    stores = []
    for name, table in tables.items():
        where = f"buffers.{name}."
        table = _keys(where, table, BUFFER, BUFFER)
        holds = table["holds"]
        if not isinstance(holds, list) or not holds or any(h not in OPERANDS for h in holds):
            raise ArchError(
                f"{where}holds: expected a list of operands from a, b, c, got {holds!r}"
            )
        if len(set(holds)) != len(holds):
            raise ArchError(f"{where}holds: an operand is listed twice: {holds!r}")
        stores.append(
            Store(name, tuple(h for h in OPERANDS if h in holds), _buffer(where, table, bits, bits))
        )
    return tuple(stores)


def _dram(raw: object, clock: Fraction, bits: int) -> tuple[Link, str]:
    table = _keys("dram.", raw, DRAM, {"bandwidth"})
    kind = table.get("kind", "ddr")
    if kind not in DRAM_KINDS:
        raise ArchError(f"dram.kind: must be one of {', '.join(DRAM_KINDS)}, got {kind!r}")
    rate = _unit("dram.bandwidth", lambda: parse_bandwidth(table["bandwidth"], clock, bits))
    _bounded("dram.bandwidth", rate, MAX_RATE, MIN_RATE)
    latency = _unit("dram.latency", lambda: parse_cycles(table.get("latency", 0), clock))
    setup = _unit("dram.setup", lambda: parse_cycles(table.get("setup", 0), clock))
    _bounded("dram.latency", latency, MAX_CYCLES)
    _bounded("dram.setup", setup, MAX_CYCLES)
    return Link(rate, latency, setup), kind


def _vector(raw: object, memory: MemorySystem) -> VectorUnit:
    """The [vector] table: lanes, special_cycles (an exp, rsqrt, erf or divide per pass) and
    port_share (the fraction of the read and write widths of the store holding a it uses)."""
    table = _keys("vector.", raw, VECTOR, {"lanes"})
    lanes = _int("vector.lanes", table["lanes"], 1, MAX_LANES)
    special = _int("vector.special_cycles", table.get("special_cycles", 4), 1, 1 << 10)
    share_raw = table.get("port_share", 1)
    if isinstance(share_raw, bool) or not isinstance(share_raw, (int, float)):
        raise ArchError(f"vector.port_share: expected a number, got {share_raw!r}")
    if not math.isfinite(share_raw):
        raise ArchError(f"vector.port_share: expected a finite number, got {share_raw}")
    share = Fraction(str(share_raw))
    if not 0 < share <= 1:
        raise ArchError(f"vector.port_share: must be above 0 and at most 1, got {share_raw}")
    if share < MIN_SHARE:
        raise ArchError(
            f"vector.port_share: {share_raw} is outside the physical range {_g(MIN_SHARE)} to 1"
        )
    store = memory.store_of("a")
    assert store is not None  # a is always held by a buffer
    width = min(store.buffer.read_width, store.buffer.write_width)
    return VectorUnit(lanes, special, share * width)


def _citations(key: str, raw: object) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise ArchError(f'{key}: expected a table of key = "text" strings')
    return tuple(sorted(raw.items()))


def parse_machine(data: Mapping[str, Any]) -> SystolicMachine:
    """Validate a machine description (the file layout) and build it."""
    data = _keys("", data, TOP | OPTIONAL_TOP, TOP - OPTIONAL_TOP)
    array_raw = _keys("array.", data["array"], ARRAY | OPTIONAL_ARRAY, ARRAY)
    words = _keys("words.", data.get("words", {}), WORDS, set())
    bits = _int("words.operand_bits", words.get("operand_bits", 8), 1, 64)
    acc_bits = _int("words.accumulator_bits", words.get("accumulator_bits", 32), 1, 64)
    out_bits = _int("words.output_bits", words.get("output_bits", bits), 1, 64)
    clock = _unit("array.clock", lambda: parse_frequency(array_raw["clock"]))
    _bounded("array.clock", clock, MAX_CLOCK, MIN_CLOCK)
    array = SystolicArray(
        _int("array.rows", array_raw["rows"], 1, MAX_SIDE),
        _int("array.cols", array_raw["cols"], 1, MAX_SIDE),
    )
    dataflow = array_raw["dataflow"]
    if dataflow not in DATAFLOWS:
        raise ArchError(f"array.dataflow: must be one of {', '.join(DATAFLOWS)}, got {dataflow!r}")
    accumulator = None
    if "accumulator" in data:
        acc = _keys("accumulator.", data["accumulator"], BUFFER - {"holds"}, BUFFER - {"holds"})
        accumulator = _buffer("accumulator.", acc, bits, acc_bits)
    link, kind = _dram(data["dram"], clock, bits)
    memory = MemorySystem(
        _stores(data["buffers"], bits, acc_bits, accumulator is not None), accumulator, link, kind
    )
    machine = SystolicMachine(
        _text("name", data["name"]),
        array,
        dataflow,
        clock,
        memory,
        bits,
        acc_bits,
        out_bits,
        str(data.get("description", "")),
        _citations("sources", data.get("sources")),
        _citations("assumed", data.get("assumed")),
        _int("array.arrays", array_raw.get("arrays", 1), 1, MAX_SIDE),
        _vector(data["vector"], memory) if "vector" in data else None,
    )
    check_one_tile(machine)
    return machine


def one_tile(machine: SystolicMachine) -> tuple[int, int, int]:
    """The block (bm, bk, bn) of one array tile in the machine's dataflow."""
    r, c = machine.array.rows, machine.array.cols
    return {"ws": (1, r, c), "is": (c, r, 1), "os": (r, 1, c)}[machine.dataflow]


def check_one_tile(machine: SystolicMachine) -> None:
    """Every store holds one array tile's blocks, single buffered."""
    from simcore.shape import Shape
    from simcore.systolic.blocked.schedule import BlockSchedule, footprints

    bm, bk, bn = one_tile(machine)
    single = BlockSchedule(bm, bk, bn, "mnk", (1, 1, 1))
    for where, need, capacity in footprints(machine, single, Shape(bm, bk, bn)):
        if need > capacity:
            raise ArchError(
                f"{where}.capacity: {capacity} words is too small for one {machine.array} tile "
                f"in {machine.dataflow} ({_plain(need)} words)"
            )


def _plain(value: Fraction | int) -> str:
    return str(int(value)) if Fraction(value).denominator == 1 else f"{float(value):.6g}"
