from __future__ import annotations

import sys

from autotune.cli.main import main

sys.exit(main(sys.argv[1:]))
