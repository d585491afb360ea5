"""API faults and the end-to-end run, through the real SDK against a loopback server.

Every case drives `judge_session` without `client=` (so the SDK reads
ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY as it always does) against `FakeAPI` on
127.0.0.1. Each fault has one documented outcome, reached within a time bound:
either the SDK's retry succeeds and the model's judgment stands, or the run ends in
the advisory fallback with the reason in the receipt. Never a traceback, never a hang.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.agent.tools import TOOL_SPECS
from harness.cli.main import cli
from harness.contract.judgment import check_judge_file
from harness.run import judge_session
from tests.support.apiserver import (
    Action,
    CutStream,
    Drip,
    Error,
    Raw,
    Reply,
    Reset,
    Routed,
    Slow,
    cite_answer,
    is_audit,
    judge_responder,
    serve_with_env,
)
from tests.support.fakes import altered, message, text, tool_use, write_judge
from tests.support.sessions import snapshot
from tests.support.waits import HANG, WITHIN

KEY = "sk-ant-canary-faults-0001"
OK = Reply(judge_responder)
STREAM = {"max_output_tokens": 32_000}  # above 16,000 the harness streams


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start FakeAPIs on demand, with the SDK's env vars pointing at the latest."""
    yield from serve_with_env(monkeypatch, KEY)


def run(folder: Path, **options: Any):  # type: ignore[no-untyped-def]
    options = {"fetch": "stored", "cite": False, "timeout": 1.0, "max_retries": 1, **options}
    return judge_session(folder, **options)


def _read_findings(**changed: Any) -> bytes:
    """The judge's first turn (Read findings) as JSON, with some fields replaced (None:
    the field removed)."""
    return altered(message(tool_use("Read", {"file_path": "findings"})), **changed)


# (id, actions, options, outcome, words in the note, requests made)
FAULTS: list[tuple[str, list[Action], dict[str, Any], str, str, int]] = [
    (
        "429-retry-after",
        [Error(429, "rate_limit_error", headers={"retry-after": "0.2"}), OK, OK, OK],
        {},
        "model-written",
        "wrote a valid judge.json",
        4,
    ),
    ("500-retried", [Error(500, "api_error"), OK, OK, OK], {}, "model-written", "valid", 4),
    (
        "529-twice",
        [Error(529, "overloaded_error", "Overloaded")] * 2,
        {},
        "fallback",
        "unavailable: HTTP 529 overloaded_error: Overloaded",
        2,
    ),
    (
        "413-not-retried",
        [Error(413, "request_too_large", "Request exceeds the maximum size")],
        {},
        "fallback",
        "HTTP 413 request_too_large",
        1,
    ),
    ("reset-then-ok", [Reset(), OK, OK, OK], {}, "model-written", "valid", 4),
    ("reset-twice", [Reset(), Reset()], {}, "fallback", "could not connect", 2),
    (
        "slower-than-timeout",
        [Slow(HANG, OK), Slow(HANG, OK)],
        {"timeout": 0.5},
        "fallback",
        "the request timed out",
        2,
    ),
    (
        "truncated-json",
        [Raw(b'{"id": "msg_01", "type": "message", "role": "assis')],
        {},
        "fallback",
        "could not be read as a message (JSONDecodeError",
        1,
    ),
    (
        "json-not-a-message",
        [Raw(b'{"hello": "world"}')],
        {},
        "fallback",
        "not a complete message",
        1,
    ),
    (
        "html-not-json",
        [Raw(b"<html><body>Bad gateway</body></html>", content_type="text/html")],
        {},
        "fallback",
        "not a message (got str",
        1,
    ),
    ("json-array", [Raw(b"[1, 2, 3]")], {}, "fallback", "not a message (got list", 1),
    # A message whose fields the loop reads have the wrong type: the judge's format broken
    # by the API, an outcome of its own (it once ended in an internal error, exit 1).
    *[
        (f"message-{name}", [Raw(_read_findings(**changed))], {}, "fallback", words, 1)
        for name, changed, words in [
            ("no-model", {"model": None}, "malformed: its model is not a string"),
            ("model-a-number", {"model": 5}, "malformed: its model is not a string"),
            ("stop-reason-a-number", {"stop_reason": 5}, "its stop_reason is neither"),
            ("text-a-number", {"content": [{"type": "text", "text": 5}]}, "no string text"),
            (
                "tool-use-id-a-number",
                {"content": [{"type": "tool_use", "id": 5, "name": ["Read"], "input": {}}]},
                "no string id and name",
            ),
            (
                "tool-use-without-id",
                {"content": [{"type": "tool_use", "name": "Read"}]},
                "no string id and name",
            ),
            # Tool uses the API would refuse to take back in the next request.
            *[
                (name, {"content": [*blocks]}, "an id or name the API would refuse")
                for name, blocks in [
                    ("tool-use-id-with-a-space", [tool_use("Read", {}, id="toolu 1")]),
                    (
                        "tool-use-id-empty",
                        [{"type": "tool_use", "id": "", "name": "Read", "input": {}}],
                    ),
                    ("tool-use-name-empty", [tool_use("", {}, id="toolu_1")]),
                ]
            ],
        ]
    ],
    (
        "tool-use-id-twice-in-a-reply",
        [Reply(message(*[tool_use("Read", {"file_path": "findings"}, id="toolu_1")] * 2))],
        {},
        "fallback",
        "the tool_use id toolu_1 is given twice in the conversation",
        1,
    ),
    (
        "tool-use-id-of-an-earlier-turn",
        [Reply(message(tool_use("Read", {"file_path": "findings"}, id="toolu_same")))] * 2,
        {},
        "fallback",
        "the tool_use id toolu_same is given twice in the conversation",
        2,
    ),
    (
        "stream-cut-mid-event",
        [CutStream(judge_responder, keep=300)],
        STREAM,
        "fallback",
        "could not be read as a message (RemoteProtocolError",
        1,
    ),
    (
        "stream-not-events",
        [Raw(b"data: {not json\n\n", content_type="text/event-stream")],
        STREAM,
        "fallback",
        "could not be read as a message",
        1,
    ),
    (
        "stream-529-retried",
        [Error(529, "overloaded_error"), OK, OK, OK],
        STREAM,
        "model-written",
        "valid",
        4,
    ),
    (
        "stream-drips-past-the-run-limit",
        [Drip(judge_responder, seconds=HANG, interval=0.1)],
        {**STREAM, "max_seconds": 1.0, "timeout": 0.5},
        "fallback",
        "the time limit (1 s for the whole run",  # a slow model is the time limit (#22)
        1,
    ),
    (
        "body-drips-past-the-run-limit",
        [Drip(judge_responder, seconds=HANG, interval=0.1)] * 2,
        {"max_seconds": 1.0, "timeout": 0.5},
        "fallback",
        "the time limit (1 s for the whole run",  # not retried: no time is left (#22)
        1,
    ),
]


# A hang guard, not a speed claim: every fault here ends in a second or two; what a limit
# stops (a HANG s reply past a 0.5 s timeout, a HANG s drip past a 1 s run) would take ten
# minutes, so WITHIN holds on a loaded machine and still catches it.


@pytest.mark.timeout(2 * WITHIN)
@pytest.mark.parametrize(
    ("actions", "options", "outcome", "words", "calls"),
    [f[1:] for f in FAULTS],
    ids=[f[0] for f in FAULTS],
)
def test_fault_has_its_documented_outcome_in_bounded_time(
    api: Any,
    small_session: Path,
    actions: list[Action],
    options: dict[str, Any],
    outcome: str,
    words: str,
    calls: int,
) -> None:
    server = api(list(actions), default=None)
    before = snapshot(small_session)
    started = time.monotonic()
    result = run(small_session, **options)
    elapsed = time.monotonic() - started
    assert elapsed < WITHIN, f"took {elapsed:.1f} s"
    assert result.outcome == outcome, result.receipt.note
    assert words in result.receipt.note
    assert result.exit_code == 0 and result.receipt.wroteJudge is True
    assert check_judge_file(small_session / "judge.json").valid
    assert len(server.requests) == calls
    assert server.overruns == 0
    assert not server.rejected  # no request the API's rules refuse, whatever came back
    assert snapshot(small_session) == before
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == outcome
    if outcome == "fallback":
        # 413: the request was refused as invalid (ours to fix), not an outage.
        invalid = "HTTP 413" in words
        prefixes = (
            ("the API refused the request as invalid: ",)
            if invalid
            else ("the model was unavailable: ", "the judge did not finish: the time limit")
        )
        assert record["outcome"]["reason"].startswith(prefixes)
        timed_out = record["outcome"]["reason"].startswith("the judge did not finish")
        expected = "invalid-request" if invalid else (None if timed_out else "unavailable")
        assert record["outcome"].get("apiFault") == expected


def test_retry_after_is_what_the_sdk_waits(
    api: Any, small_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """429 with retry-after 0.15 s: the retry comes after that, not after the SDK's own
    backoff (0.375-0.5 s for a first retry). The wait is read where the client sleeps it,
    not from the gap between requests, which a loaded machine only widens."""
    from harness.model import client

    slept: list[float] = []

    class Clock:
        """The client's `time`, its sleeps recorded (and slept)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(time, name)

        def sleep(self, seconds: float) -> None:
            slept.append(seconds)
            time.sleep(seconds)

    monkeypatch.setattr(client, "time", Clock())
    server = api([Error(429, "rate_limit_error", headers={"retry-after": "0.15"}), OK, OK, OK])
    result = run(small_session)
    assert result.outcome == "model-written"
    assert slept == [0.15], slept  # the retry-after, not a backoff of 0.375-0.5 s
    gap = server.requests[1].at - server.requests[0].at
    assert gap >= 0.15, gap  # and it was waited
    assert server.requests[1].headers["x-stainless-retry-count"] == "1"


def test_cli_fault_prints_the_receipt_and_no_traceback(api: Any, small_session: Path) -> None:
    api([Raw(b'{"type": "message", "content": "nope"')], default=None)
    result = CliRunner().invoke(
        cli,
        ["run", str(small_session), "--fetch", "stored", "--no-cite", "--timeout", "1"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    receipt = json.loads(result.stdout)
    assert receipt["wroteJudge"] is True
    assert "could not be read as a message" in receipt["note"]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


# -- issue #3: a normal run end to end, plain and streamed -------------------------


@pytest.mark.parametrize("options", [{}, STREAM], ids=["plain", "streamed"])
def test_end_to_end_requests_are_what_the_api_expects(
    api: Any, small_session: Path, options: dict[str, Any]
) -> None:
    steps = [
        message(
            tool_use("Read", {"file_path": "findings/sq1.json"}, id="toolu_e2e_1"),
            tool_use("Read", {"file_path": "../outside"}, id="toolu_e2e_2"),
            tool_use("Read", {"file_path": "sources.json"}, id="toolu_e2e_3"),
        ),
        message(write_judge()),
        message(text('Done. {"wroteJudge": true, "note": "scored"}')),
    ]
    server = api([Reply(step) for step in steps], default=None)
    before = snapshot(small_session)
    result = run(small_session, **options)
    assert result.outcome == "model-written", result.receipt.note
    assert snapshot(small_session) == before
    assert len(server.requests) == 3
    for received in server.requests:
        assert received.path == "/v1/messages"
        # The key travels in a header (which header is the SDK's business), never a body.
        assert KEY in (
            received.headers.get("x-api-key", "") + received.headers.get("authorization", "")
        )
        assert received.headers["anthropic-version"]
        body = received.body
        assert body.get("stream", False) is bool(options)
        assert body["max_tokens"] == options.get("max_output_tokens", 8192)
        # The rendered brief is the system prompt, cached.
        assert body["system"][0]["type"] == "text"
        assert "judge.json" in body["system"][0]["text"]
        assert str(small_session) in body["system"][0]["text"]
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        # The three tools, the last one marking the cache breakpoint.
        assert [t["name"] for t in body["tools"]] == [t["name"] for t in TOOL_SPECS]
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["messages"][0]["role"] == "user"
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    results = second[-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_e2e_1", "toolu_e2e_2", "toolu_e2e_3"]
    assert "is_error" not in results[0] and "sq1-c1" in results[0]["content"]
    assert results[1]["is_error"] is True and "outside the session" in results[1]["content"]
    assert "is_error" not in results[2]
    third = server.requests[2].body["messages"][-1]["content"]
    assert "exited 0" in third[0]["content"]
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["turns"] == 3
    assert [c["name"] for c in record["toolCalls"]] == ["Read", "Read", "Read", "Write"]


def test_a_reply_broken_off_reads_the_same_whenever_the_sdk_meets_it() -> None:
    """Issue 31 §6: a stream cut mid-event read as 'could not connect' when the SDK met the
    cut while opening the stream (a loaded machine) and 'could not be read as a message'
    when it met it reading: the words now depend on the fault, not on timing."""
    import anthropic
    import httpx2

    from harness.model.messages import describe_api_error, unreadable_reply

    cut = httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body (incomplete chunked read)"
    )
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    wrapped = anthropic.APIConnectionError(request=request)
    wrapped.__cause__ = cut
    assert describe_api_error(wrapped) == str(unreadable_reply(cut))
    refused = anthropic.APIConnectionError(request=request)
    refused.__cause__ = httpx2.ConnectError("connection refused")
    assert describe_api_error(refused).startswith("could not connect")
    never = anthropic.APIConnectionError(request=request)
    never.__cause__ = httpx2.RemoteProtocolError("Server disconnected without sending a response.")
    assert describe_api_error(never).startswith("could not connect")


@pytest.mark.parametrize(
    "bad",
    [
        Raw(b'{"id": "msg_01", "type": "mess'),
        Raw(b"[1, 2, 3]"),
        Raw(b"<html>Bad gateway</html>", content_type="text/html"),
        Raw(b'{"type": "message", "content": [{"type": "text", "text": 5}], "usage": {}}'),
        Error(418, "api_error", "an undocumented status"),
    ],
    ids=["truncated-json", "json-array", "html", "text-a-number", "status-418"],
)
def test_one_unusable_audit_reply_costs_its_own_answers_not_the_audit(
    api: Any, fixture_copy: Any, bad: Action
) -> None:
    """The audit's second request gets a reply that is not a usable message: that request's
    claims end as errors, the others are judged (the whole audit once failed on it)."""
    session = fixture_copy("clean")
    api([Reply(cite_answer), bad], default=Routed(is_audit, Reply(cite_answer), OK))
    result = CliRunner().invoke(
        cli, ["run", str(session), "--fetch", "stored", "--max-retries", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "audit failed" not in result.stderr and "Traceback" not in result.stderr
    report = json.loads((session / ".judge" / "citations.json").read_text())
    assert "failure" not in report, report.get("failure")
    verdicts = [claim["verdict"] for claim in report["claims"]]
    errors = [claim for claim in report["claims"] if claim.get("error")]
    assert 1 <= len(errors) < len(verdicts), verdicts  # that request's claims, not all
    assert {claim["error"]["kind"] for claim in errors} == {"unavailable"}
    assert verdicts.count("supported") == len(verdicts) - len(errors)
