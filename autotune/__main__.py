from __future__ import annotations

import sys

from autotune.cli.main import main
from autotune.interrupt import leave

leave(main(sys.argv[1:]))
