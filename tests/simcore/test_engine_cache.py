"""The compiled engine is cached on disk: a second process loads the kernels instead of
compiling them (numba's dispatcher statistics say which). No wall-clock limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import json
from simcore import Machine, Shape
from simcore.ga1.engine import General, cache_is_warm
from simcore.ga1.engine.periodic import drive
from simcore.ga1.engine.stream import time_compiled
from simcore.ga1.generator import GeneralParams
warm = cache_is_warm()
generator = General(Shape(32, 32, 32), Machine(slots=16), GeneralParams(bi=2, bj=2))
generator.timing()  # the periodic method (the driver)
generator.timing("full")  # every instruction (the fused generator and timing)
stats = [kernel.stats for kernel in (drive, time_compiled)]
print(json.dumps({"warm": warm, "hits": sum(sum(s.cache_hits.values()) for s in stats),
                  "misses": sum(sum(s.cache_misses.values()) for s in stats)}))
"""


def run_once(cache: Path) -> dict[str, object]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # compiles the engine into an empty cache
def test_the_second_process_loads_the_compiled_kernels(tmp_path: Path) -> None:
    first, second = run_once(tmp_path), run_once(tmp_path)
    assert first == {"warm": False, "hits": 0, "misses": 2}
    assert second == {"warm": True, "hits": 2, "misses": 0}
