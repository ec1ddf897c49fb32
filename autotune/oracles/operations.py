"""Which oracle times which operation of a network graph (workloads.graph), and the capability
an oracle declares to time operations outside a tune run.

Every oracle times matrix products (gemm, matmul, conv) through its GEMM studies: that is the
default, and all a third-party oracle needs. An oracle that times more declares the
`Operations` capability: `supports(op)` says which operations, `time_operation(op, machine)`
times one (its best schedule, cycles, energy, DRAM traffic). Views and shape arithmetic move
no word and need no oracle: they are free. `timed_by(oracle, op)` is the one question callers
ask.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autotune.oracles.base import Oracle
    from workloads.graph import Operation

FREE = frozenset({"view", "shape"})


@dataclass(frozen=True)
class OperationTime:
    """One run of an operation on one machine: its cycles, energy, DRAM traffic (words), the
    schedule that gave them and how they were found (`method`: "exact" for the operation's own
    program, "stand-in: ..." when a program of another operation of equal cost timed it)."""

    cycles: int
    energy_pj: float | None
    dram_words: int
    schedule: str
    method: str = "exact"
    bound_cycles: int | None = None


class Operations(ABC):
    """The operations of a network an oracle times besides its GEMM studies (a mix-in, asked
    with `oracle.capability(Operations)`)."""

    @abstractmethod
    def supports(self, operation: Operation) -> bool:
        """Whether `time_operation` times it."""

    @abstractmethod
    def time_operation(self, operation: Operation, machine: Any) -> OperationTime:
        """One run's best schedule found, exactly timed (count not applied); OracleError when
        the operation cannot be timed on this machine."""


def is_free(operation: Operation) -> bool:
    """A view or shape arithmetic: no word moves, no oracle needed."""
    return operation.family in FREE


def timed_by(oracle: Oracle, operation: Operation) -> bool:
    """Whether `oracle` times `operation`: by its Operations capability, else products only."""
    capable = oracle.capability(Operations)
    if capable is not None:
        return capable.supports(operation)
    return operation.family == "product"
