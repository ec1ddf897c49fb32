"""The same work unfused: each operation its own program, every intermediate stored to DRAM
and loaded again by the next program. Programs run one after another, so the group's cycles
are their sum, and its DRAM tiles the sum of theirs.

* a GEMM with an epilogue: the plain GEMM, then one vector program per epilogue step;
* the MLP: the up projection, the bias and the activation, the down projection, its bias;
* attention: S = Q K^T for every head (K transposed first when held by rows), the scaled
  (causal) softmax over S, then O = P V.
Each part takes its own fastest schedule: the GEMMs from the fused GEMM's domains, the vector
operations from theirs (simcore.ga1.vector).
"""

from __future__ import annotations

from dataclasses import dataclass

from simcore.energy.technology import Technology
from simcore.fusion.groups import EpilogueGemm, FusedAttention, FusedGroup, FusedMlp
from simcore.ga1.fused.search import best_schedule
from simcore.ga1.machine import Machine
from simcore.ga1.vector import VectorOp, all_params, slots_needed, vector_program

STEP_OPS = {"bias": "bias", "relu": "relu", "gelu": "gelu", "silu": "silu"}
STEP_OPS.update({"residual": "add", "scale": "scale", "gate": "mul"})


@dataclass(frozen=True)
class Part:
    """One program of the unfused work: what it computes, its cycles, tiles and energy."""

    name: str
    cycles: int
    loads: int
    stores: int
    energy_pj: float

    @property
    def tiles(self) -> int:
        return self.loads + self.stores


@dataclass(frozen=True)
class Unfused:
    parts: tuple[Part, ...]

    @property
    def cycles(self) -> int:
        return sum(p.cycles for p in self.parts)

    @property
    def tiles(self) -> int:
        return sum(p.tiles for p in self.parts)

    @property
    def energy_pj(self) -> float:
        return sum(p.energy_pj for p in self.parts)


def _gemm(name: str, group: EpilogueGemm, machine: Machine, tech: Technology | None) -> Part:
    best = best_schedule(group, machine)
    t = best.timing
    cost = best.program.cost(tech, t)
    return Part(name, t.cycles, t.loads, t.stores, cost.energy_pj)


def _vector(op: VectorOp, machine: Machine, tech: Technology | None) -> Part:
    found = None
    for params in all_params(op):
        if slots_needed(op, machine, params) > machine.slots:
            continue
        program = vector_program(op, machine, params)
        t = program.timing()
        if found is None or (t.cycles, t.tiles_moved) < found[0]:
            found = ((t.cycles, t.tiles_moved), program, t)
    if found is None:
        raise ValueError(f"no schedule of {op.describe()} fits {machine.slots} slots")
    _key, program, t = found
    return Part(op.describe(), t.cycles, t.loads, t.stores, program.cost(tech, t).energy_pj)


def _steps(
    steps: tuple[str, ...], rows: int, cols: int, batch: int, scale: float, gelu: str
) -> list[VectorOp]:
    ops = []
    for step in steps:
        kind = STEP_OPS[step]
        ops.append(
            VectorOp(
                kind,
                rows,
                cols,
                batch,
                scale=scale if kind == "scale" else 1.0,
                gelu=gelu,
            )
        )
    return ops


def unfused(group: FusedGroup, machine: Machine, tech: Technology | None = None) -> Unfused:
    """The group's operations as separate programs, each at its fastest schedule."""
    parts: list[Part] = []
    if isinstance(group, EpilogueGemm):
        plain = EpilogueGemm(group.m, group.k, group.n, batch=group.batch)
        parts.append(_gemm(plain.describe(), plain, machine, tech))
        for op in _steps(group.epilogue, group.m, group.n, group.batch, group.scale, group.gelu):
            parts.append(_vector(op, machine, tech))
    elif isinstance(group, FusedMlp):
        up = EpilogueGemm(group.m, group.d, group.hidden)
        down = EpilogueGemm(group.m, group.hidden, group.d_out)
        parts.append(_gemm(f"up {up.describe()}", up, machine, tech))
        steps = ("bias", group.activation) if group.bias else (group.activation,)
        for op in _steps(steps, group.m, group.hidden, 1, 1.0, group.gelu):
            parts.append(_vector(op, machine, tech))
        parts.append(_gemm(f"down {down.describe()}", down, machine, tech))
        if group.bias:
            parts.append(_vector(VectorOp("bias", group.m, group.d_out), machine, tech))
    else:
        assert isinstance(group, FusedAttention)
        parts.extend(_attention_parts(group, machine, tech))
    return Unfused(tuple(parts))


def _attention_parts(
    group: FusedAttention, machine: Machine, tech: Technology | None
) -> list[Part]:
    g = group
    parts = []
    if g.k_layout == "rows":
        parts.append(_vector(VectorOp("transpose", g.keys, g.head_dim, g.heads), machine, tech))
    scores = EpilogueGemm(g.queries, g.head_dim, g.keys, batch=g.heads)
    parts.append(_gemm(f"scores {scores.describe()}", scores, machine, tech))
    softmax = VectorOp(
        "softmax",
        g.queries,
        g.keys,
        g.heads,
        scale=g.scale,
        causal=g.causal,
        causal_offset=g.causal_offset,
    )
    parts.append(_vector(softmax, machine, tech))
    values = EpilogueGemm(g.queries, g.keys, g.head_dim, batch=g.heads)
    parts.append(_gemm(f"values {values.describe()}", values, machine, tech))
    return parts
