"""How many generated inputs each property or fuzz test tried, reported after the run."""

from __future__ import annotations

from collections import Counter

TRIED: Counter[str] = Counter()


def count(name: str, n: int = 1) -> None:
    TRIED[name] += n
