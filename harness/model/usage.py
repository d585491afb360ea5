"""Token usage from a reply, checked: it is data from outside.

A count that is negative, not an integer (a float, a string, a bool) or past
`config.MAX_USAGE_TOKENS` is clamped into range, and each correction is described so the
run can say it. Never raises: a hostile count must not end a run.
"""

from __future__ import annotations

from typing import Any

from harness import config

__all__ = ["USAGE_FIELDS", "checked_usage"]

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def checked_usage(usage: Any) -> tuple[dict[str, int], list[str]]:
    """The four counts of `usage` (an SDK Usage, a dict or None), each an int in
    [0, MAX_USAGE_TOKENS]; and what was corrected, in words."""
    counts: dict[str, int] = {}
    problems: list[str] = []
    for name in USAGE_FIELDS:
        raw = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        value, problem = _count(raw)
        counts[name] = value
        if problem:
            problems.append(f"usage {name} {problem}")
    return counts, problems


def _count(raw: Any) -> tuple[int, str]:
    top = config.MAX_USAGE_TOKENS
    if raw is None:
        return 0, ""
    if isinstance(raw, bool) or not isinstance(raw, int):
        return 0, f"was {_shown(raw)}, not a whole number: counted as 0"
    if raw < 0:
        return 0, f"was {_shown(raw)}, below 0: counted as 0"
    if raw > top:
        return top, f"was {_shown(raw)}, above {top:,}: counted as {top:,}"
    return raw, ""


def _shown(raw: Any) -> str:
    if isinstance(raw, int) and raw.bit_length() > 128:
        return f"an integer of {raw.bit_length():,} bits"  # repr() refuses very long ones
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."
