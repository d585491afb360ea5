"""Token usage: the one type (`Usage`), and the counts of a reply checked into it.

`Usage` is what a reply cost, channel by channel, in the API's own names: the agent loop
sums it per turn, the citation audit per request, citations.json and run.json record it
(run.json adds the sum, `harness.artifacts.record.TokenTotals`).

A reply's usage is data from outside (`checked_usage`):
A count that is negative, not an integer (a float, a string, a bool) or past
`config.MAX_USAGE_TOKENS` is clamped into range, and each correction is described so the
run can say it. Never raises: a hostile count must not end a run.
"""

from __future__ import annotations

from typing import Any

from pydantic import NonNegativeInt

from harness import config
from harness.strict import Frozen

__all__ = ["USAGE_FIELDS", "Usage", "checked_usage"]

USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


# No docstring: pydantic would publish it as the schema's description (citations.json).
class Usage(Frozen):
    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_creation_input_tokens: NonNegativeInt = 0
    cache_read_input_tokens: NonNegativeInt = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    @property
    def budgeted(self) -> int:
        """What a run's token budget counts: every token but cache reads, which
        re-read the same prefix each turn at a tenth of the price."""
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens


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
