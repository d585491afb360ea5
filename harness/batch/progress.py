"""Progress of a batch as data: one `Tracker` of counts, and its `Figures` snapshots.

The tracker is fed by every session's progress events (harness.events) from any thread.
Sessions never started (a limit, Ctrl-C) are counted apart, not as done. It draws
nothing: `judge batch`'s live line and its plain lines are harness.cli.batch_progress's,
which make the session names safe to print.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.events import Event

if TYPE_CHECKING:
    from harness.batch.result import SessionResult


@dataclass(frozen=True)
class Figures:
    """What the progress line tells (a `Tracker` snapshot)."""

    done: int  # sessions ended (judged, up to date, failed), not those never started
    total: int
    skipped: int = 0
    failed: int = 0
    not_started: int = 0
    in_flight: int = 0
    requests: int = 0  # paid
    replayed: int = 0  # answered from --replay-dir's recordings, not sent
    tokens: int = 0
    elapsed: float = 0.0
    eta: float | None = None
    doing: tuple[
        str, ...
    ] = ()  # "name: what" of sessions in flight, names as they are (made safe where drawn)


class Tracker:
    """Counts for the display; every method is safe to call from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started_at = time.monotonic()
        self.total = 0
        self.done = 0
        self.skipped = 0
        self.failed = 0
        self.not_started = 0  # sessions never started (a limit, or Ctrl-C): not done
        self.requests = 0
        self.tokens = 0
        self.replayed_requests = 0  # answered from --replay-dir's recordings: not paid
        self.replayed_tokens = 0
        self.in_flight: dict[str, str] = {}  # session -> what it is doing
        self.listeners: list[Any] = []  # called with no argument after each change
        self.messages: list[str] = []  # one-off messages, each shown once
        self.on_begin: list[Any] = []  # called once, when the batch begins (a display's start)
        self.begun = False

    def begin(self, total: int) -> None:
        """The batch passed its usage checks and begins with `total` sessions."""
        with self._lock:
            self.total = total
            self.started_at = time.monotonic()
            self.begun = True
        for start in self.on_begin:
            start()
        self._changed()

    def started(self, session: str) -> None:
        with self._lock:
            self.in_flight[session] = "starting"
        self._changed()

    def paid(self, tokens: int) -> None:
        """One request the batch paid for (`Budget.add`): a session's progress events
        are not counted, since a turn taken up from a killed run's saved conversation
        or an audit answer from its batches was not sent again."""
        with self._lock:
            self.requests += 1
            self.tokens += tokens
        self._changed()

    def replayed(self, tokens: int) -> None:
        """One request answered from a recording (`--replay-dir`): nothing was sent, so it
        is counted apart from the requests paid."""
        with self._lock:
            self.replayed_requests += 1
            self.replayed_tokens += tokens
        self._changed()

    def event(self, session: str, event: Event) -> None:
        kind = event.get("event")
        with self._lock:
            if kind == "turn":
                self.in_flight[session] = f"turn {event.get('turn')}"
            elif kind == "audit-claim":
                self.in_flight[session] = f"audit {event.get('done')}/{event.get('total')}"
            elif kind == "phase":
                self.in_flight[session] = str(event.get("phase"))
        self._changed()

    def finished(self, session: str, result: SessionResult) -> None:
        with self._lock:
            self.in_flight.pop(session, None)
            if result.outcome == "not-started":  # the bar shows what was really done
                self.not_started += 1
            else:
                self.done += 1
                self.skipped += int(result.skipped)
                self.failed += int(not result.ok)
        self._changed()

    def say(self, text: str) -> None:
        """A one-off message for the displays (e.g. a Message Batch submitted)."""
        with self._lock:
            self.messages.append(text)
        self._changed()

    def take_messages(self) -> list[str]:
        with self._lock:
            taken, self.messages = self.messages, []
        return taken

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    # -- figures -----------------------------------------------------------------------

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def eta(self) -> float | None:
        """Seconds left at the pace so far (None until a session has been judged, and once
        sessions were left unstarted: nothing more will be done)."""
        with self._lock:
            done, total, never = self.done, self.total, self.not_started
        if done == 0 or never:
            return None
        if done >= total:
            return 0.0
        return self.elapsed() / done * (total - done)

    def figures(self, *, doing: int = 0) -> Figures:
        """A snapshot for the displays; `doing`: how many sessions in flight to name."""
        eta = self.eta()
        with self._lock:
            names = tuple(f"{name}: {what}" for name, what in list(self.in_flight.items())[:doing])
            return Figures(
                done=self.done,
                total=self.total,
                skipped=self.skipped,
                failed=self.failed,
                not_started=self.not_started,
                in_flight=len(self.in_flight),
                requests=self.requests,
                replayed=self.replayed_requests,
                tokens=self.tokens + self.replayed_tokens,
                elapsed=self.elapsed(),
                eta=eta,
                doing=names,
            )


__all__ = ["Figures", "Tracker"]
