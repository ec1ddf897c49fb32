"""The bundled networks built as graphs, by name, each with the settings it takes; the GEMM
lists beside this file (*.toml, *.csv) are the bundled workloads a tune run reads by name."""

from __future__ import annotations

import inspect
from typing import Callable

from workloads.graph import Graph
from workloads.model import WorkloadError
from workloads.networks.cnns import mobilenet_v2, resnet50
from workloads.networks.transformers import bert_base, gpt2, llama2_7b

NETWORKS: dict[str, Callable[..., Graph]] = {
    "gpt2": gpt2,
    "bert_base": bert_base,
    "llama2_7b": llama2_7b,
    "resnet50": resnet50,
    "mobilenet_v2": mobilenet_v2,
}


def settings(name: str) -> dict[str, object]:
    """A network's settings and their defaults."""
    return {p.name: p.default for p in inspect.signature(NETWORKS[name]).parameters.values()}


def build(name: str, **options: object) -> Graph:
    """The network `name` with `options` (settings it takes; others are an error)."""
    known = settings(name)
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = ", ".join(known) or "no settings"
        raise WorkloadError(f"network {name}: takes {takes}, not {', '.join(unknown)}")
    for key, value in options.items():
        if isinstance(known[key], int) and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise WorkloadError(f"network {name}: {key} must be a positive integer, got {value!r}")
    return NETWORKS[name](**options)
