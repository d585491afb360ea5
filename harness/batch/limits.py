"""The batch's shared limits, and the one place that says whether to go on.

- `sessions`: sessions judged at once (threads; each is a whole `judge_session`).
- `cite_requests`: audit requests in flight across all sessions (one `CitePool`); each
  session's `cite_concurrency` still applies inside it.
- `max_tokens`: tokens for the whole batch, counted as a run counts its own (input + cache
  writes + output, of the judge and the audit). Once spent, no session starts, and the
  sessions in flight send no further agent turn or audit request; each says so.
- `max_seconds`: wall-clock limit for the batch: once passed, no session starts and the
  sessions in flight send no further agent turn or audit request (a request already sent
  may still finish within its own timeout). A session's own options are never changed:
  they are the inputs of the up-to-date rule, on which a restarted batch resumes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from pydantic import Field

from harness.clock import Deadline
from harness.config import BATCH_CITE_REQUESTS, BATCH_SESSIONS
from harness.strict import Strict


class BatchLimits(Strict):
    sessions: int = Field(
        int(BATCH_SESSIONS.default), ge=BATCH_SESSIONS.low, le=BATCH_SESSIONS.high
    )
    cite_requests: int = Field(
        int(BATCH_CITE_REQUESTS.default), ge=BATCH_CITE_REQUESTS.low, le=BATCH_CITE_REQUESTS.high
    )
    max_tokens: int | None = Field(None, ge=1)
    max_seconds: float | None = Field(None, gt=0)


class Budget:
    """Tokens spent and time left for the whole batch; safe to use from any thread.

    `add` is called once for every request the batch pays for, where it is paid: a
    session's turn or audit request on the ordinary API (its progress event), and with
    `--batch-api` each result read from a Message Batch and each request that fell back.
    A turn or answer taken up from a killed run's saved state is not paid again and
    never reaches it. `on_paid(tokens)` (the progress display, which counts the requests)
    hears of each one.
    """

    def __init__(
        self,
        limits: BatchLimits,
        on_paid: Callable[[int], None] | None = None,
        on_replayed: Callable[[int], None] | None = None,
    ) -> None:
        self.limits = limits
        self.started = time.monotonic()
        # The batch's time limit, as every other time budget is (harness.clock).
        self.deadline = Deadline.after(limits.max_seconds, "the batch's time")
        self._lock = threading.Lock()
        self._on_paid = on_paid
        self._on_replayed = on_replayed
        self.tokens = 0
        self._halted: str | None = None

    def add(self, tokens: int, *, replayed: bool = False) -> None:
        """One request paid for, of `tokens` budgeted tokens; `replayed`: answered from a
        recording (`--replay-dir`), so counted against the budget as the recorded run
        counted it, but told to `on_replayed`, not `on_paid`: nothing was sent."""
        tokens = max(0, int(tokens))
        with self._lock:
            self.tokens += tokens
        hear = self._on_replayed if replayed else self._on_paid
        if hear is not None:
            hear(tokens)

    def halt(self, reason: str) -> None:
        """Stop everything from now on (e.g. the operator interrupted the batch)."""
        self._halted = self._halted or reason

    def halted(self) -> str | None:
        """Why the batch was stopped (an interrupt), or None: what is already paid for is
        still read until the time limit, whatever the tokens."""
        return self._halted

    def remaining(self) -> float | None:
        """Seconds left of the batch's time (never negative), or None: no limit."""
        return self.deadline.left()

    def reason(self) -> str | None:
        """None to go on; else why nothing more may start (a `harness.events.ShouldStop`)."""
        if self._halted:
            return self._halted
        cap = self.limits.max_tokens
        if cap is not None and self.tokens >= cap:
            return f"the batch's token budget ({cap:,} tokens) was used up"
        left = self.remaining()
        if left is not None and left <= 0:
            return f"the batch's time limit ({self.limits.max_seconds:g} s) was reached"
        return None


__all__ = ["BatchLimits", "Budget"]
