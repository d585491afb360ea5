"""One rate-limit pacer for every request of a process's shared client (`judge batch`).

What runs out first at scale is the API's rate limit. Without a pacer each of 32 sessions
meets a 429 on its own, each retries after its own back-off, and the others keep sending
into the limit. With one, every request of the client waits while the limit is closed:

- a **429** (or a 529 overloaded) with `retry-after` / `retry-after-ms` closes it for that
  long, for every session;
- any response whose `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-
  remaining` is 0 closes it until that limit's `…-reset` (an RFC 3339 time, read against
  the response's own `date` header when it has one, so a skewed local clock does not
  matter).

The hook is two httpx event hooks (`hooks()`: before each request is sent, after each
response's headers), installed by `harness.model.client.build_client` when its settings
carry a pacer; the SDK's own retries are left as they are. A single closure is capped at
`MAX_PAUSE` seconds (a reset a year away, or a hostile header, never holds a run longer),
and a wait ends early when `stop()` gives a reason (the batch's time limit or an
interrupt) or when the waiting request's own deadline passes (its session's time).
`stats()` says how long the limit was closed, how many requests were held and their waits
in total, for the batch's summary.
"""

from __future__ import annotations

import email.utils
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from harness import clock

MAX_PAUSE = 60.0  # seconds one signal may close the limit for
_LIMITS = ("requests", "tokens", "input-tokens", "output-tokens")
_CLOSING = (429, 529)


@dataclass(frozen=True, slots=True)
class PaceStats:
    pauses: int  # signals that closed (or kept closed) the limit
    closed_seconds: float  # wall time the limit was closed (overlaps counted once)
    held: int  # requests that waited
    held_seconds: float  # their waits, summed

    def as_dict(self) -> dict[str, Any]:
        return {
            "pauses": self.pauses,
            "closedSeconds": round(self.closed_seconds, 3),
            "heldRequests": self.held,
            "heldSeconds": round(self.held_seconds, 3),
        }


def _seconds(text: str | None) -> float | None:
    """A non-negative finite number of seconds, or None."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _when(text: str | None) -> datetime | None:
    """An RFC 3339 time (`2026-12-01T21:00:05Z`), or an HTTP date; None if neither."""
    if not text:
        return None
    text = text.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def pause_for(status: int, headers: Any, now: datetime | None = None) -> float:
    """Seconds the limit is closed for, from one response (0: not closed)."""
    get = headers.get
    pause = 0.0
    if status in _CLOSING:
        millis = _seconds(get("retry-after-ms"))
        after = millis / 1000 if millis is not None else _seconds(get("retry-after"))
        if after is None:
            date = _when(get("retry-after"))  # retry-after may be an HTTP date
            served = _when(get("date")) or now or datetime.now(UTC)
            after = (date - served).total_seconds() if date is not None else None
        pause = max(pause, after or 0.0)
    served = _when(get("date")) or now or datetime.now(UTC)
    for limit in _LIMITS:
        remaining = _seconds(get(f"anthropic-ratelimit-{limit}-remaining"))
        if remaining is None or remaining > 0:
            continue
        reset = _when(get(f"anthropic-ratelimit-{limit}-reset"))
        if reset is not None:
            pause = max(pause, (reset - served).total_seconds())
    return min(max(pause, 0.0), MAX_PAUSE)


class Pacer:
    """Shared by every request of one client; thread-safe."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self._until = 0.0  # monotonic time the limit opens again
        self._pauses = 0
        self._closed = 0.0
        self._held = 0
        self._held_seconds = 0.0
        self.stop: Callable[[], str | None] | None = None  # a reason ends a wait early

    def observe(self, status: int, headers: Any) -> float:
        """Close the limit as `status` and `headers` say; the pause (0: none)."""
        pause = pause_for(status, headers)
        if pause <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            until = now + pause
            if until > self._until:
                self._closed += until - max(now, self._until)
                self._until = until
            self._pauses += 1
        return pause

    def wait(self) -> float:
        """Block while the limit is closed (a `stop` reason ends it, and so does the
        calling thread's deadline: harness.clock); the seconds waited. A request whose
        session's time ran out while held goes on at once and fails on that deadline
        (harness.model.client), never waiting out a pause longer than its time."""
        with self._lock:
            start = self._clock()
            if start >= self._until:
                return 0.0
        deadline = clock.current()
        while True:
            with self._lock:
                left = self._until - self._clock()
            due = deadline.left()
            if left <= 0 or due == 0 or (self.stop is not None and self.stop()):
                break
            self._sleep(min(left, 0.2) if due is None else min(left, 0.2, due))
        waited = self._clock() - start
        with self._lock:
            self._held += 1
            self._held_seconds += waited
        return waited

    def stats(self) -> PaceStats:
        with self._lock:
            return PaceStats(self._pauses, self._closed, self._held, self._held_seconds)

    def hooks(self) -> dict[str, list[Callable[[Any], None]]]:
        """httpx event hooks: wait before each request, observe each response."""

        def before(_request: Any) -> None:
            self.wait()

        def after(response: Any) -> None:
            self.observe(response.status_code, response.headers)

        return {"request": [before], "response": [after]}


__all__ = ["MAX_PAUSE", "PaceStats", "Pacer", "pause_for"]
