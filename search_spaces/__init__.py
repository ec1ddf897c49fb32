"""search_spaces: what may be searched, declared as data. Depends on simcore only."""

from __future__ import annotations
