"""The progress seam: what a run tells a display while it works.

`judge_session(..., progress=on_event)` calls `on_event(event)` from whichever thread did
the work (the agent loop's, or an audit pool thread), so a display must be thread-safe
and quick. Events are plain dicts with an `"event"` key:

- `{"event": "phase", "phase": "audit" | "judge"}`: the audit or the agent loop starts;
  the judge's also carries `"inputs"`, the run's up-to-date digest (harness.run.uptodate)
  of everything that decides the judgment, and `"seconds"`, the most the judge may take.
  Events are for display: a caller that steers by the run's milestones passes `hooks`
  (harness.run.RunHooks) instead.
- `{"event": "audit-start", "claims": n, "judgments": j, "seconds": s}`: n claims go to
  the support model in j judgments (a quoted claim's, or a cited source's with the claims
  citing it), within s seconds at most (None: no limit but each request's own).
- `{"event": "audit-request", "tokens": t}`: one audit request answered (budgeted tokens).
- `{"event": "audit-failed", "why": words}`: one audit request failed, and why in a few
  words ("the API refused the key", "the API could not be reached").
- `{"event": "audit-claim", "done": k, "total": j}`: k of the j judgments are done.
- `{"event": "turn", "turn": n, "stop": reason, "tools": [names], "tokens": t,
  "totalTokens": T}`: agent turn n answered; t budgeted tokens this turn, T so far.

`judge_session(..., stop=should_stop)` is the other half: `should_stop()` returns None to
go on, or a reason (e.g. a batch's token budget is spent) to start no further agent turn
and no further audit request; the run then ends as its own limits would, saying why.

A display that raises never stops a run: `emit` swallows its faults.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Literal

Event = dict[str, Any]
OnEvent = Callable[[Event], None]
ShouldStop = Callable[[], "str | None"]

Halt = Literal["interrupted", "limit"]
"""Why a caller (`judge batch`), not the session, stopped a run short or never started it:
the caller's interrupt (Ctrl-C, SIGTERM, a fault of the batch's `on_result`), or one of its
limits (its tokens or its time)."""


def emit(on_event: OnEvent | None, event: Event) -> None:
    """Tell `on_event`, if any; a fault of the display is not the run's."""
    if on_event is None:
        return
    with contextlib.suppress(Exception):
        on_event(event)


__all__ = ["Event", "Halt", "OnEvent", "ShouldStop", "emit"]
