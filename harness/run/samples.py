"""`judge run --samples K`: which of K independent judgments becomes judge.json (pure).

The rule, stated once: per dimension the samples' median is taken (of the numeric scores,
when at least half the samples give one; else "Unknown"); each sample's distance is the sum
over the dimensions of |score - median| (a number against "Unknown" counts 5, "Unknown"
against "Unknown" 0); the nearest sample is judge.json, the earliest among equals.
Current models accept no temperature: the samples differ by the model's own variation.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from harness.contract.rubric import DIMENSIONS, UNKNOWN

RULE = (
    "the sample nearest the per-dimension median of the samples (sum of |score - median|; "
    "a number against Unknown counts 5); the earliest among equals"
)

Score = int | str


def medians(samples: Sequence[Mapping[str, Score]]) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for d in DIMENSIONS:
        numbers = [v for s in samples if isinstance(v := s.get(d), int)]
        out[d] = (
            statistics.median(numbers) if numbers and 2 * len(numbers) >= len(samples) else UNKNOWN
        )
    return out


def distance(sample: Mapping[str, Score], centre: Mapping[str, float | str]) -> float:
    total = 0.0
    for d in DIMENSIONS:
        a, b = sample.get(d, UNKNOWN), centre[d]
        if isinstance(a, int) and isinstance(b, int | float):
            total += abs(a - b)
        elif isinstance(a, int) or isinstance(b, int | float):
            total += 5
    return total


def choose(samples: Sequence[Mapping[str, Score]]) -> int:
    """The index (0-based) of the sample that becomes judge.json."""
    if not samples:
        raise ValueError("no sample to choose from")
    centre = medians(samples)
    return min(range(len(samples)), key=lambda i: (distance(samples[i], centre), i))


__all__ = ["RULE", "choose", "distance", "medians"]
