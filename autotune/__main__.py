from __future__ import annotations

import sys

from autotune.cli.main import main_entry

main_entry(sys.argv[1:])
