"""Left only for harness.run.pipeline until it is dissolved: the run's time is
`harness.clock` (`Deadline`, `scope`, `current`). Nothing else imports this module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from harness import clock

__all__ = ["at", "until", "what"]


@contextmanager
def until(deadline: float | None, what: str = clock.RUN_TIME) -> Iterator[None]:
    with clock.scope(clock.Deadline(deadline, what)):
        yield


def at() -> float | None:
    return clock.current().at


def what() -> str:
    return clock.current().what
