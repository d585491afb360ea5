"""The time a model request may still take: its run's (or phase's) deadline, per thread.

A run sets the deadline of the phase it is in (`until`): the audit its share, the judge
the rest. Every request sent from that thread (the SDK client's retries, each attempt's
timeouts, the reading of a reply's body: harness.model.client) is bounded by it. A
contextvar, because one SDK client serves many runs at once (a batch shares one), each on
threads of its own; a worker thread answering for one session sets it around the call.

Stdlib only: imported by the run and the audit without loading the SDK.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["at", "left", "until", "what"]

_AT: ContextVar[float | None] = ContextVar("harness_model_deadline", default=None)


@contextmanager
def until(deadline: float | None, what: str = "the run's time") -> Iterator[None]:
    """Bound every request of this thread by `deadline` (monotonic) while inside; nested,
    the earlier deadline wins. `what` names it in a note ("the audit's share")."""
    if deadline is None:
        yield
        return
    current = _AT.get()
    if current is not None and current <= deadline:
        yield
        return
    token = _AT.set(deadline)
    name = _WHAT.set(what)
    try:
        yield
    finally:
        _WHAT.reset(name)
        _AT.reset(token)


_WHAT: ContextVar[str] = ContextVar("harness_model_deadline_what", default="the run's time")


def at() -> float | None:
    """This thread's deadline (monotonic), or None: no bound."""
    return _AT.get()


def left() -> float | None:
    """Seconds left before this thread's deadline (never negative), or None: no bound."""
    deadline = _AT.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def what() -> str:
    """What the current deadline is, in words ("the run's time", "the audit's share")."""
    return _WHAT.get()
