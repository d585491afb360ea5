"""What a caller steers a run by: typed hooks (the progress events are for display only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.events import Halt


def _nothing(*_: object) -> None:
    return None


def _not_halted() -> Halt | None:
    return None


@dataclass(frozen=True, slots=True)
class RunHooks:
    """Told as the run passes its milestones (`judge batch` is the caller that listens).

    `on_prepared()`: the run's preparation is over, its audit or its judge begins (said at
    each; a second call means nothing new). `on_inputs(digest)`: the run's up-to-date
    inputs digest as its judge begins (harness.run.uptodate; "" when the digest could not
    cover everything). `halted()`: asked as run.json is made, why the caller's `stop` ended
    the run short (its interrupt or a limit), or None: recorded as `outcome.halted`, so
    that the merge can say it without reading the note's words."""

    on_prepared: Callable[[], None] = _nothing
    on_inputs: Callable[[str], None] = _nothing
    halted: Callable[[], Halt | None] = _not_halted


__all__ = ["RunHooks"]
