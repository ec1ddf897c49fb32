"""The command line's one error mapping: every domain error becomes one line naming the flag at
fault, and exit status 2."""

from __future__ import annotations

import re

from autotune.errors import AutotuneError

# Settings (the plan's and the API's names) and the flags that set them, where they differ.
FLAGS: dict[str, str] = {
    "trials": "--trials",
    "timeout": "--timeout",
    "verify_top": "--verify-top",
    "workers": "--workers",
    "sampler": "--sampler",
    "seed": "--seed",
    "study": "--study",
    "storage": "--storage",
    "spaces": "--space",
    "oracle": "--oracle",
    "objectives": "--objectives",
    "machine": "--machine",
    "workload": "--workload",
    "enqueue": "--enqueue",
    "search_machine": "--search-machine",
    "machine_range": "--machine-range",
    "max_scratchpad_words": "--max-scratchpad-words",
    "max_dma_words_per_cycle": "--max-dma-words-per-cycle",
    "allow_sampler_change": "--allow-sampler-change",
    "results": "--results",
    "technology": "--tech",
    "area_budget": "--area-budget",
    "energy_budget": "--energy-budget",
    "out": "--out",
    "force": "--force",
    "reference": "--reference",
    "transfer": "--transfer",
    "time_limit": "--time-limit",
    "work_limit": "--work-limit",
    "max_products": "--max-products",
    "max_memory": "--max-memory",
    "pe_budget": "--pe-budget",
}
# A library message names a setting's value as `setting=value` (as a keyword argument reads).
_ASSIGNED = re.compile(r"\b(" + "|".join(FLAGS) + r")=([^\s;()]+)")
_MULTI_WORD = re.compile(r"\b(" + "|".join(k for k in FLAGS if "_" in k) + r")\b")


class UsageError(Exception):
    """A command line the parser or a command refuses: one line, exit status 2."""


def message(exc: AutotuneError) -> str:
    """The error as the command line says it: settings named by their flags, and the flag at
    fault first when the message does not start with it."""
    text = _ASSIGNED.sub(_flag_value, str(exc))
    text = _MULTI_WORD.sub(lambda m: FLAGS[m.group(1)], text)
    flag = FLAGS.get(exc.setting or "")
    if flag is None:
        return text
    for lead in (exc.setting + " ", exc.setting + ":"):  # type: ignore[operator]
        if text.startswith(lead):
            return flag + text[len(exc.setting) :]  # type: ignore[arg-type]
    return text if text.startswith(flag) else f"{flag}: {text}"


def _flag_value(match: re.Match[str]) -> str:
    flag, value = FLAGS[match.group(1)], match.group(2)
    return flag if value == "True" else f"{flag} {value}"
