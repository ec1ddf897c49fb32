"""Running the command line in-process, as the tests of its errors do."""

from __future__ import annotations

import pytest

from autotune.cli.main import main


def run_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the CLI in-process; it must fail with status 2 and one `autotune: error:` line."""
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2, (code, captured.out, captured.err)
    assert "Traceback" not in captured.err and "Traceback" not in captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("autotune: error: ")
    return lines[0]
