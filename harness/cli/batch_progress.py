"""`judge batch`'s progress on stderr, drawn from the library's `Tracker` (harness.batch.progress).

`LiveDisplay` (a terminal) draws a `rich` live line with a bar, sessions done/total, in
flight, requests paid and replayed, tokens, elapsed time and ETA, redrawn a few times a
second and fitted to the terminal's width; `PlainDisplay` (a pipe or a file) writes the
same figures as one plain line every `interval` seconds, and once at the end (whole, or
fitted to `COLUMNS` when it is set). Names are never printed raw (harness.cli.safe).
"""

from __future__ import annotations

import threading
from typing import IO, Any

from harness.batch.progress import Tracker
from harness.cli.batch_widths import env_columns, progress_line
from harness.text.terminal import one_line


def plain_line(tracker: Tracker, width: int | None = None) -> str:
    """The plain progress line, fitted to `width` cells (None: whole)."""
    return progress_line(tracker.figures(), width).plain


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
            self._write(plain_line(self._tracker, env_columns()))

    def start(self) -> PlainDisplay:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._write(plain_line(self._tracker, env_columns()))


class LiveDisplay:
    """A live line on a terminal: a bar, done/total, in flight, requests, tokens, times,
    fitted to the terminal's width as it is now (harness.cli.batch_widths)."""

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


__all__ = ["LiveDisplay", "PlainDisplay", "plain_line"]
