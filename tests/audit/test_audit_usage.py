"""The audit model's token usage is data from outside: clamped, and the clamping said once
(issue 22 §4), in citations.json and in run.json's `citations`, as the judge's own
corrections are in run.json's `replyProblems`."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import config
from harness.artifacts.record import RunRecord
from harness.audit import CitationReport, audit_session
from harness.model.cite_client import AnthropicCiteClient
from harness.run import judge_session
from harness.session.loader import load_session
from harness.usage import USAGE_FIELDS, checked_usage
from tests.support.apiserver import (
    Reply,
    Routed,
    cite_answer,
    is_audit,
    judge_responder,
    serve_with_env,
)
from tests.support.audit_builders import quoted, write_session
from tests.support.hostile_usage import EVERY_COUNT, HOSTILE_COUNT
from tests.support.sessions import write_small_session

KEY = "sk-ant-audit-usage-" + "05" * 8

USAGE = st.one_of(
    EVERY_COUNT,
    st.dictionaries(st.sampled_from(USAGE_FIELDS), HOSTILE_COUNT),  # some counts left out
    st.none(),
    st.integers(),
    st.text(max_size=6),
)


def answered(usage: Any) -> Any:
    """An SDK client whose every audit reply answers 0.9 with `usage`, as the API sent it."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        schema = body.get("output_config", {}).get("format", {}).get("schema", {})
        answer = dict.fromkeys(schema.get("properties", {}), 0.9)
        reply = {
            "id": "msg_usage",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-5-5",
            "content": [{"type": "text", "text": json.dumps(answer)}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        return httpx2.Response(200, content=json.dumps(reply).encode())

    return anthropic.Anthropic(
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(usage=USAGE)
def test_any_audit_usage_is_clamped_and_each_correction_said_once(usage: Any) -> None:
    """On main the corrections were dropped: `Reply` had no field for them."""
    sdk = answered(usage)
    # The counts as the SDK hands them over (it reads `0.0` as 0, `-1.0` as -1), checked.
    seen = sdk.messages.create(
        model="claude-haiku-5-5", max_tokens=1, messages=[{"role": "user", "content": "x"}]
    )
    _, expected = checked_usage(seen.usage)
    with tempfile.TemporaryDirectory() as tmp:
        claims = [quoted("sq1-c1", "Aspirin is used to reduce fever and pain.")]
        session = load_session(write_session(Path(tmp) / "s", claims))
        client = AnthropicCiteClient(sdk, model="claude-haiku-5-5")
        report = audit_session(session, against="quotes", client=client, model="claude-haiku-5-5")
    # What citations.json holds reads back through its own model.
    saved = CitationReport.model_validate_json(report.to_json())
    requests = saved.totals.requests
    assert requests == 2  # round 1 and round 2: the reply was read, whatever its usage
    assert saved.claims[0].verdict == "supported"
    for value in saved.usage.model_dump().values():
        assert 0 <= value <= requests * config.MAX_USAGE_TOKENS
    if not expected:
        assert saved.replyProblems is None
        return
    assert saved.replyProblems is not None
    assert len(saved.replyProblems) == len(expected)  # each once, however many replies
    for said, problem in zip(saved.replyProblems, expected, strict=True):
        assert said == f"{problem} (in {requests:,} replies)"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def test_a_run_says_the_audits_usage_corrections_in_citations_and_run_json(
    api: Any, tmp_path: Path
) -> None:
    folder = write_small_session(tmp_path / "sess")
    usage = {"input_tokens": -5, "output_tokens": 10**30}
    api(
        [],
        default=Routed(
            is_audit, Reply(lambda request: cite_answer(request, usage)), Reply(judge_responder)
        ),
    )
    result = judge_session(folder, fetch="stored", cite=True, timeout=10.0, max_retries=0)
    assert result.exit_code == 0 and result.outcome == "model-written", result.receipt.note
    report = json.loads((folder / ".judge" / "citations.json").read_text())
    requests = report["totals"]["requests"]
    assert requests >= 1
    replies = "" if requests == 1 else f" (in {requests} replies)"
    said = [
        f"usage input_tokens was -5, below 0: counted as 0{replies}",
        f"usage output_tokens was {10**30!r}, above 100,000,000: counted as 100,000,000{replies}",
    ]
    assert report["replyProblems"] == said
    assert report["usage"]["input_tokens"] == 0
    record = RunRecord.model_validate_json((folder / ".judge" / "run.json").read_text())
    assert record.citations is not None and record.citations.replyProblems == said
    assert not any("usage" in p for p in record.replyProblems)  # the judge's replies were fine
