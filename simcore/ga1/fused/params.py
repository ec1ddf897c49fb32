"""The schedule parameters of each fused group, and their domains declared as data.

Block sizes are in tiles (T x T). A ring of `buffers` sets takes the streamed tiles (operand
tiles, weights, keys and values): each tile is loaded just before its first use into the
ring's next slot, so the DMA runs up to `buffers - 1` sets ahead of the units that read them.
A second set of the intermediate (`c_buffers`, `h_buffers`, `s_buffers`) lets the next block's
products start while the vector unit still works on the previous block's: the program then
issues the blocks' phases in a pipelined order.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.ga1.vector.params import Domain

BLOCKS: tuple[int, ...] = (1, 2, 3, 4, 6, 8)
HIDDEN_BLOCKS: tuple[int, ...] = (1, 2, 4, 8)
BUFFERS: tuple[int, ...] = (1, 2, 3)
SETS: tuple[int, ...] = (1, 2)
ORDERS: tuple[str, ...] = ("row", "col")


class FusedParamsError(ValueError):
    """A parameter value outside its domain."""


def _check(owner: object, domains: tuple[Domain, ...]) -> None:
    for domain in domains:
        value = getattr(owner, domain.name)
        if isinstance(value, bool) or value not in domain.values:
            raise FusedParamsError(f"{domain.name} must be one of {domain.values}, got {value!r}")


GEMM_DOMAINS: tuple[Domain, ...] = (
    Domain("bm", BLOCKS, "output tile rows per block"),
    Domain("bn", BLOCKS, "output tile columns per block"),
    Domain("buffers", BUFFERS, "ring sets of A and B tiles (loads run this far ahead)"),
    Domain("c_buffers", SETS, "output blocks in the scratchpad (2: epilogue overlaps products)"),
    Domain("order", ORDERS, "blocks along a row of blocks (row) or down a column (col)"),
)
MLP_DOMAINS: tuple[Domain, ...] = (
    Domain("bm", (1, 2, 3, 4), "row tiles of X per row block"),
    Domain("bh", HIDDEN_BLOCKS, "hidden tile columns per hidden block"),
    Domain("buffers", BUFFERS, "ring sets of streamed X, W1 and W2 tiles"),
    Domain("h_buffers", SETS, "hidden blocks in the scratchpad (2: pipelined phases)"),
)
ATTENTION_DOMAINS: tuple[Domain, ...] = (
    Domain("bq", (1, 2, 3, 4), "query tile rows per query block"),
    Domain("bk", HIDDEN_BLOCKS, "key tiles per key block"),
    Domain("buffers", BUFFERS, "ring sets of K and V tiles (a set is one key tile's)"),
    Domain("s_buffers", SETS, "score blocks in the scratchpad (2: pipelined phases)"),
)


@dataclass(frozen=True)
class GemmParams:
    bm: int = 2
    bn: int = 2
    buffers: int = 2
    c_buffers: int = 1
    order: str = "row"

    def __post_init__(self) -> None:
        _check(self, GEMM_DOMAINS)


@dataclass(frozen=True)
class MlpParams:
    bm: int = 1
    bh: int = 2
    buffers: int = 2
    h_buffers: int = 1

    def __post_init__(self) -> None:
        _check(self, MLP_DOMAINS)


@dataclass(frozen=True)
class AttentionParams:
    bq: int = 1
    bk: int = 2
    buffers: int = 2
    s_buffers: int = 1

    def __post_init__(self) -> None:
        _check(self, ATTENTION_DOMAINS)


FusedParams = GemmParams | MlpParams | AttentionParams
_BY_KIND: dict[str, tuple[type, tuple[Domain, ...]]] = {
    "gemm": (GemmParams, GEMM_DOMAINS),
    "mlp": (MlpParams, MLP_DOMAINS),
    "attention": (AttentionParams, ATTENTION_DOMAINS),
}


def param_domains(group: FusedGroup) -> tuple[Domain, ...]:
    """The parameters a search may vary for the group's kind, with their values."""
    return _BY_KIND[group.kind][1]


def default_params(group: FusedGroup) -> FusedParams:
    cls: type[FusedParams] = _BY_KIND[group.kind][0]
    return cls()


def params_from(group: FusedGroup, point: dict[str, object]) -> FusedParams:
    """The parameters a point names (missing ones at their defaults)."""
    cls, domains = _BY_KIND[group.kind]
    known = {d.name for d in domains}
    unknown = sorted(set(point) - known)
    if unknown:
        raise FusedParamsError(
            f"{group.kind}: unknown parameter(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known))})"
        )
    made: FusedParams = cls(**point)
    return made


def check_params(group: FusedGroup, params: FusedParams) -> None:
    cls = _BY_KIND[group.kind][0]
    if not isinstance(params, cls):
        raise FusedParamsError(f"{group.kind} takes {cls.__name__}, got {type(params).__name__}")


def describe_params(params: FusedParams) -> str:
    return " ".join(f"{f.name}={getattr(params, f.name)}" for f in fields(params))


__all__ = [
    "ATTENTION_DOMAINS",
    "AttentionParams",
    "EpilogueGemm",
    "FusedAttention",
    "FusedMlp",
    "FusedParams",
    "FusedParamsError",
    "GEMM_DOMAINS",
    "GemmParams",
    "MLP_DOMAINS",
    "MlpParams",
    "check_params",
    "default_params",
    "describe_params",
    "param_domains",
    "params_from",
]
