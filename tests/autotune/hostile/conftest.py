"""The hostile user's world: a results folder with a study, a workload and its files, copied
fresh for each case, and the checks every case makes.

Every case runs a command through the command line in this process (`autotune.cli.main.main`)
and asserts: the exit status (2 for a refusal), no traceback, a one-line message naming the
input, and that every file present before the command is unchanged (or, where the case says
so, rebuilt equal to what an undamaged run wrote). A refusal creates nothing."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import pandas as pd
import pytest

from autotune.cli.main import main

SHAPE = ["--shape", "16x16x16", "--space", "chapter"]  # 27 chapter schedules, milliseconds each
BASE_TRIALS = 10
WORKLOAD = "name,shape,weight\na,16x16x16,2\nb,8x8x16,1\n"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(argv: Sequence[str]) -> Result:
    """The command line, in this process, its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Result(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[Path]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield folder
    finally:
        os.chdir(before)


def _made(argv: Sequence[str]) -> None:
    result = run_cli(argv)
    assert result.code == 0, (argv, result.err)


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: study `base` (grid sampler, 10 trials), workload run `wl` (two GEMM studies),
    an exported schedule, and files of every wrong kind."""
    root = tmp_path_factory.mktemp("hostile")
    with inside(root):
        _made([*SHAPE, "--sampler", "grid", "--trials", str(BASE_TRIALS), "--study", "base"])
        Path("w.csv").write_text(WORKLOAD)
        _made(
            [
                "--workload",
                "w.csv",
                "--space",
                "chapter",
                "--sampler",
                "grid",
                "--trials",
                "3",
                "--study",
                "wl",
            ]
        )
        _made(["export", "base", "--out", "base.json"])
        Path("expected.jsonl").write_text(
            run_cli(["leaderboard", "base", "--top", "30", "--json"]).out
        )
        Path("adir").mkdir()
        Path("adir.csv").mkdir()
        Path("afile").write_text("a plain file\n")
        Path("notes.txt").write_text("first line\nsecond line\n")
        Path("blob").write_bytes(bytes(range(11)) + bytes(range(14, 256)))  # binary, no newline
        pd.DataFrame({"x": [1, 2]}).to_parquet("foreign.parquet")
    return root


@pytest.fixture()
def world(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the template, as the working folder."""
    root = tmp_path / "world"
    shutil.copytree(template, root, symlinks=True)
    monkeypatch.chdir(root)
    return root


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` by its content's hash (folders as '/')."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[key] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[key] = "/"
        else:
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def one_error_line(result: Result) -> str:
    assert "Traceback" not in result.text, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("autotune: error: "), result.err
    return lines[0]


class Hostile:
    """The checks of a hostile case, in the world's folder."""

    def __init__(self, root: Path, template: Path) -> None:
        self.root, self.template = root, template

    def refuses(self, argv: Sequence[str], *named: str) -> str:
        """Exit 2, one line naming each of `named`, and not one file changed or created."""
        before = snapshot(self.root)
        result = run_cli(argv)
        assert result.code == 2, (argv, result.code, result.text)
        line = one_error_line(result)
        for text in named:
            assert text in line, (text, line)
        assert snapshot(self.root) == before, f"{argv} changed files"
        return line

    def accepts(
        self,
        argv: Sequence[str],
        *shown: str,
        code: int | None = 0,
        rebuilt: Sequence[str] = (),
        changed: Sequence[str] = (),
    ) -> Result:
        """Exit `code` without a traceback; files present before unchanged, except `rebuilt` ones
        (equal to the template's) and `changed` ones (anything)."""
        before = snapshot(self.root)
        result = run_cli(argv)
        assert code is None or result.code == code, (argv, result.code, result.text)
        assert "Traceback" not in result.text, result.text
        for text in shown:
            assert text in result.text, (text, result.text)
        after = snapshot(self.root)
        for key, digest in before.items():
            if key in rebuilt:
                assert_same_results(self.root / key, self.template / key)
            elif key not in changed:
                assert after.get(key) == digest, f"{argv} changed {key}"
        return result


def assert_same_results(path: Path, reference: Path) -> None:
    """Two results files hold the same table and metadata (a rebuild of an undamaged run)."""
    import pyarrow.parquet as pq

    found, expected = pq.read_table(path), pq.read_table(reference)
    assert found.schema.metadata == expected.schema.metadata
    pd.testing.assert_frame_equal(found.to_pandas(), expected.to_pandas())


@pytest.fixture()
def hostile(world: Path, template: Path) -> Hostile:
    return Hostile(world, template)
