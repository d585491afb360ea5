"""#21 §2: the API's rate-limit headers slow every session of a batch down together
(harness.model.pacing), tested against the loopback Messages API sending 429s with
retry-after and responses with `anthropic-ratelimit-*` at 0."""

from __future__ import annotations

import json
import re
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from harness import clock
from harness.cli import cli
from harness.model.pacing import MAX_PAUSE, Pacer, pause_for
from tests.support.apiserver import Error, FakeAPI, Reply, Slow, judge_responder
from tests.support.batch_helpers import sessions_under

KEY = "sk-ant-canary-batch-pacing-0001"
NOW = datetime(2026, 12, 1, 21, 0, 0, tzinfo=UTC)
DATE = "Tue, 01 Dec 2026 21:00:00 GMT"


def _at(seconds: float) -> str:
    return (NOW + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize(
    ("status", "headers", "pause"),
    [
        (429, {"retry-after": "2"}, 2.0),
        (429, {"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        (529, {"retry-after": "0.5"}, 0.5),
        (429, {"retry-after": "Tue, 01 Dec 2026 21:00:03 GMT", "date": DATE}, 3.0),
        (200, {"retry-after": "5"}, 0.0),  # only a refusal's retry-after closes the limit
        (200, {"anthropic-ratelimit-requests-remaining": "0", "date": DATE}, 0.0),  # no reset
        (
            200,
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": _at(4),
                "date": DATE,
            },
            4.0,
        ),
        (
            200,
            {
                "anthropic-ratelimit-requests-remaining": "3",
                "anthropic-ratelimit-requests-reset": _at(4),
                "anthropic-ratelimit-output-tokens-remaining": "0",
                "anthropic-ratelimit-output-tokens-reset": _at(7),
                "date": DATE,
            },
            7.0,
        ),
        (
            429,
            {
                "retry-after": "1",
                "anthropic-ratelimit-tokens-remaining": "0",
                "anthropic-ratelimit-tokens-reset": _at(2.5),
                "date": DATE,
            },
            2.5,
        ),
        # Hostile or broken values never hold the run: capped, or ignored.
        (429, {"retry-after": "31536000"}, MAX_PAUSE),
        (429, {"retry-after": "nan"}, 0.0),
        (429, {"retry-after": "-5"}, 0.0),
        (429, {"retry-after": "inf"}, 0.0),
        (
            200,
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "2020-01-01T00:00:00Z",  # past
                "date": DATE,
            },
            0.0,
        ),
        (
            200,
            {
                "anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": "not a time",
                "date": DATE,
            },
            0.0,
        ),
    ],
)
def test_what_closes_the_limit_and_for_how_long(
    status: int, headers: dict[str, str], pause: float
) -> None:
    assert pause_for(status, headers, now=NOW) == pytest.approx(pause)


@given(
    st.sampled_from([200, 429, 500, 529]),
    st.dictionaries(
        st.sampled_from(
            [
                "retry-after",
                "retry-after-ms",
                "date",
                "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset",
                "anthropic-ratelimit-tokens-remaining",
                "anthropic-ratelimit-tokens-reset",
            ]
        ),
        st.text(max_size=40),
    ),
)
def test_any_header_values_give_a_bounded_pause(status: int, headers: dict[str, str]) -> None:
    assert 0.0 <= pause_for(status, headers, now=NOW) <= MAX_PAUSE


def test_one_signal_holds_every_thread_and_the_wait_is_counted() -> None:
    pacer = Pacer()
    assert pacer.observe(429, {"retry-after": "0.4"}) == pytest.approx(0.4)
    waits: list[float] = []
    threads = [threading.Thread(target=lambda: waits.append(pacer.wait())) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(waits) == 5 and all(0.3 <= w < 2.0 for w in waits)
    stats = pacer.stats()
    assert stats.pauses == 1 and stats.held == 5
    assert stats.closed_seconds == pytest.approx(0.4)
    assert stats.held_seconds == pytest.approx(sum(waits))
    assert pacer.wait() == 0.0  # open again


def test_a_stop_reason_ends_the_wait() -> None:
    pacer = Pacer()
    pacer.observe(429, {"retry-after": "30"})
    pacer.stop = lambda: "the batch's time limit was reached"
    assert pacer.wait() < 1.0


def test_the_waiting_requests_own_deadline_ends_the_wait() -> None:
    """A pause longer than the session's time left is not waited out: its deadline (the
    thread's, harness.clock) ends the wait, and the request then fails on it."""
    pacer = Pacer()
    pacer.observe(429, {"retry-after": "30"})
    with clock.scope(clock.Deadline.after(0.2)):
        waited = pacer.wait()
    assert 0.1 <= waited < 10.0  # the deadline's 0.2 s, not the pause's 30
    with clock.scope(clock.Deadline.after(0.0)):
        assert pacer.wait() < 1.0  # no time left: not held at all


# -- a batch against the loopback API ------------------------------------------------------


def _batch(
    api: FakeAPI, monkeypatch: pytest.MonkeyPatch, root: object, *extra: str
) -> tuple[Any, list[float]]:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    args = ["batch", str(root), "--sessions", "4", "--no-cite", "--fetch", "off"]
    result = CliRunner().invoke(cli, [*args, "--max-retries", "2", *extra])
    return result, [r.at for r in api.requests]


@pytest.mark.parametrize("signal", ["429 retry-after", "requests remaining 0"])
def test_the_sessions_of_a_batch_slow_down_together(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, signal: str
) -> None:
    root = tmp_path / "root"  # type: ignore[operator]
    sessions_under(root, ["a", "b", "c", "d"])
    # The first three first turns are answered late (0.6 s), the fourth at once with the
    # signal: the three sessions' second turns come after it and must wait it out.
    held = Slow(0.6, Reply(judge_responder))
    if signal == "429 retry-after":
        closing: object = Error(429, "rate_limit_error", headers={"retry-after": "1.5"})
        pause = 1.5
    else:
        reset = datetime.now(UTC) + timedelta(seconds=2.5)
        headers = {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset.isoformat().replace("+00:00", "Z"),
        }
        closing = Reply(judge_responder, headers=headers)
        pause = 1.4  # at least: the reset less the time until the request, less the Date's
    with FakeAPI([held, held, held, closing]) as api:  # type: ignore[list-item]
        result, arrivals = _batch(api, monkeypatch, root)
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert len(arrivals) == 4 * 3 + (1 if signal == "429 retry-after" else 0)
    signalled = sorted(arrivals[:4])[3]  # the fourth request got the signal
    early = [t - signalled for t in arrivals[4:] if signalled + 0.05 < t < signalled + pause]
    assert early == []  # no session sent anything while the limit was closed
    stderr = result.stderr  # type: ignore[attr-defined]
    assert "waited for the API's rate limit: closed" in stderr
    assert "3 request(s) held" in stderr or "4 request(s) held" in stderr


def test_a_pause_past_the_sessions_time_holds_them_only_until_it(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 asking for a wait far past every session's `--max-seconds` (a hostile or
    broken retry-after: the pause is capped at MAX_PAUSE) holds the other sessions' next
    requests only until their own time runs out, not for the pause: once they waited out
    the whole cap, past their limit."""
    root = tmp_path / "root"  # type: ignore[operator]
    sessions_under(root, ["a", "b", "c", "d"])
    held = Slow(0.6, Reply(judge_responder))
    closing = Error(429, "rate_limit_error", headers={"retry-after": "99999"})
    with FakeAPI([held, held, held, closing]) as api:
        result, _ = _batch(api, monkeypatch, root, "--max-seconds", "3")
    assert result.exit_code == 0, result.output
    found = re.search(r"([\d,]+) request\(s\) held, ([\d.]+) s in all", result.stderr)
    assert found is not None, result.stderr
    requests, seconds = int(found[1].replace(",", "")), float(found[2])
    assert requests >= 1
    assert seconds / requests < MAX_PAUSE / 2, found[0]  # each at most its 3 s, not 60 s
    for line in result.stdout.splitlines():
        row = json.loads(line)
        assert row["wroteJudge"] is True and row["outcome"] in ("model-written", "fallback")
