from __future__ import annotations

import sys

from autotune.interrupt import run_as_process


def _command() -> int:
    from autotune.cli.main import main  # imported under the process's Ctrl-C handling

    return main(sys.argv[1:])


run_as_process(_command)
