"""Vector programs on GA-1: timing at LLM scale, exactness against the reference, and the
functional errors against numpy.

(a) Scale: each operation of a transformer's non-GEMM work at its real size is timed from its
    tree by the periodic method: CPU time (time.process_time) of building the tree and timing it,
    the median of --repeats after one warm-up (numba loads its kernels), with the cycles, the
    DMA's loads and stores, the instructions the tree stands for and the rows it holds.
(b) Per tile: on the default machine, a 256 x 2048 operation of each kind and a few schedules:
    the vector unit's busy cycles, the DMA's transfers and the cycles, per tile.
(c) Exactness: --cases random operations, schedules and machines (up to 120 x 150, T of 2, 4 or
    8) timed periodically from the tree, in full from the tree, by the compiled engine over the
    flat program and by the reference simulator (simcore.ga1.timing.run_timing): the cases where
    any two differ (0 expected), and how many the periodic method jumped.
(d) Errors: --cases more, each verified (outputs against numpy, hazard replay, timings); by
    kind, the largest error as a share of the tolerance's allowance (RTOL 1e-9, ATOL 1e-12).

Usage: python benchmarks/bench_vector.py [--repeats N] [--cases N] [--seed S] [--out FILE]
Writes FILE (results/bench_vector.json by default).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simcore.ga1.engine.programs import time_program  # noqa: E402
from simcore.ga1.machine import Machine  # noqa: E402
from simcore.ga1.timing import run_timing  # noqa: E402
from simcore.ga1.vector import (  # noqa: E402
    KINDS,
    VectorOp,
    VectorParams,
    all_params,
    slots_needed,
    vector_program,
)
from simcore.ga1.vector.emit import tree_rows, tree_size  # noqa: E402
from simcore.ga1.vector.timing import FULL, time_tree  # noqa: E402

SCALE: tuple[tuple[str, VectorOp, VectorParams], ...] = (
    ("attention softmax", VectorOp("softmax", 2048, 2048, batch=32, scale=0.125), VectorParams()),
    (
        "causal attention softmax",
        VectorOp("softmax", 2048, 2048, batch=32, scale=0.125, causal=True),
        VectorParams(),
    ),
    (
        "online causal softmax",
        VectorOp("softmax", 2048, 2048, batch=32, scale=0.125, causal=True),
        VectorParams(reduction="online"),
    ),
    ("decode softmax, 2048 context", VectorOp("softmax", 1, 2048, batch=32), VectorParams()),
    ("layer norm 2048 x 4096", VectorOp("layernorm", 2048, 4096), VectorParams()),
    ("RMS norm 2048 x 4096, col x4", VectorOp("rmsnorm", 2048, 4096), VectorParams("col", 4)),
    ("GELU 2048 x 3072", VectorOp("gelu", 2048, 3072), VectorParams()),
    ("SiLU 2048 x 11008", VectorOp("silu", 2048, 11008), VectorParams()),
    ("residual add 2048 x 4096", VectorOp("add", 2048, 4096), VectorParams()),
    ("K transposed, 32 x 2048 x 128", VectorOp("transpose", 2048, 128, batch=32), VectorParams()),
)


def scale(repeats: int) -> list[dict[str, object]]:
    machine, rows = Machine(), []
    vector_program(SCALE[0][1], machine).timing()  # numba loads its kernels once
    for name, op, params in SCALE:
        generator = vector_program(op, machine, params)
        spent = []
        for _ in range(repeats):
            start = time.process_time()
            tree = generator.tree()
            timing = time_tree(machine, tree)
            spent.append(time.process_time() - start)
        rows.append(
            dict(
                name=name, op=op.describe(), params=str(params), cpu_s=statistics.median(spent),
                cycles=timing.cycles, loads=timing.loads, stores=timing.stores,
                instructions=tree_rows(tree), rows_held=tree_size(tree), method=timing.method,
            )
        )  # fmt: skip
        print(f"{name:32} {rows[-1]['cpu_s'] * 1e3:8.1f} ms CPU  {timing.cycles:>13,} cycles  "
              f"{tree_rows(tree):>12,} instructions, {tree_size(tree):>7,} rows held")  # fmt: skip
    return rows


PER_TILE: tuple[tuple[str, dict[str, object], VectorParams], ...] = (
    ("relu", {}, VectorParams()),
    ("copy", {}, VectorParams()),
    ("transpose", {}, VectorParams()),
    ("gelu", {}, VectorParams()),
    ("gelu", {"gelu": "erf"}, VectorParams()),
    ("silu", {}, VectorParams()),
    ("add", {}, VectorParams()),
    ("bias", {}, VectorParams()),
    ("bias", {}, VectorParams("col", 8)),
    ("softmax", {}, VectorParams(reduction="two_pass")),
    ("softmax", {}, VectorParams(reduction="online")),
    ("layernorm", {}, VectorParams(reduction="two_pass")),
    ("layernorm", {}, VectorParams(reduction="online")),
    ("layernorm", {}, VectorParams("col", 4)),
    ("rmsnorm", {}, VectorParams()),
    ("rmsnorm", {}, VectorParams("col", 8)),
    ("rowsum", {}, VectorParams()),
    ("rowmax", {}, VectorParams()),
)


def per_tile() -> list[dict[str, object]]:
    """Per tile of a 256 x 2048 operation on the default machine: the vector unit's busy
    cycles, the DMA's transfers, and the cycles."""
    machine, rows = Machine(), []
    print(
        "operation                  schedule                          vpu/tile  moves/tile  cycles/tile"
    )
    for kind, options, params in PER_TILE:
        op = VectorOp(kind, 256, 2048, **options)  # type: ignore[arg-type]
        timing = vector_program(op, machine, params).timing()
        tiles = (256 // 8) * (2048 // 8)
        row = dict(op=op.describe(), params=str(params), vpu=timing.busy[2] / tiles,
                   moves=(timing.loads + timing.stores) / tiles, cycles=timing.cycles / tiles)  # fmt: skip
        rows.append(row)
        print(f"{op.describe():26} {params.order} group {params.group} {params.reduction:9} "
              f"buffers {params.buffers}  {row['vpu']:8.1f}  {row['moves']:10.2f}  {row['cycles']:11.1f}")  # fmt: skip
    return rows


def random_case(rng: random.Random) -> tuple[VectorOp, VectorParams, Machine]:
    kind = rng.choice(sorted(KINDS))
    causal = kind == "softmax" and rng.random() < 0.5
    op = VectorOp(
        kind, rng.randint(1, 120), rng.randint(1, 150), batch=rng.randint(1, 3),
        causal=causal, causal_offset=rng.randint(0, 30) if causal else 0,
        scale=rng.choice([1.0, 0.125]) if kind in ("softmax", "scale") else 1.0,
        gelu=rng.choice(["tanh", "erf"]),
    )  # fmt: skip
    params = rng.choice(all_params(op))
    T = rng.choice([2, 4, 8])
    need = slots_needed(op, Machine(T=T), params)
    return op, params, Machine(T=T, slots=need + rng.randint(0, 2), dma_setup=rng.randint(0, 30))


def exactness(cases: int, rng: random.Random) -> dict[str, object]:
    differ, jumped = [], 0
    for _ in range(cases):
        op, params, machine = random_case(rng)
        generator = vector_program(op, machine, params)
        tree, program = generator.tree(), generator.program()
        got = [time_tree(machine, tree), time_tree(machine, tree, FULL)]
        got += [time_program(machine, program), run_timing(machine, program)]
        jumped += got[0].method == "periodic"
        if len({(t.cycles, t.busy, t.loads, t.stores) for t in got}) != 1:
            differ.append(f"{op.describe()} {params} T={machine.T}")
    print(f"exactness: {cases} cases, {len(differ)} differ, {jumped} jumped periodically")
    return dict(cases=cases, differ=differ, jumped=jumped)


def errors(cases: int, rng: random.Random) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    for _ in range(cases):
        op, params, machine = random_case(rng)
        generator = vector_program(op, machine, params)
        verification = generator.verify(seed=rng.randint(0, 10**6))
        assert verification.ok, f"{op.describe()} {params}: {verification.describe()}"
        entry = found.setdefault(op.kind, dict(cases=0, worst_share=0.0))
        entry["cases"] += 1
        entry["worst_share"] = max(entry["worst_share"], verification.worst)
    for kind, entry in sorted(found.items()):
        print(f"{kind:10} {int(entry['cases']):4} cases, largest error "
              f"{entry['worst_share']:.2e} of the tolerance")  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench_vector.json")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    report = dict(scale=scale(args.repeats), per_tile=per_tile())
    report["exactness"] = exactness(args.cases, rng)
    report["errors"] = errors(args.cases, rng)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
