"""Progress lines on stderr for `judge run` and `judge cite` (quiet with `-q`).

Fed by the run's progress events (harness.events): one line per agent turn, and the
audit's progress as claims judged out of those asked, at most one line every
`interval` seconds (and always the last). `judge batch` draws the same events as its
own display (harness.cli.batch_progress).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO

from harness.events import Event
from harness.text.terminal import one_line


class ProgressLines:
    """A `harness.events.OnEvent` that writes one plain line per event worth telling."""

    def __init__(self, stream: IO[str] | None = None, interval: float = 1.0) -> None:
        self._stream = stream
        self._interval = interval
        self._lock = threading.Lock()
        self._last_audit = float("-inf")
        self._started = time.monotonic()

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr never stops a run

    def __call__(self, event: Event) -> None:
        kind = event.get("event")
        elapsed = time.monotonic() - self._started
        if kind == "turn":
            tools = [one_line(t) for t in event.get("tools") or []]  # the model names them
            doing = f" ({', '.join(tools)})" if tools else ""
            self._write(
                f"judge: turn {event.get('turn')}: {one_line(event.get('stop'))}{doing}; "
                f"{event.get('tokens', 0):,} tokens, {event.get('totalTokens', 0):,} so far "
                f"[{elapsed:.1f} s]"
            )
        elif kind == "audit-start":
            self._write(
                f"judge: citation audit: {event.get('claims')} claims to judge in "
                f"{event.get('judgments', event.get('claims'))} judgments"
            )
        elif kind == "audit-claim":
            done, total = event.get("done", 0), event.get("total", 0)
            with self._lock:
                now = time.monotonic()
                if done != total and now - self._last_audit < self._interval:
                    return
                self._last_audit = now
            self._write(f"judge: citation audit: {done}/{total} judgments done [{elapsed:.1f} s]")
        elif kind == "phase":
            what = "the judge" if event.get("phase") == "judge" else "the citation audit"
            self._write(f"judge: {what} starts [{elapsed:.1f} s]")


__all__ = ["ProgressLines"]
