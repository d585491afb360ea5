"""Who may prepare now: a batch's sessions begin their preparation a few at a time.

A session's preparation (loading and hashing the session, the up-to-date check, reading
what a previous run left) is Python under the one GIL. With hundreds of sessions in
flight they all begin at once: each then gets a sliver of the interpreter, every one of
them reaches its first model request late, and the replies of the sessions already
waiting queue behind them. In traces of 512 sessions in flight against the API's real
latency (bench/bench_batch.py --lognormal), the gap between a session's first audit
reply and its next request averaged 0.89 s without a gate, 0.05-0.07 s with four
preparing at once (docs/batch.md, "Sessions prepare a few at a time").

`Admission` lets at most `width` sessions prepare at once, first come first served. A
session leaves it when its preparation ends (its first phase begins) or the session
ends. One that has prepared for `patience` seconds stops counting against the width: it
is waiting on its disk (a shared filesystem), not on the interpreter, and the sessions
behind it are not held up by that wait.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

PREPARING = 4  # sessions preparing at once (the batch's default --sessions)
PATIENCE = 0.25  # seconds of preparation after which a session stops counting


class Admission:
    """At most `width` sessions preparing at once, in the order they asked (see module)."""

    def __init__(
        self,
        width: int = PREPARING,
        patience: float = PATIENCE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if width < 1:
            raise ValueError("an admission lets at least one session in")
        self.width, self.patience, self._clock = width, patience, clock
        self._lock = threading.Lock()
        self._held: dict[int, float] = {}  # ticket -> when it was let in
        self._waiting: deque[tuple[int, threading.Event]] = deque()
        self._next = 0
        self.most = 0  # the most sessions counting against the width at once (read by the tests)

    def _counting(self, now: float) -> list[float]:
        """When each session still counting against the width was let in."""
        return [since for since in self._held.values() if now - since < self.patience]

    def _wake_first(self) -> None:
        if self._waiting:
            self._waiting[0][1].set()

    def enter(self) -> int:
        """Wait for this session's turn to prepare; its ticket, for `leave`."""
        with self._lock:
            ticket, self._next = self._next, self._next + 1
            event = threading.Event()
            self._waiting.append((ticket, event))
            self._wake_first()
        while True:
            with self._lock:
                timeout: float | None = None
                if self._waiting[0][0] == ticket:  # first in line: it checks for itself
                    now = self._clock()
                    counting = self._counting(now)
                    if len(counting) < self.width:
                        self._waiting.popleft()
                        self._held[ticket] = now
                        self.most = max(self.most, len(counting) + 1)
                        self._wake_first()  # the next in line now checks for itself
                        return ticket
                    # Until the longest-preparing session stops counting (or one leaves).
                    timeout = max(0.0, self.patience - (now - min(counting)))
                event.clear()  # set again by a leave, or by the one ahead being let in
            event.wait(timeout)

    def leave(self, ticket: int) -> None:
        """This session's preparation is over (or the session ended); idempotent."""
        with self._lock:
            if self._held.pop(ticket, None) is not None:
                self._wake_first()


class Pass:
    """One session's place in an `Admission`: `enter()` waits for it; `leave()` (at its
    first phase, and again when it ends) gives it up once."""

    def __init__(self, admission: Admission | None) -> None:
        self._admission = admission
        self._ticket: int | None = None

    def enter(self) -> None:
        if self._admission is not None and self._ticket is None:
            self._ticket = self._admission.enter()

    def leave(self) -> None:
        if self._admission is not None and self._ticket is not None:
            ticket, self._ticket = self._ticket, None
            self._admission.leave(ticket)


__all__ = ["PATIENCE", "PREPARING", "Admission", "Pass"]
