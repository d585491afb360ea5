"""The audit's deadline inside its pure-Python loops: ranking passages, reading number forms.

Both can take seconds on one hostile input (a 4,000-word claim against 8 MiB of tiny
paragraphs, thousands of claims citing one source, the number forms of an 8 MiB text),
longer than the time a run has left. A loop reads the clock every `STRIDE` steps (`ticks`)
and, past the deadline (monotonic seconds, as the audit's other deadlines are: the
`Checker`'s, the `Guard`'s, harness.model.deadline), raises `OutOfTime`: what the loop was
making is dropped whole, never used half made, and its caller says what was not done.

Stdlib only. `_now` is the one clock read here (a test may drive it).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["STRIDE", "OutOfTime", "expired", "ticks"]

# Steps between two readings of the clock: a step is a regex match, a paragraph, a
# passage or a query (microseconds to a few milliseconds), a reading ~50 ns.
STRIDE = 256

_now = time.monotonic

T = TypeVar("T")


class OutOfTime(Exception):
    """The deadline passed inside a loop; the caller says what was left undone."""


def expired(deadline: float | None) -> bool:
    """Whether `deadline` (monotonic seconds; None: none) has passed."""
    return deadline is not None and _now() >= deadline


def ticks(items: Iterable[T], deadline: float | None, stride: int = STRIDE) -> Iterator[T]:
    """`items`, the clock read before the first and then every `stride` of them; raises
    `OutOfTime` once `deadline` has passed. Without a deadline, `items` as they are."""
    if deadline is None:
        return iter(items)
    return _ticking(iter(items), deadline, stride)


def _ticking(items: Iterator[T], deadline: float, stride: int) -> Iterator[T]:
    # Taken `stride` at a time (in C), so the loop's own cost per item stays a resume.
    while True:
        if _now() >= deadline:
            raise OutOfTime
        chunk = list(itertools.islice(items, stride))
        if not chunk:
            return
        yield from chunk
