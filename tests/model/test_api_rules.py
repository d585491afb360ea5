"""Requests the real API accepts, and a refusal that says so (issue #18 §3).

Through the strict loopback API (`apiserver.FakeAPI`, `batchapiserver.BatchAPI`: they
refuse what the real API refuses, `apirules`) and through the real SDK over
`httpx2.MockTransport`:
- an output limit above the model's is refused before any request (exit 2), and an
  unknown model passes with a one-line warning;
- a blank text block or an empty reply from the model never reaches the API again, and
  no two turns of one role are sent in a row (`harness.model.seam.sendable_messages`);
- a request the API refuses as invalid has its own reason in the receipt note, run.json,
  the audit's record and the batch summary: never "unavailable".
"""

from __future__ import annotations

import itertools
import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import anthropic.types
import httpx2
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import config
from harness.cli.main import cli
from harness.errors import ConfigError, InvalidRequest, ModelUnavailable
from harness.model.client import BuiltClient
from harness.model.messages import AnthropicModel
from harness.model.seam import UNANSWERED, sendable_messages
from harness.run import judge_session
from tests.support.apirules import OUTPUT_LIMITS, check_batch, check_messages, output_limit
from tests.support.apiserver import Error, FakeAPI, Reply, serve_with_env
from tests.support.batch_helpers import responder, sessions_under
from tests.support.fakes import message, text, tool_use, write_judge

KEY = "sk-ant-rules-0001"
INVALID = "the API refused the request as invalid"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def run(folder: Path, **options: Any):  # type: ignore[no-untyped-def]
    options = {"fetch": "stored", "cite": False, "timeout": 2.0, "max_retries": 0, **options}
    return judge_session(folder, **options)


def run_json(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / ".judge" / "run.json").read_text())
    return data


# -- the limits table -----------------------------------------------------------------------


def sdk_models() -> set[str]:
    return {a for p in typing.get_args(anthropic.types.Model) for a in typing.get_args(p)} - {str}


def test_the_table_has_every_model_the_sdk_names_and_no_other() -> None:
    assert set(config.MODEL_OUTPUT_LIMITS) == sdk_models()


@pytest.mark.parametrize("model", sorted(sdk_models()))
def test_the_table_agrees_with_the_strict_api(model: str) -> None:
    assert config.output_limit(model) == output_limit(model)
    assert config.MAX_OUTPUT_TOKENS.high == max(config.MODEL_OUTPUT_LIMITS.values())


@pytest.mark.parametrize(
    ("model", "tokens", "refused"),
    [
        ("claude-haiku-4-5", 64_000, False),
        ("claude-haiku-4-5", 64_001, True),
        ("claude-opus-4-5-20251101", 100_000, True),
        ("claude-sonnet-5-5", 128_000, False),
        ("claude-haiku-5-5", 128_000, False),
        ("claude-from-the-future-9", 128_000, False),  # unknown: passed through
    ],
)
def test_output_limit_refusal(model: str, tokens: int, refused: bool) -> None:
    why = config.run_limit_refusal(model, tokens, None)
    assert (why is not None) == refused
    if why is not None:
        assert "--max-output-tokens" in why and model in why
        assert f"{OUTPUT_LIMITS.get(model, 128_000):,}" in why


# -- the model's output limit, before any request -------------------------------------------


def test_run_above_the_models_output_limit_is_a_usage_error_before_any_request(
    api: Any, small_session: Path
) -> None:
    server = api()
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(small_session),
            "--no-cite",
            "--model",
            "claude-haiku-4-5",
            "--max-output-tokens",
            "100000",
            "--fetch",
            "stored",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "--max-output-tokens 100,000" in result.stderr
    assert "claude-haiku-4-5" in result.stderr and "64,000 tokens" in result.stderr
    assert server.requests == []  # nothing was sent
    assert not (small_session / "judge.json").exists()


def test_batch_above_the_models_output_limit_is_a_usage_error_before_any_session(
    api: Any, tmp_path: Path
) -> None:
    server = api()
    sessions_under(tmp_path / "root", ["a", "b"])
    result = CliRunner().invoke(
        cli,
        [
            "batch",
            str(tmp_path / "root"),
            "--no-cite",
            "--model",
            "claude-haiku-4-5",
            "--max-output-tokens",
            "64001",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "claude-haiku-4-5" in result.stderr and "64,000" in result.stderr
    assert server.requests == []


def test_within_the_limit_the_run_is_accepted_by_the_strict_api(
    api: Any, small_session: Path
) -> None:
    server = api()
    result = run(small_session, model="claude-haiku-4-5", max_output_tokens=64_000)
    assert result.outcome == "model-written", result.reason
    assert server.rejected == [] and server.bodies[0]["max_tokens"] == 64_000


def test_an_unknown_model_passes_with_a_one_line_warning(api: Any, small_session: Path) -> None:
    server = api()
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(small_session),
            "--no-cite",
            "--model",
            "claude-from-the-future-9",
            "--fetch",
            "stored",
            "--max-retries",
            "0",
        ],
    )
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "claude-from-the-future-9" in warnings[0]
    # Sent as given: the API does not know it, and says so as invalid, not as an outage.
    assert server.bodies[0]["model"] == "claude-from-the-future-9"
    assert result.exit_code == 0
    receipt = json.loads(result.stdout.splitlines()[-1])
    assert f"{INVALID}: model: claude-from-the-future-9" in receipt["note"]


# -- history repairs: what the model sent back is made sendable ------------------------------


def blank_then_work(blank: str) -> list[Any]:
    """A model that opens its tool call with a blank text block, then finishes."""
    return [
        Reply(message(text(blank), tool_use("Read", {"file_path": "findings"}))),
        Reply(message(text(blank), write_judge())),
        Reply(message(text('Done. {"wroteJudge": true, "note": "scored"}'))),
    ]


@pytest.mark.parametrize("blank", ["   ", "\n\n", "\t \u3000"])
def test_a_whitespace_only_text_block_is_not_sent_back(
    api: Any, small_session: Path, blank: str
) -> None:
    server = api(blank_then_work(blank))
    result = run(small_session)
    assert server.rejected == [], server.rejected[0][1].message
    assert result.outcome == "model-written", result.reason
    for body in server.bodies:
        for turn in body["messages"]:
            for block in turn["content"]:
                assert block.get("type") != "text" or block["text"].strip()
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_an_empty_reply_does_not_send_two_user_turns(
    api: Any, small_session: Path, tmp_path: Path
) -> None:
    server = api([Reply(message()), Reply(message(text(" ")))])  # then the obedient judge
    transcript = tmp_path / "transcript.jsonl"
    result = run(small_session, transcript=transcript)
    assert server.rejected == [], server.rejected[0][1].message
    assert result.outcome in ("model-written", "repaired"), result.reason
    for body in server.bodies:
        roles = [turn["role"] for turn in body["messages"]]
        assert all(a != b for a, b in itertools.pairwise(roles)), roles
    # The nudge after the empty reply went in the first user turn, after the brief.
    assert "(no reply received)" in json.dumps(server.bodies[1]["messages"][0])
    # The transcript holds the requests as sent: the repaired history.
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    sent = [line["body"]["messages"] for line in lines if line["type"] == "request"]
    assert sent == [body["messages"] for body in server.bodies]


def test_the_strict_api_refuses_the_history_the_repairs_fix() -> None:
    """The rejecting server is what makes the repair tests fail on the old code."""
    base = {"model": "claude-sonnet-5-5", "max_tokens": 10}
    user = {"role": "user", "content": [text("hi")]}
    blank = {"role": "assistant", "content": [text("  "), tool_use("Read", {}, id="t1")]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    refused = check_messages({**base, "messages": [user, blank, result]})
    assert refused is not None and "non-whitespace" in refused.message
    twice = check_messages({**base, "messages": [user, user]})
    assert twice is not None and "alternate" in twice.message
    repaired = sendable_messages([user, blank, result])
    assert check_messages({**base, "messages": repaired}) is None
    assert check_messages({**base, "messages": sendable_messages([user, user])}) is None


# A history as a model and the loop might leave it: text (blank or not), tool calls
# answered or not, empty turns, turns of one role in a row.
_texts = st.sampled_from(["", " ", "\n", "ok", " fine ", "\u00a0"])


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [{"role": "user", "content": [text("the brief")]}]
    pending: list[str] = []
    for n in range(draw(st.integers(0, 6))):
        role = draw(st.sampled_from(["user", "assistant"]))
        blocks: list[dict[str, Any]] = [text(t) for t in draw(st.lists(_texts, max_size=3))]
        if role == "assistant":
            uses = [f"toolu_{n}_{k}" for k in range(draw(st.integers(0, 2)))]
            blocks += [tool_use("Read", {"file_path": "."}, id=u) for u in uses]
            pending = uses
        else:
            answered = draw(st.lists(st.sampled_from(pending or ["toolu_stray"]), max_size=2))
            results = [
                {"type": "tool_result", "tool_use_id": u, "content": "x"}
                for u in dict.fromkeys(answered)
            ]
            blocks = results + blocks if draw(st.booleans()) else blocks + results
        turns.append({"role": role, "content": blocks})
    if turns[-1]["role"] == "assistant":
        turns.append({"role": "user", "content": [text("continue")]})
    return turns


@settings(max_examples=300, deadline=None)
@given(histories())
def test_every_repaired_history_is_one_the_api_accepts(history: list[dict[str, Any]]) -> None:
    before = json.dumps(history)
    repaired = sendable_messages(history)
    assert json.dumps(history) == before  # nothing mutated
    body = {"model": "claude-sonnet-5-5", "max_tokens": 10, "messages": repaired}
    refusal = check_messages(body)
    assert refusal is None, (refusal.message, history, repaired)
    # Nothing the model said is lost: every non-blank text survives, in order.
    said = [b["text"] for t in history for b in t["content"] if b["type"] == "text"]
    kept = [b["text"] for t in repaired for b in t["content"] if b["type"] == "text"]
    assert kept == [t for t in said if t.strip()]
    assert sendable_messages(repaired) == repaired  # a repaired history needs no repair


def test_an_unanswered_tool_use_gets_an_error_result() -> None:
    history = [
        {"role": "user", "content": [text("go")]},
        {"role": "assistant", "content": [tool_use("Read", {}, id="t1")]},
        {"role": "assistant", "content": [text("and then")]},
        {"role": "user", "content": [text("continue")]},
    ]
    repaired = sendable_messages(history)
    assert [t["role"] for t in repaired] == ["user", "assistant", "user"]
    first = repaired[2]["content"][0]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": UNANSWERED,
        "is_error": True,
    }


# -- a request refused as invalid has its own reason ------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
        (422, "invalid_request_error"),
    ],
)
def test_an_invalid_request_is_its_own_reason(
    api: Any, small_session: Path, status: int, kind: str
) -> None:
    api([Error(status, kind, "messages.1.content.0: something we sent wrong")])
    result = run(small_session)
    assert result.exit_code == 0 and result.outcome == "fallback"  # the pipeline goes on
    note = result.receipt.note
    assert f"{INVALID}: messages.1.content.0: something we sent wrong" in note
    assert "unavailable" not in note and f"HTTP {status}" in note
    record = run_json(small_session)
    assert record["version"] == "run-v2"
    assert record["outcome"]["apiFault"] == "invalid-request"
    judge = json.loads((small_session / "judge.json").read_text())
    assert INVALID in judge["note"]


def test_an_outage_is_still_an_outage(api: Any, small_session: Path) -> None:
    api([Error(529, "overloaded_error", "Overloaded")])
    result = run(small_session)
    assert "the model was unavailable: HTTP 529" in result.receipt.note
    assert INVALID not in result.receipt.note
    assert "`judge doctor` says which check fails" in result.receipt.note  # where to look (#33)
    assert run_json(small_session)["outcome"]["apiFault"] == "unavailable"


def _model_over(status: int, body: dict[str, Any]) -> AnthropicModel:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json=body)

    client = anthropic.Anthropic(
        api_key=KEY,
        base_url="http://mock.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(answer)),
    )
    return AnthropicModel(BuiltClient(client))


@pytest.mark.parametrize(
    ("status", "kind", "raised"),
    [
        (400, "invalid_request_error", InvalidRequest),
        (404, "not_found_error", InvalidRequest),
        (413, "request_too_large", InvalidRequest),
        (422, "invalid_request_error", InvalidRequest),
        (409, "invalid_request_error", InvalidRequest),  # the API's word decides
        (401, "authentication_error", ConfigError),  # a wrong key: exit 2
        (403, "permission_error", ConfigError),
        (429, "rate_limit_error", ModelUnavailable),
        (529, "overloaded_error", ModelUnavailable),
    ],
)
def test_the_sdk_error_classification(status: int, kind: str, raised: type[Exception]) -> None:
    body = {"type": "error", "error": {"type": kind, "message": "the API's words"}}
    model = _model_over(status, body)
    params = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    with pytest.raises(raised) as caught:
        model.generate(params, 5.0)
    assert type(caught.value) is raised
    if raised is InvalidRequest:
        assert str(caught.value) == f"{INVALID}: the API's words (HTTP {status} {kind})"


def test_an_audit_refused_as_invalid_says_so_in_run_json(api: Any, small_session: Path) -> None:
    # The audit's model is one the API does not know: every audit request is refused.
    server = api()
    result = run(small_session, cite=True, cite_model="claude-from-the-future-9")
    assert result.outcome == "model-written", result.reason  # the judge is not held up
    audit = run_json(small_session)["citations"]
    assert audit["apiFault"] == "invalid-request"
    assert audit["failure"].startswith(f"{INVALID}: model: claude-from-the-future-9")
    assert "unavailable" not in audit["failure"]
    assert any(r.body.get("model") == "claude-from-the-future-9" for r, _ in server.rejected)


def test_the_batch_summary_says_a_request_was_refused_as_invalid(api: Any, tmp_path: Path) -> None:
    api()
    sessions_under(tmp_path / "root", ["one", "two"])
    result = CliRunner().invoke(
        cli,
        [
            "batch",
            str(tmp_path / "root"),
            "--no-cite",
            "--model",
            "claude-from-the-future-9",
            "--fetch",
            "stored",
            "--max-retries",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if INVALID in line]
    assert {line.split(":")[0].strip() for line in lines} == {"one", "two"}
    assert all("model: claude-from-the-future-9" in line for line in lines)


# -- the strict rules themselves ---------------------------------------------------------------

OK_BODY: dict[str, Any] = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": [text("hi")]}],
}
CC = {"type": "ephemeral"}


def with_(**changes: Any) -> dict[str, Any]:
    return {**OK_BODY, **changes}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "input_schema": {"type": "object"}, **extra}


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("first-turn", with_(messages=[{"role": "assistant", "content": "hi"}]), "first message"),
    (
        "role",
        with_(messages=[{"role": "system", "content": "hi"}]),
        "Input should be 'user' or 'assistant'",
    ),
    ("empty-text", with_(messages=[{"role": "user", "content": [text("")]}]), "non-empty"),
    ("empty-content", with_(messages=[{"role": "user", "content": []}]), "non-empty content"),
    (
        "block-for-role",
        with_(messages=[{"role": "user", "content": [tool_use("Read", {}, id="a")]}]),
        "not permitted in a user message",
    ),
    (
        "extra-key",
        with_(messages=[{"role": "user", "content": [{**text("hi"), "x": 1}]}]),
        "Extra inputs",
    ),
    (
        "unpaired-result",
        with_(
            messages=[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz"}]}]
        ),
        "unexpected `tool_use_id`",
    ),
    (
        "unanswered-use",
        with_(
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("Read", {}, id="a1")]},
                {"role": "user", "content": "and?"},
            ]
        ),
        "without `tool_result`",
    ),
    (
        "result-after-text",
        with_(
            messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("Read", {}, id="a2")]},
                {
                    "role": "user",
                    "content": [text("x"), {"type": "tool_result", "tool_use_id": "a2"}],
                },
            ]
        ),
        "must come before",
    ),
    (
        "five-breakpoints",
        with_(system=[{"type": "text", "text": f"s{i}", "cache_control": CC} for i in range(5)]),
        "maximum of 4 blocks",
    ),
    (
        "ttl-order",
        with_(
            system=[
                {"type": "text", "text": "a", "cache_control": CC},
                {"type": "text", "text": "b", "cache_control": {**CC, "ttl": "1h"}},
            ]
        ),
        "must not come after",
    ),
    ("tool-name", with_(tools=[tool("has space")]), "String should match pattern"),
    ("tool-name-long", with_(tools=[tool("x" * 65)]), "String should match pattern"),
    ("tool-dup", with_(tools=[tool("A"), tool("A")]), "unique"),
    ("model", with_(model="claude-nonesuch"), "model: claude-nonesuch"),
    ("max-tokens", with_(model="claude-haiku-4-5", max_tokens=64_001), "64000"),
    ("temperature", with_(temperature=0.2), "not supported"),
    ("top-k", with_(top_k=5), "not supported"),
    (
        "schema-open-object",
        with_(output_config={"format": {"type": "json_schema", "schema": {"type": "object"}}}),
        "additionalProperties",
    ),
    (
        "schema-bounds",
        with_(
            output_config={
                "format": {"type": "json_schema", "schema": {"type": "number", "minimum": 0}}
            }
        ),
        "'minimum' keyword",
    ),
    ("unknown-top-level", with_(frobnicate=True), "Extra inputs"),
]


@pytest.mark.parametrize(
    ("body", "words"), [(b, w) for _, b, w in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_the_strict_api_refuses(body: dict[str, Any], words: str) -> None:
    refusal = check_messages(body)
    assert refusal is not None and words in refusal.message
    assert refusal.status == (404 if words.startswith("model:") else 400)


@pytest.mark.parametrize(
    "body",
    [
        OK_BODY,
        with_(model="claude-haiku-4-5", temperature=0.5),  # an older model takes it
        with_(tools=[tool("Read", cache_control=CC)], system=[{**text("s"), "cache_control": CC}]),
        with_(
            output_config={
                "format": {
                    "type": "json_schema",
                    "schema": {
                        "type": "object",
                        "properties": {"a": {"type": "string", "enum": ["x"]}},
                        "required": ["a"],
                        "additionalProperties": False,
                    },
                }
            }
        ),
    ],
)
def test_the_strict_api_accepts(body: dict[str, Any]) -> None:
    assert check_messages(body) is None


@pytest.mark.parametrize(
    ("requests", "words"),
    [
        ([{"custom_id": "has space", "params": OK_BODY}], "String should match pattern"),
        ([{"custom_id": "x" * 65, "params": OK_BODY}], "String should match pattern"),
        ([{"custom_id": "a", "params": OK_BODY}] * 2, "unique"),
        ([{"custom_id": "a", "params": {**OK_BODY, "stream": True}}], "stream"),
        ([], "at least 1"),
    ],
)
def test_the_strict_batches_api_refuses(requests: list[Any], words: str) -> None:
    refusal = check_batch({"requests": requests})
    assert refusal is not None and words in refusal.message


def test_the_batch_api_server_errors_a_request_the_api_refuses(tmp_path: Path) -> None:
    from tests.support.batchapiserver import BatchAPI

    with BatchAPI(polls=0) as server:
        client = anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=0)
        bad = {**OK_BODY, "max_tokens": 200_000}
        batch = client.messages.batches.create(
            requests=[
                {"custom_id": "good", "params": OK_BODY},  # type: ignore[typeddict-item]
                {"custom_id": "bad", "params": bad},  # type: ignore[typeddict-item]
            ]
        )
        client.messages.batches.retrieve(batch.id)
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert results["good"].type == "succeeded"
        bad_result = results["bad"]
        assert bad_result.type == "errored"
        assert bad_result.error.error.type == "invalid_request_error"  # type: ignore[union-attr]
        with pytest.raises(anthropic.BadRequestError):
            client.messages.batches.create(
                requests=[{"custom_id": "no good", "params": OK_BODY}]  # type: ignore[typeddict-item]
            )
        client.close()
    assert len(server.rejected) == 2


def test_an_obedient_run_passes_the_strict_api_untouched(api: Any, small_session: Path) -> None:
    server: FakeAPI = api(default=Reply(responder))  # answers the audit and the judge
    result = run(small_session, cite=True)
    assert result.outcome == "model-written", result.reason
    assert server.rejected == [] and len(server.requests) >= 4
    assert any("output_config" in body for body in server.bodies)  # the audit went too


def test_batch_api_an_audit_the_api_refuses_as_invalid_is_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through Message Batches: every audit request errors as invalid (the model is one
    the API does not know), falls back to the ordinary API, is refused again; each
    session's audit says so, the judges still run, and the summary names the refusal."""
    from tests.support.batchapiserver import BatchAPI

    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    with BatchAPI() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        args = ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off"]
        result = CliRunner().invoke(cli, [*args, "--cite-model", "claude-from-the-future-9"])
    assert result.exit_code == 0, result.output
    assert any("model: claude-from-the-future-9" in r.message for r in server.rejected)
    for name in ("a", "b"):
        record = run_json(root / name)
        assert record["outcome"]["kind"] == "model-written"
        assert record["citations"]["apiFault"] == "invalid-request"
        assert record["citations"]["failure"].startswith(f"{INVALID}: model: claude-from")
    lines = [line for line in result.stderr.splitlines() if f"citation audit: {INVALID}" in line]
    assert {line.split(":")[0].strip() for line in lines} == {"a", "b"}
