"""A SCALE-Sim topology's rows as SCALE-Sim runs them, for its memory model: the convolution's
geometry kept, a depthwise row run once per channel, a GEMM row as SCALE-Sim lowers it."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.systolic.scalesim_layer import ScalesimLayer
from workloads.model import WorkloadError
from workloads.scalesim import scalesim_layers

CONV = """Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,
Conv1,  224, 224,    3, 3,      3,      32,     2,
Conv2 DP,  112, 112,    3, 3,      32,      1,     1,

Conv3,  112, 112,    1, 1,      32,     64,     1,
"""


def test_convolution_rows_keep_their_geometry() -> None:
    layers = scalesim_layers(CONV, Path("mobilenet.csv"))
    assert layers == [
        (ScalesimLayer("Conv1", 224, 224, 3, 3, 3, 32, 2, 2), 1),
        (ScalesimLayer("Conv2 DP", 112, 112, 3, 3, 1, 1, 1, 1), 32),
        (ScalesimLayer("Conv3", 112, 112, 1, 1, 32, 64, 1, 1), 1),
    ]


def test_gemm_rows_are_scalesims_lowering() -> None:
    [(layer, runs)] = scalesim_layers("Layer, M, N, K,\nqkt, 1024, 64, 512,\n", Path("g.csv"))
    assert runs == 1 and (layer.pixels, layer.filters, layer.window) == (1024, 64, 512)


def test_a_bad_row_is_one_line() -> None:
    with pytest.raises(WorkloadError, match="line 2: Channels must be positive"):
        scalesim_layers(CONV.replace("3,      32,     2,", "0,      32,     2,"), Path("t.csv"))
