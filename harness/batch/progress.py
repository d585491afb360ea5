"""Progress of a batch: one `Tracker` of counts, and two ways to show it on stderr.

The tracker is fed by every session's progress events (harness.events) from any thread.
`LiveDisplay` (a terminal) draws a `rich` live line with a bar, sessions done/total, in
flight, requests paid and replayed, tokens, elapsed time and ETA, redrawn a few times a
second and fitted to the terminal's width; `PlainDisplay` (a pipe or a file) writes the
same figures as one plain line every `interval` seconds, and once at the end (whole, or
fitted to `COLUMNS` when it is set). Sessions never started (a limit, Ctrl-C) are counted
apart, not as done. Names are never printed raw (harness.text.terminal).
"""

from __future__ import annotations

import threading
import time
from typing import IO, TYPE_CHECKING, Any

from harness.batch.widths import Figures, env_columns, progress_line
from harness.events import Event
from harness.text.terminal import one_line

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
            names = tuple(
                f"{one_line(name)}: {what}" for name, what in list(self.in_flight.items())[:doing]
            )
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

    def line(self, width: int | None = None) -> str:
        """The plain progress line, fitted to `width` cells (None: whole)."""
        return progress_line(self.figures(), width).plain


class PlainDisplay:
    """One line every `interval` seconds on a stream that is not a terminal, and at the end."""

    def __init__(self, tracker: Tracker, stream: IO[str], interval: float = 10.0) -> None:
        self._tracker, self._stream, self._interval = tracker, stream, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="judge-progress", daemon=True)
        tracker.listeners.append(self._messages)

    def _messages(self) -> None:
        for text in self._tracker.take_messages():
            self._write(one_line(text))

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr never stops the batch

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            self._write(self._tracker.line(env_columns()))

    def start(self) -> PlainDisplay:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._write(self._tracker.line(env_columns()))


class LiveDisplay:
    """A live line on a terminal: a bar, done/total, in flight, requests, tokens, times,
    fitted to the terminal's width as it is now (harness.batch.widths)."""

    def __init__(self, tracker: Tracker, console: Any) -> None:
        from rich.live import Live

        self._tracker = tracker
        self._console = console
        self._live = Live(
            get_renderable=self._render,
            console=console,
            refresh_per_second=4,
            transient=False,
        )
        tracker.listeners.append(self._update)

    def _render(self) -> Any:
        from rich.text import Text

        f = self._tracker.figures(doing=3)
        # Two cells spare: a terminal echoes Ctrl-C as `^C` after the line, which would
        # otherwise wrap it and leave a stale copy above the last one drawn.
        line = progress_line(f, max(1, self._console.width - 2), bar=True)
        text = Text(no_wrap=True, overflow="crop")
        for name, part in line.parts:
            if name != "bar":
                text.append(part)
                continue
            lead = part[: len(part) - line.bar]
            full = round(line.bar * f.done / f.total) if f.total else 0
            finished = f.total > 0 and f.done >= f.total
            text.append(lead)
            text.append("━" * full, style="bar.finished" if finished else "bar.complete")
            text.append("━" * (line.bar - full), style="bar.back")
        return text

    def _update(self) -> None:
        for text in self._tracker.take_messages():
            self._console.print(one_line(text), markup=False, highlight=False)
        # The line itself is redrawn by the live display's own refresh, 4 times a second.

    def start(self) -> LiveDisplay:
        self._live.start()
        return self

    def stop(self) -> None:
        self._update()
        self._live.stop()
        if self._update in self._tracker.listeners:
            self._tracker.listeners.remove(self._update)


__all__ = ["LiveDisplay", "PlainDisplay", "Tracker"]
