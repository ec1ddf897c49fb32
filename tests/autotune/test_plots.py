"""`autotune plot`: history, Pareto and timeline PNGs, written and non-empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune.cli.main import main

PNG = b"\x89PNG\r\n\x1a\n"

ENGINES = ("DMA load", "DMA store", "matrix unit")


def _png(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 1000 and path.read_bytes()[:8] == PNG


def test_plots_single_and_multi_objective(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        main(["--shape", "32x32x32", "--trials", "15", "--study", "one", "--verify-top", "2"]) == 0
    )
    assert main(["plot", "one", "--rank", "2"]) == 0
    plots = tmp_path / "results" / "one" / "plots"
    assert _png(plots / "history.png") and _png(plots / "timeline_rank2.png")
    assert not (plots / "pareto.png").exists()  # one objective: no front
    assert (
        main(
            [
                "--shape",
                "32x32x32",
                "--trials",
                "15",
                "--study",
                "two",
                "--search-machine",
                "--objectives",
                "cycles,scratchpad_words",
                "--verify-top",
                "2",
            ]
        )
        == 0
    )
    assert main(["plot", "two", "--out", str(tmp_path / "p")]) == 0
    assert all(
        _png(tmp_path / "p" / n) for n in ("history.png", "pareto.png", "timeline_rank1.png")
    )


def test_plots_codesign_pareto_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.csv").write_text("name,shape,weight\na,16x16x16,3\n")
    assert (
        main(
            [
                "--workload",
                "w.csv",
                "--slots",
                "16",
                "--search-machine",
                "--objectives",
                "cycles,scratchpad_words",
                "--trials",
                "10",
                "--study",
                "cd",
            ]
        )
        == 0
    )
    assert main(["plot", str(tmp_path / "results" / "cd" / "pareto.parquet")]) == 0
    plots = tmp_path / "results" / "cd" / "plots"
    assert all(_png(plots / n) for n in ("history.png", "pareto.png", "timeline_rank1.png"))


def test_plot_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["plot", "no-such-study"]) == 2


def test_merged_spans_draw_the_same_timeline(tmp_path: Path) -> None:
    # The timeline draws each engine's busy spans, back-to-back instructions merged; at a small
    # size the picture is the one drawn from every instruction's own bar (the trace's).
    import matplotlib.image as mpimg
    import numpy as np

    from autotune.oracles.capabilities import Timeline
    from autotune.results import plots
    from simcore import Machine, Shape
    from simcore.ga1 import engine
    from simcore.ga1.engine.spans import ROWS, busy_spans, first_instructions
    from simcore.ga1.generator import default_params

    shape, machine = Shape(64, 48, 56), Machine(slots=24)
    program = engine.General(shape, machine, default_params(shape, machine)).program()
    timing = engine.time_program(machine, program, record=True)
    starts, finishes, ops = timing.starts, timing.finishes, program.code[:, 0]
    each = tuple(
        np.stack([starts[m], finishes[m]], axis=1)
        for m in ((ops == op) & (finishes > starts) for op in ROWS)
    )
    first = tuple(first_instructions(program, starts, finishes, 1500))
    merged = tuple(busy_spans(program, starts, finishes))
    assert sum(map(len, merged)) < sum(map(len, each))  # something was merged
    pictures = [
        plots.timeline_png(
            Timeline(timing.cycles, ENGINES, spans, first, 1500), "t", tmp_path / f"{name}.png"
        )
        for name, spans in (("each", each), ("merged", merged))
    ]
    one, other = (mpimg.imread(path) for path in pictures)
    assert one.shape == other.shape
    # No bar appears, goes or moves (that changes a pixel's colour by far more): what differs are
    # the faint seams that anti-aliasing drew between touching bars of the same colour.
    assert np.abs(one - other).max() < 0.1
