"""One claim end to end through AnthropicCiteClient and the real SDK over httpx2.MockTransport."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from harness.audit import audit_session
from harness.cite import Usage
from harness.model.cite_client import AnthropicCiteClient
from tests.support.audit_builders import quoted, session


def test_one_claim_through_the_sdk(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append(body)
        asked = json.loads(body["messages"][0]["content"])
        schema = body["output_config"]["format"]["schema"]
        # Answer every field the schema asks for: 0.9 for round 1 and round 2 alike.
        answer = dict.fromkeys(schema["properties"], 0.9)
        assert set(schema["required"]) == set(answer)
        assert list(asked) == ["state", "criteria", "asks", "questions"]
        return httpx2.Response(
            200,
            json={
                "id": f"msg_{len(seen)}",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-5-5",
                "content": [{"type": "text", "text": json.dumps(answer)}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 200,
                    "output_tokens": 10,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 900,
                },
            },
        )

    sdk = anthropic.Anthropic(
        api_key="test-key",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    claims = [quoted("sq1-c1", "Aspirin is used to reduce fever and pain.")]
    report = audit_session(
        session(tmp_path, claims),
        against="quotes",
        client=AnthropicCiteClient(sdk, model="claude-haiku-5-5"),
        model="claude-haiku-5-5",
    )
    (claim,) = report.claims
    assert claim.verdict == "supported"
    assert [(q.verdict, q.confirm) for q in claim.quotes] == [("holds", 0.9)]
    assert claim.problems == []
    assert report.totals.requests == len(seen) == 2
    assert report.usage == Usage(input_tokens=400, output_tokens=20, cache_read_input_tokens=1800)
    assert report.models == ["claude-haiku-5-5"]
    # Round 1 screens, round 2 confirms; the system prompt, too short to be cached, is not
    # marked for caching (see cite_client.CACHE_MIN_TOKENS).
    first, second = (json.loads(b["messages"][0]["content"]) for b in seen)
    assert list(first["questions"]) == ["sq1-c1-q1:supports"]
    assert list(second["questions"]) == ["confirm:sq1-c1-q1"]
    assert all("cache_control" not in b["system"][0] for b in seen)
    assert all(b["model"] == "claude-haiku-5-5" for b in seen)
