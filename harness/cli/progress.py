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

    def __init__(
        self, stream: IO[str] | None = None, interval: float = 1.0, request: str | None = None
    ) -> None:
        """`request`: what bounds each model request, e.g. "at most 120 s (--timeout)", said
        when the audit and the judge start waiting for the API."""
        self._stream = stream
        self._request = request
        self._interval = interval
        self._lock = threading.Lock()
        self._last_audit = float("-inf")
        self._answered = 0  # audit requests answered, and failed (with the last reason)
        self._failed = 0
        self._why = ""
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
                + self._waiting(event.get("seconds"), "the audit", "its share of --max-seconds")
            )
        elif kind == "audit-request":
            with self._lock:
                self._answered += 1
        elif kind == "audit-failed":
            with self._lock:
                self._failed += 1
                self._why = one_line(event.get("why")) or "the request failed"
        elif kind == "audit-claim":
            done, total = event.get("done", 0), event.get("total", 0)
            with self._lock:
                now = time.monotonic()
                if done != total and now - self._last_audit < self._interval:
                    return
                self._last_audit = now
                answered, failed, why = self._answered, self._failed, self._why
            said = _claims_line(done, total, answered, failed, why)
            self._write(f"judge: citation audit: {said} [{elapsed:.1f} s]")
        elif kind == "phase":
            judge = event.get("phase") == "judge"
            what = "the judge" if judge else "the citation audit"
            waiting = (
                self._waiting(event.get("seconds"), "the judge", "the rest of --max-seconds")
                if judge
                else ""
            )
            self._write(f"judge: {what} starts [{elapsed:.1f} s]{waiting}")

    def _waiting(self, seconds: object, who: str, option: str) -> str:
        """`; waiting for the API: each request at most …, <who> at most N s (<option>)`:
        what bounds the wait for replies that may be long in coming (a silent API)."""
        bounds = [f"each request {self._request}"] if self._request else []
        if isinstance(seconds, int | float) and seconds >= 0:
            bounds.append(f"{who} at most {seconds:,.1f} s ({option})")
        return f"; waiting for the API: {', '.join(bounds)}" if bounds else ""


def _claims_line(done: int, total: int, answered: int, failed: int, why: str) -> str:
    """`k/n judgments done`, unless requests failed: then that they did and why, so that
    an audit whose every request was refused never reads as one that judged."""
    if not failed:
        return f"{done}/{total} judgments done"
    if not answered:
        return f"{done}/{total} judgments ended, no request answered: {why}"
    return f"{done}/{total} judgments done, {failed:,} request(s) failed: {why}"


__all__ = ["ProgressLines"]
