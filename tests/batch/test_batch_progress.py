"""The batch's progress displays: a rich bar on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console

from harness.batch.core import SessionResult
from harness.batch.progress import Tracker
from harness.cli.batch_progress import LiveDisplay, PlainDisplay


def _done(name: str, ok: bool = True, skipped: bool = False) -> SessionResult:
    outcome = "model-written" if ok else "not-written"
    return SessionResult(name, Path("/x") / name, outcome, ok, "n", skipped, 0 if ok else 1)


def _feed(tracker: Tracker) -> None:
    tracker.begin(4)
    tracker.started("a")
    tracker.event("a", {"event": "audit-request", "tokens": 50})
    tracker.paid(50)  # the requests counted are those the batch paid (Budget.add)
    tracker.event("a", {"event": "turn", "turn": 1, "tokens": 120, "totalTokens": 120})
    tracker.paid(120)
    # A turn replayed from a saved conversation: an event, but nothing paid.
    tracker.event("a", {"event": "turn", "turn": 2, "tokens": 999, "totalTokens": 1119})
    tracker.finished("a", _done("a"))
    tracker.started("b\x1b[2Kforged")
    tracker.event("b\x1b[2Kforged", {"event": "audit-claim", "done": 2, "total": 7})
    tracker.finished("c", _done("c", skipped=True))
    tracker.finished("d", _done("d", ok=False))


def test_tracker_counts_and_plain_lines() -> None:
    tracker = Tracker()
    out = io.StringIO()
    display = PlainDisplay(tracker, out, interval=0.02).start()
    _feed(tracker)
    time.sleep(0.15)
    display.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3  # periodic, plus the last at stop
    assert lines[-1].startswith(
        "judge batch: 3/4 sessions done (1 up to date or skipped, 1 failed), 1 in flight, "
        "2 requests, 170 tokens, "
    )
    assert "ETA" in lines[-1]
    assert tracker.eta() is not None and tracker.eta() >= 0  # type: ignore[operator]


def test_live_display_draws_the_bar_with_names_escaped() -> None:
    tracker = Tracker()
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200)
    display = LiveDisplay(tracker, console).start()
    _feed(tracker)
    display.stop()
    text = buffer.getvalue()
    assert "3/4" in text and "1 in flight" in text and "170 tokens" in text
    assert "b\\x1b[2Kforged: audit 2/7" in text
    assert "\x1b[2Kforged" not in text  # the name's own escape never reaches the terminal
