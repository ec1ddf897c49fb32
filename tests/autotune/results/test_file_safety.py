"""Files the user owns stay theirs: outputs never replace devices, FIFOs or a study's own files,
a storage path is a journal or is refused, and pictures autotune did not draw need --force."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import run_error

from autotune.cli.main import main
from autotune.errors import ResultsError
from autotune.results.files import check_output, study_file, write_text
from autotune.results.owner import storage_key
from autotune.storage.journal import JournalFile
from autotune.storage.names import name_problem

ROOT = Path(__file__).resolve().parents[3]
TUNE = ["--shape", "32x32x32", "--trials", "3"]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def study(capsys: pytest.CaptureFixture[str]) -> str:
    assert main([*TUNE, "--study", "S"]) == 0
    capsys.readouterr()
    return "S"


def _fake_null(path: Path) -> Path:
    """A character device like /dev/null, made here (never the real one)."""
    if os.geteuid() != 0:
        pytest.skip("making a device file needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


# --- --out ----------------------------------------------------------------------------------


def test_out_never_replaces_a_device(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, study: str
) -> None:
    device = _fake_null(in_tmp / "fakenull")
    line = run_error(capsys, ["export", study, "--out", str(device), "--force"])
    assert "not a regular file" in line
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_out_never_replaces_a_fifo(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, study: str
) -> None:
    fifo = in_tmp / "fifo"
    os.mkfifo(fifo)
    line = run_error(capsys, ["export", study, "--out", str(fifo), "--force"])
    assert "not a regular file" in line
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_atomic_write_refuses_a_fifo(in_tmp: Path) -> None:
    fifo = in_tmp / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ResultsError, match="not a regular file"):
        write_text("x", fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert [p.name for p in in_tmp.iterdir()] == ["fifo"]  # no temporary left behind


def test_atomic_write_over_a_symlink_replaces_the_link_not_its_target(in_tmp: Path) -> None:
    target, link = in_tmp / "target.txt", in_tmp / "link.txt"
    target.write_text("old")
    link.symlink_to(target.name)
    write_text("new", link)
    assert not link.is_symlink() and link.read_text() == "new" and target.read_text() == "old"


def test_atomic_write_keeps_the_permission_bits(in_tmp: Path) -> None:
    private = in_tmp / "private.txt"
    private.write_text("old")
    private.chmod(0o600)
    write_text("new", private)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == "new"


def test_a_study_program_is_its_own_file(in_tmp: Path) -> None:
    folder = in_tmp / "results" / "st"
    (folder / "programs").mkdir(parents=True)
    (folder / "study.journal").write_text("")
    program = folder / "programs" / "0123456789abcdef.asm"
    program.write_text("the only copy")
    link = in_tmp / "link.asm"
    link.symlink_to(program)
    for path in (program, folder / "programs" / "new.asm", link):
        assert study_file(path)
        with pytest.raises(ResultsError, match="study's own file"):
            check_output(path, force=True)
    assert not study_file(in_tmp / "programs" / "x.asm")  # no study around it


# --- --storage ------------------------------------------------------------------------------


def test_storage_of_one_json_line_is_refused_and_kept(
    capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    mine = in_tmp / "complete.json"
    mine.write_text(json.dumps({"results": [1, 2, 3]}))
    before = mine.read_bytes()
    line = run_error(capsys, [*TUNE, "--study", "st2", "--storage", str(mine)])
    assert "holds no journal record" in line
    assert mine.read_bytes() == before
    assert not (in_tmp / "results" / "st2").exists()


def test_a_torn_record_after_a_whole_one_is_still_cut(in_tmp: Path) -> None:
    path = in_tmp / "study.journal"
    path.write_bytes(b'{"op_code":0,"study_name":"a"}\n{"op_code":1,"stu')
    journal = JournalFile(path)
    try:
        journal.append_logs([{"op_code": 2}])
    finally:
        journal.close()
    assert path.read_bytes() == b'{"op_code":0,"study_name":"a"}\n{"op_code":2}\n'


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_storage_that_is_not_a_regular_file_is_refused(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, kind: str
) -> None:
    path = in_tmp / kind
    if kind == "device":
        _fake_null(path)
    else:
        os.mkfifo(path)
    line = run_error(capsys, [*TUNE, "--study", "st3", "--storage", str(path)])
    assert "not a regular file" in line
    assert sorted(p.name for p in in_tmp.iterdir()) == [kind]  # no lease, no results


# --- numbers out of range -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([*TUNE, "--seed=-1"], "--seed: must be between 0 and 4294967295"),
        ([*TUNE, "--seed", "4294967296"], "--seed: must be between 0 and 4294967295"),
        (
            ["optimum", "--shape", "16x16x16", "--slots", "4", "--seed", "2147483648"],
            "--seed: must be between 0 and 2147483647",
        ),
        ([*TUNE, "--workers", "1000000"], "--workers: must be at most"),
    ],
)
def test_out_of_range_numbers_are_usage_errors(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, argv: list[str], expected: str
) -> None:
    assert expected in run_error(capsys, argv)
    assert not (in_tmp / "results").exists()


# --- encodings ------------------------------------------------------------------------------


def test_an_ascii_terminal_shows_unicode_names_escaped(in_tmp: Path, study: str) -> None:
    assert main([*TUNE, "--study", "ünï€"]) == 0
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    for argv in (["studies"], ["leaderboard", "ünï€"]):
        done = subprocess.run(
            [sys.executable, "-m", "autotune", *argv], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "\\xfcn\\xef\\u20ac" in done.stdout


def test_a_name_a_non_utf8_locale_cannot_carry_is_refused_for_that() -> None:
    # What Python hands over for 'ünï' when the locale is ASCII: the UTF-8 bytes as escapes.
    escaped = "ünï".encode().decode("ascii", "surrogateescape")
    assert "UTF-8 locale" in str(name_problem(escaped))
    assert "control or non-printable" in str(name_problem("a\x07b"))
    root = Path("results")
    assert storage_key(f"results/{escaped}/study.journal", root) == "ünï/study.journal"


# --- plot -----------------------------------------------------------------------------------


def test_plot_keeps_pictures_autotune_did_not_draw(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, study: str
) -> None:
    copy = in_tmp / "x"
    (copy / "plots").mkdir(parents=True)
    (copy / "lb.parquet").write_bytes(
        (in_tmp / "results" / study / "leaderboard.parquet").read_bytes()
    )
    mine = copy / "plots" / "history.png"
    mine.write_text("mine")
    line = run_error(capsys, ["plot", str(copy / "lb.parquet")])
    assert "autotune did not draw it" in line and "--force" in line
    assert mine.read_text() == "mine"
    assert main(["plot", str(copy / "lb.parquet"), "--force"]) == 0
    assert main(["plot", str(copy / "lb.parquet")]) == 0  # its own pictures: redrawn


def test_plot_draws_with_agg_whatever_mplbackend_says(in_tmp: Path, study: str) -> None:
    env = {**os.environ, "MPLBACKEND": "bogus", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "autotune", "plot", study], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert (in_tmp / "results" / study / "plots" / "history.png").is_file()
