"""Progress of a batch: one `Tracker` of counts, and two ways to show it on stderr.

The tracker is fed by every session's progress events (harness.events) from any thread.
`LiveDisplay` (a terminal) draws a `rich` progress bar with sessions done/total, in
flight, requests, tokens, elapsed time and ETA, redrawn a few times a second; `PlainDisplay`
(a pipe or a file) writes the same figures as one plain line every `interval` seconds,
and once at the end. Names are never printed raw (harness.batch.safe).
"""

from __future__ import annotations

import threading
import time
from typing import IO, TYPE_CHECKING, Any

from harness.batch.safe import safe
from harness.events import Event

if TYPE_CHECKING:
    from harness.batch.core import SessionResult


class Tracker:
    """Counts for the display; every method is safe to call from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started_at = time.monotonic()
        self.total = 0
        self.done = 0
        self.skipped = 0
        self.failed = 0
        self.requests = 0
        self.tokens = 0
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
        """Seconds left at the pace so far (None until a session has been judged)."""
        with self._lock:
            done, total = self.done, self.total
        if done == 0 or done >= total:
            return None if done == 0 else 0.0
        return self.elapsed() / done * (total - done)

    def line(self) -> str:
        with self._lock:
            done, total, flight = self.done, self.total, len(self.in_flight)
            requests, tokens, skipped, failed = (
                self.requests,
                self.tokens,
                self.skipped,
                self.failed,
            )
        eta = self.eta()
        return (
            f"judge batch: {done}/{total} sessions done ({skipped} up to date or skipped, "
            f"{failed} failed), {flight} in flight, {requests:,} requests, {tokens:,} tokens, "
            f"{_clock(self.elapsed())} elapsed, ETA {_clock(eta) if eta is not None else '?'}"
        )


def _clock(seconds: float) -> str:  # 1:05, or 1:02:03 past the hour
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class PlainDisplay:
    """One line every `interval` seconds on a stream that is not a terminal, and at the end."""

    def __init__(self, tracker: Tracker, stream: IO[str], interval: float = 10.0) -> None:
        self._tracker, self._stream, self._interval = tracker, stream, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="judge-progress", daemon=True)
        tracker.listeners.append(self._messages)

    def _messages(self) -> None:
        for text in self._tracker.take_messages():
            self._write(safe(text))

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr never stops the batch

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            self._write(self._tracker.line())

    def start(self) -> PlainDisplay:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._write(self._tracker.line())


class LiveDisplay:
    """A `rich` progress bar on a terminal: done/total, in flight, requests, tokens, times."""

    def __init__(self, tracker: Tracker, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._tracker = tracker
        self._progress = Progress(
            TextColumn("judge batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
        )
        self._task = self._progress.add_task("sessions", total=None, stats="")
        tracker.listeners.append(self._update)

    def _update(self) -> None:
        t = self._tracker
        for text in t.take_messages():
            self._progress.console.print(safe(text), markup=False, highlight=False)
        doing = ", ".join(f"{safe(name)}: {what}" for name, what in list(t.in_flight.items())[:3])
        stats = f"{len(t.in_flight)} in flight, {t.requests:,} requests, {t.tokens:,} tokens" + (
            f" [{doing}]" if doing else ""
        )
        self._progress.update(self._task, total=t.total, completed=t.done, stats=stats)

    def start(self) -> LiveDisplay:
        self._update()
        self._progress.start()
        return self

    def stop(self) -> None:
        self._update()
        self._progress.stop()
        if self._update in self._tracker.listeners:
            self._tracker.listeners.remove(self._update)


__all__ = ["LiveDisplay", "PlainDisplay", "Tracker"]
