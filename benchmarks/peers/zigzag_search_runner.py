"""Time ZigZag's per-layer mapping search on GEMM layers: reads a JSON list of layers on stdin,
prints a JSON object with one result per layer.

Run by benchmarks/scale/bench_scale.py with the Python of a separate virtualenv that has the `bench`
extra (zigzag-dse 3.9.1); it imports nothing of this project. Each layer is the GEMM
O[d0][d1] += I[d0][d2] * W[d2][d1] (d0 = M, d1 = N, d2 = K; precision I = W = 8, O = 16,
O_final = 8) on ZigZag's own example accelerator, inputs/hardware/tpu_like.yaml as shipped (a
32 x 32 weight-stationary array). Its spatial mapping is fixed as tpu_like's mapping file fixes
it for a layer (array columns over d1, rows over d2, 32 each). Two calls of ZigZag's API
(`get_hardware_performance_zigzag`, opt="latency", every other argument its default):

  search   no temporal ordering given: ZigZag's default temporal mapping search (LOMA, its loop
           prime factors limited to lpf_limit = 6, so at most 6! = 720 loop orders), every
           candidate costed by its analytic cost model, the best kept;
  one      one temporal ordering given (innermost first: d0, d2 / 32, d1 / 32): one mapping.

For each: the API call's CPU time (time.process_time) and wall time, the temporal mappings the
cost model evaluated, and the CPU time inside the cost model stage per mapping. A small layer is
searched first, untimed, so that the imports and first-call costs are not in the figures.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from pathlib import Path


def workload(m: int, k: int, n: int) -> list[dict]:
    return [
        {
            "id": 0,
            "name": "gemm",
            "operator_type": "Gemm",
            "equation": "O[d0][d1]+=I[d0][d2]*W[d2][d1]",
            "dimension_relations": [],
            "loop_dims": ["D0", "D1", "D2"],
            "loop_sizes": [m, n, k],
            "operand_precision": {"W": 8, "I": 8, "O": 16, "O_final": 8},
            "operand_source": {"I": 0, "W": 0},
        }
    ]


def mapping(temporal: list[list[object]] | None) -> list[dict]:
    entry: dict[str, object] = {
        "name": "default",
        "spatial_mapping": {"D1": ["D1, 32"], "D2": ["D2, 32"]},
        "memory_operand_links": {"O": "O", "W": "I2", "I": "I1"},
    }
    if temporal is not None:
        entry["temporal_ordering"] = temporal
    return [entry]


class CostModelClock:
    """Counts the cost model's evaluations and their CPU time, by wrapping its stage."""

    def __init__(self) -> None:
        from zigzag.stages.evaluation import cost_model_evaluation

        self.evaluations, self.seconds = 0, 0.0
        stage = cost_model_evaluation.CostModelStage
        original = stage.run
        clock = self

        def run(self_stage):  # type: ignore[no-untyped-def]
            started = time.process_time()
            results = list(original(self_stage))
            clock.seconds += time.process_time() - started
            clock.evaluations += 1
            yield from results

        stage.run = run

    def reset(self) -> None:
        self.evaluations, self.seconds = 0, 0.0


def call(
    layer: dict, temporal: list[list[object]] | None, clock: CostModelClock, tmp: Path
) -> dict:
    import yaml
    import zigzag
    from zigzag.api import get_hardware_performance_zigzag

    hardware = Path(zigzag.__file__).parent / "inputs" / "hardware" / "tpu_like.yaml"
    mapping_file = tmp / "mapping.yaml"
    mapping_file.write_text(yaml.safe_dump(mapping(temporal), sort_keys=False))
    clock.reset()
    cpu, wall = time.process_time(), time.perf_counter()
    energy, latency, _ = get_hardware_performance_zigzag(
        workload(layer["m"], layer["k"], layer["n"]),
        str(hardware),
        str(mapping_file),
        opt="latency",
        dump_folder=str(tmp / "out"),
        loma_show_progress_bar=False,
    )
    return {
        "cpu_s": time.process_time() - cpu,
        "wall_s": time.perf_counter() - wall,
        "mappings": clock.evaluations,
        "cost_model_ms_per_mapping": 1e3 * clock.seconds / max(clock.evaluations, 1),
        "latency_cycles": float(latency),
        "energy_pj": float(energy),
    }


def main() -> None:
    logging.disable(logging.CRITICAL)
    layers = json.load(sys.stdin)
    clock = CostModelClock()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        call({"m": 128, "k": 128, "n": 128}, None, clock, Path(tmp))  # warm-up, untimed
        for layer in layers:
            one = [["D0", layer["m"]], ["D2", layer["k"] // 32], ["D1", layer["n"] // 32]]
            results.append(
                {
                    "id": layer["id"],
                    "search": call(layer, None, clock, Path(tmp)),
                    "one": call(layer, one, clock, Path(tmp)),
                }
            )
    from importlib.metadata import version

    json.dump({"zigzag_version": version("zigzag-dse"), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
