"""What the readers share: one matrix product found in a model (`LayerGemm`), the merge of
same-shape products into one weighted `Gemm`, safe GEMM names, and the one-line op summary.

A GEMM's name comes from its first layer's name: characters other than letters, digits, '_',
'.' and '-' become '_'. Exporters write layer names of hundreds of characters, so a name longer
than MAX_NAME is shortened, not refused: its first MAX_NAME - 9 characters, '-', and the first 8
hex digits of the SHA-256 of the whole name. The same layer name always gives the same GEMM name,
and two long names that share their beginning still give different ones.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass

from simcore.shape import Shape, ShapeError
from workloads.model import Gemm, WorkloadError
from workloads.validation import MAX_NAME, check_weight

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class LayerGemm:
    """One layer's matrix product: M x K x N, run `weight` times (batches, groups, channels)."""

    layer: str
    m: int
    k: int
    n: int
    weight: int
    source: str


def safe_name(text: str, fallback: str) -> str:
    """A GEMM name (it becomes part of a study name and a file path) from a layer's name."""
    name = _UNSAFE.sub("_", text).strip("_.-")
    return name if name else fallback


def short_name(name: str) -> str:
    """`name` if it fits MAX_NAME, else its beginning and a digest of the whole (module doc)."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}-{digest}"


def merge(found: list[LayerGemm], where: str) -> tuple[Gemm, ...]:
    """Same-shape products as one GEMM each, in order of first appearance: the weights summed,
    every layer's name kept, named after the first layer."""
    groups: dict[tuple[int, int, int], list[LayerGemm]] = {}
    for item in found:
        groups.setdefault((item.m, item.k, item.n), []).append(item)
    gemms: list[Gemm] = []
    taken: set[str] = set()
    for index, ((m, k, n), items) in enumerate(groups.items(), start=1):
        try:
            shape = Shape(m, k, n)
        except ShapeError as exc:
            raise WorkloadError(f"{where}, layer {items[0].layer}: {exc}") from None
        full = safe_name(items[0].layer, f"gemm{index}")
        while short_name(full) in taken:
            full = f"{full}_{index}"
        name = short_name(full)
        taken.add(name)
        sources = tuple(dict.fromkeys(item.source for item in items))
        # the sum is checked as an integer: a huge one has no float
        weight = check_weight(
            sum(item.weight for item in items), f"{where}, layer {items[0].layer}"
        )
        gemms.append(
            Gemm(
                name,
                shape,
                weight,
                "+".join(sources),
                tuple(item.layer for item in items),
            )
        )
    return tuple(gemms)


def count_line(counts: Counter[str]) -> str:
    """'12 ops: 6 Relu, 4 Add, 2 MaxPool' (most frequent first)."""
    total = sum(counts.values())
    kinds = ", ".join(
        f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return f"{total} op{'s' if total != 1 else ''}: {kinds}"
