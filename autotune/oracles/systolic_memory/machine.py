"""The systolic oracle's machine when it has a memory system: an architecture (a bundled name or
a TOML file, simcore/systolic/archs) with `KEY=VALUE` overrides (`dram.bandwidth=68 GB/s`).

The machine keeps its description as canonical JSON (`spec`), without the sources and what the
file assumes: what a study stores, what each trial records and what a study's identity digests,
so that a result is rebuilt from its record alone and a file changed in its figures is another
study."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from simcore.systolic.machine import ArchError, SystolicMachine

# Parts of a description that do not change a run: left out of the spec.
NOT_TIMED = ("description", "sources", "assumed")
# The machine keys of the array oracle's budget: an architecture fixes its array instead.
BUDGET_KEYS = ("pe_budget", "max_hbm_words")


@dataclass(frozen=True)
class ArchMachine:
    """A systolic machine with its memory, as an architecture and its overrides made it."""

    arch: str  # the bundled name, or the file as given
    spec: str  # canonical JSON of the description, overrides applied, sources left out
    system: SystolicMachine = field(compare=False, repr=False)

    def as_dict(self) -> dict[str, str]:
        return {"arch": self.arch, "arch_spec": self.spec}

    def key(self) -> str:
        return f"arch={self.arch},spec={self.digest}"

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.spec.encode()).hexdigest()[:10]

    @property
    def bundled(self) -> bool:
        from simcore.systolic.archs import bundled_archs

        return self.arch in bundled_archs()

    @property
    def label(self) -> str:
        """How a study's name calls it: the bundled name, or the file's stem and a digest."""
        return self.arch if self.bundled else f"{Path(self.arch).stem}-{self.digest[:6]}"

    def describe(self) -> str:
        s = self.system
        return f"{self.arch} ({s.array} {s.dataflow}, {s.memory.dram_kind} link)"


def spec_of(data: Mapping[str, Any]) -> str:
    kept = {k: v for k, v in data.items() if k not in NOT_TIMED}
    try:
        return json.dumps(kept, sort_keys=True, separators=(",", ":"))
    except TypeError as exc:  # a TOML date or time where a figure belongs
        raise ArchError(f"a value of this architecture is not a figure: {exc}") from None


def arch_machine(arch: str | Path, overrides: Sequence[str] = ()) -> ArchMachine:
    """The machine of a bundled architecture or a file (TOML, or a SCALE-Sim .cfg as this
    model's machine), with overrides (ArchError naming the key)."""
    from simcore.systolic.archs import apply_overrides, arch_dict
    from simcore.systolic.machine_parse import parse_machine

    name = str(arch)
    data = apply_overrides(arch_dict(name), overrides)
    parse_machine(data)  # the whole file checked, its sources too
    return from_record({"arch": name, "arch_spec": spec_of(data)})


def from_record(record: Mapping[str, Any]) -> ArchMachine:
    """The machine a study stored or a trial recorded (`ArchMachine.as_dict`)."""
    from simcore.systolic.machine_parse import parse_machine

    try:
        data = json.loads(str(record["arch_spec"]))
    except (KeyError, ValueError) as exc:
        raise ValueError(f"the recorded architecture is unreadable: {exc}") from None
    return ArchMachine(str(record["arch"]), spec_of(data), parse_machine(data))


def machine_items(text: str) -> list[str]:
    """`KEY=VALUE` items of a machine text; a part without `=` continues the item before it
    (`buffers.spad.holds=a,b`)."""
    items: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" not in part and items:
            items[-1] += f",{part}"
        else:
            items.append(part)
    return items


def parse_arch_text(text: str) -> ArchMachine | None:
    """The machine of a text with `arch=NAME|FILE` and dotted overrides; None when the text
    names no architecture and no override (the array oracle's budget)."""
    arch: str | None = None
    overrides: list[str] = []
    budget: list[str] = []
    for item in machine_items(text):
        key, _, value = item.partition("=")
        key = key.strip()
        if key == "arch":
            if arch is not None:
                raise ValueError("systolic machine key arch is given twice")
            arch = value.strip()
        elif "." in key:
            overrides.append(item)
        elif key in BUDGET_KEYS:
            budget.append(key)
        else:
            return None if arch is None and not overrides else _unknown(key)
    if arch is None:
        if overrides:
            raise ValueError(
                f"systolic machine key {overrides[0].partition('=')[0].strip()}: a part of an "
                "architecture; name the architecture (arch=NAME|FILE)"
            )
        return None
    if budget:
        raise ValueError(
            f"systolic machine key {budget[0]}: an architecture fixes its array; give the "
            "budget or the architecture, not both"
        )
    return arch_machine(arch, overrides)


def _unknown(key: str) -> ArchMachine:
    raise ValueError(
        f"systolic machine key {key!r}: with an architecture, keys are its parts "
        "(array.rows, buffers.NAME.capacity, dram.bandwidth, ...)"
    )
