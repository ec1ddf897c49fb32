"""How many examples a property test draws. The count a test names is the deep search's (the `ci`
profile, selected with AUTOTUNE_HYPOTHESIS_PROFILE=ci); the default (the `dev` profile, which
`pytest` and CI run) draws a quarter of it, at least 10. The property is the same; the deep
search looks harder for a counterexample."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("AUTOTUNE_HYPOTHESIS_PROFILE", "dev")
CI_EXAMPLES = 100  # hypothesis's own default, for tests that name no count
settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 4, deadline=None)


def examples(count: int) -> int:
    """`count` examples under the `ci` profile, a quarter (at least 10) under `dev`."""
    if PROFILE == "ci":
        return count
    return min(count, max(10, count // 4))


def load_profile() -> None:
    if PROFILE not in ("ci", "dev"):
        raise ValueError(f"AUTOTUNE_HYPOTHESIS_PROFILE={PROFILE!r}: expected 'ci' or 'dev'")
    settings.load_profile(PROFILE)
