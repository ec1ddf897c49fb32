"""autotune: schedule search for matrix accelerators, with simcore's simulators as the oracle."""
from __future__ import annotations

__version__ = "0.1.0"
