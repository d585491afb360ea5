"""Options for one judgment, validated into a `CiteOptions` before any request is sent."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from harness.errors import UsageError


class CiteOptionsError(UsageError):
    """An option `judge` cannot run with; raised before any request."""

    code = "cite_options"


def _count(name: str, value: object) -> int:
    # bool is an int in Python, but `concurrency=True` is a mistake, not a 1.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise CiteOptionsError(
            f"{name} must be an integer of at least 1, got {value!r}", option=name
        )
    return value


def _probability(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise CiteOptionsError(f"{name} must be a number from 0 to 1, got {value!r}", option=name)
    return float(value)


@dataclass(frozen=True)
class CiteOptions:
    """Validated options.

    - concurrency: requests in flight at once within a round.
    - window: most passages in one round-1 request.
    - threshold: a detect scoring above it is a match.
    - low, high: the review band; a confirm or check at or below `low` counts against,
      at or above `high` for, anything between is for review; `low` < `high`.

    Round 2 is one request per finding, always: no option merges findings or splits one.
    """

    concurrency: int = 4
    window: int = 10
    threshold: float = 0.5
    low: float = 0.3
    high: float = 0.7

    def __post_init__(self) -> None:
        _count("concurrency", self.concurrency)
        _count("window", self.window)
        for name in ("threshold", "low", "high"):
            object.__setattr__(self, name, _probability(name, getattr(self, name)))
        if self.low >= self.high:
            # With low == high a score equal to both would count against for a confirm and
            # for a check (the two read the band with opposite precedence): refuse it.
            raise CiteOptionsError(
                f"low ({self.low}) must be below high ({self.high}): the review band "
                "needs a width (e.g. low=0.3, high=0.7)",
                option="low",
            )


_NAMES = frozenset(f.name for f in fields(CiteOptions))


def as_options(options: CiteOptions | Mapping[str, Any] | None) -> CiteOptions:
    """Validate `options` (a `CiteOptions`, a mapping of its fields, or None for defaults)."""
    if options is None:
        return CiteOptions()
    if isinstance(options, CiteOptions):
        return options
    if not isinstance(options, Mapping):
        raise CiteOptionsError(f"options must be a mapping, got {type(options).__name__}")
    unknown = sorted(str(k) for k in options if k not in _NAMES)
    if unknown:
        raise CiteOptionsError(
            f"unknown option(s): {', '.join(unknown)}; known: {', '.join(sorted(_NAMES))}",
            option=unknown[0],
        )
    return CiteOptions(**options)
