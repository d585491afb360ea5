"""One time budget: a `Deadline` on the monotonic clock, its scope per thread, `OutOfTime`.

A run's time is one `Deadline` (`at`, monotonic seconds; None: never) with a `what` that
names it in a note ("the run's time", "the audit's share of the run's time"). The same type
bounds the reading of a session's files (harness.fs), a model request and its retries
(harness.model.client), the agent loop and the audit's pure-Python loops.

`scope(deadline)` makes a deadline the current one of this thread (a contextvar: one SDK
client serves many runs at once, each on threads of its own); nested, the earlier wins.
`current()` is what is in force. A loop that must stop in time reads the clock every
`STRIDE` steps (`ticks`) and raises `OutOfTime` once the deadline has passed: what it was
making is dropped whole, and its caller says what was not done.

The loops read the clock through `_now` (`ticks`, `overdue`), so a test may drive theirs
alone; a deadline's own `expired` and `left()` read the monotonic clock. Stdlib only, below
every package but `errors` (whose `OutOfTime` is the one raised here).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from harness.errors import OutOfTime

__all__ = [
    "AUDIT_SHARE",
    "NEVER",
    "RUN_TIME",
    "STRIDE",
    "Deadline",
    "OutOfTime",
    "current",
    "overdue",
    "scope",
    "ticks",
]

RUN_TIME = "the run's time"
AUDIT_SHARE = "the audit's share of the run's time"

# Steps between two readings of the clock: a step is a regex match, a paragraph, a
# passage or a query (microseconds to a few milliseconds), a reading ~50 ns.
STRIDE = 256

_now = time.monotonic

T = TypeVar("T")


class Deadline:
    """A point on the monotonic clock and what it is, in words; ``Deadline()`` never expires.

    `at` may be set once a clock starts later than the deadline is made (a client bounds
    its replies when a run's judge phase begins)."""

    __slots__ = ("at", "what")

    def __init__(self, at: float | None = None, what: str = RUN_TIME) -> None:
        self.at = at
        self.what = what

    @classmethod
    def after(cls, seconds: float | None, what: str = RUN_TIME) -> Deadline:
        """`seconds` from now (None: never)."""
        return cls(None if seconds is None else time.monotonic() + seconds, what)

    @property
    def expired(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def left(self) -> float | None:
        """Seconds left (never negative), or None: no bound."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def sooner(self, other: Deadline) -> Deadline:
        """The one of the two that comes first (a deadline without `at` never comes)."""
        if other.at is None or (self.at is not None and self.at <= other.at):
            return self
        return other

    def __repr__(self) -> str:
        return f"Deadline(at={self.at!r}, what={self.what!r})"


NEVER = Deadline()

_CURRENT: ContextVar[Deadline] = ContextVar("harness_clock_deadline", default=NEVER)


@contextmanager
def scope(deadline: Deadline) -> Iterator[Deadline]:
    """Make `deadline` this thread's current one while inside, unless the one in force
    comes sooner (nested, the earlier wins). Yields the deadline in force."""
    current = _CURRENT.get()
    sooner = current.sooner(deadline)
    if sooner is current:
        yield current
        return
    token = _CURRENT.set(sooner)
    try:
        yield sooner
    finally:
        _CURRENT.reset(token)


def current() -> Deadline:
    """This thread's deadline in force (`NEVER` outside every scope)."""
    return _CURRENT.get()


def overdue(deadline: Deadline | None) -> bool:
    """Whether `deadline` (None: none) has passed, by the loops' clock (`_now`)."""
    return deadline is not None and deadline.at is not None and _now() >= deadline.at


def ticks(items: Iterable[T], deadline: Deadline | None, stride: int = STRIDE) -> Iterator[T]:
    """`items`, the clock read before the first and then every `stride` of them; raises
    `OutOfTime` once `deadline` has passed. Without a deadline, `items` as they are."""
    if deadline is None or deadline.at is None:
        return iter(items)
    return _ticking(iter(items), deadline, stride)


def _ticking(items: Iterator[T], deadline: Deadline, stride: int) -> Iterator[T]:
    # Taken `stride` at a time (in C), so the loop's own cost per item stays a resume.
    at = deadline.at
    assert at is not None
    while True:
        if _now() >= at:
            raise OutOfTime(f"{deadline.what} ran out")
        chunk = list(itertools.islice(items, stride))
        if not chunk:
            return
        yield from chunk
