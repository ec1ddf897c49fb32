"""Small argument checks shared by the oracles' frozen dataclasses."""

from __future__ import annotations


def require_positive_int(name: str, value: object) -> None:
    """Sizes are plain positive ints (bools are ints in Python, so they are rejected explicitly)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)
