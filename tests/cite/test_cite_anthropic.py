"""AnthropicCiteClient through the real SDK, over httpx2.MockTransport (no network)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
import pytest

from harness.cite import (
    Choice,
    Criterion,
    Descriptor,
    RequestTooLarge,
    Usage,
    judge,
)
from harness.errors import InvalidRequest, ModelUnavailable
from harness.model.cite_client import (
    CACHE_MIN_TOKENS,
    AnthropicCiteClient,
    answer_fields,
    answer_schema,
)
from harness.model.cite_prompt import estimate_tokens, expand, wire
from tests.support.cite_builders import concerns, screened, source
from tests.support.fakes import altered

Handler = Callable[[httpx2.Request], httpx2.Response]


def sdk(handler: Handler) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def message(payload: object, *, text: str | None = None, stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-5-5",
        "content": [{"type": "text", "text": json.dumps(payload) if text is None else text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "output_tokens": 9,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 1500,
        },
    }


def error(status: int, kind: str, text: str) -> httpx2.Response:
    return httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": text}})


REQUEST = {
    "state": {"quotes": {"q1": {"id": "q1", "text": "x"}}},
    "questions": {
        "q1:supports": {
            "type": "noul",
            "instructions": {"question": "?", "inspect": "`quotes.q1.text`"},
            "criteria": {"true": {"what": "."}, "false": {"what": "."}},
        },
        "severity": {
            "type": "score",
            "instructions": {"question": "?", "compare": []},
            "criteria": ["a", "b", "c"],
        },
        "channel": {
            "type": "choice",
            "instructions": {"question": "?", "compare": []},
            "criteria": {"phone": {"what": "."}, "chat": {"what": "."}},
        },
    },
}


def test_anthropic_client_makes_one_constrained_cached_call() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        answer = {
            "q1_supports": 0.8,
            "severity": 1.5,
            "channel": {"value": "chat", "confidence": 0.7},
        }
        return httpx2.Response(200, json=message(answer))

    reply = AnthropicCiteClient(sdk(handler), model="claude-haiku-5-5", max_tokens=512).ask(REQUEST)
    (body,) = bodies
    assert body["model"] == "claude-haiku-5-5" and body["max_tokens"] == 512
    # Far below any model's minimum cacheable prompt: not marked, since it cannot be cached.
    assert "cache_control" not in body["system"][0]
    assert estimate_tokens(body["system"][0]["text"]) < CACHE_MIN_TOKENS
    # The request written compactly (cite_prompt): everything in it, each wording once.
    assert expand(json.loads(body["messages"][0]["content"])) == REQUEST
    schema = body["output_config"]["format"]
    assert schema["type"] == "json_schema"
    props = schema["schema"]["properties"]
    assert list(props) == ["q1_supports", "severity", "channel"]
    assert schema["schema"]["required"] == list(props)
    assert schema["schema"]["additionalProperties"] is False
    assert props["channel"]["properties"]["value"]["enum"] == ["phone", "chat"]
    # Each field is its key with `:` as `_`, as the system prompt says: none is described.
    assert "description" not in json.dumps(schema)
    assert "Answer each key `a:b` in field `a_b`." in body["system"][0]["text"]
    assert "minimum" not in json.dumps(schema)  # the API ignores bounds; the shell checks them
    assert "tools" not in body

    assert reply.answers == {
        "q1:supports": 0.8,
        "severity": 1.5,
        "channel": {"value": "chat", "confidence": 0.7},
    }
    assert reply.usage == Usage(input_tokens=120, output_tokens=9, cache_read_input_tokens=1500)
    assert reply.model == "claude-haiku-5-5"


def test_a_system_prompt_long_enough_to_cache_is_marked() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=message({"q1_supports": 0.8}))

    long = "Judge the passages with care. " * (CACHE_MIN_TOKENS // 6)
    assert estimate_tokens(long) >= CACHE_MIN_TOKENS
    client = AnthropicCiteClient(sdk(handler), system=long)
    client.ask(
        {
            "state": REQUEST["state"],
            "questions": {"q1:supports": REQUEST["questions"]["q1:supports"]},
        }
    )
    (body,) = bodies
    assert body["system"] == [
        {"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}
    ]


def test_http_413_is_request_too_large() -> None:
    client = AnthropicCiteClient(
        sdk(lambda r: error(413, "request_too_large", "Request exceeds the maximum size"))
    )
    with pytest.raises(RequestTooLarge):
        client.ask(REQUEST)


def test_a_400_saying_the_prompt_is_too_long_is_request_too_large() -> None:
    client = AnthropicCiteClient(
        sdk(
            lambda r: error(
                400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            )
        )
    )
    with pytest.raises(RequestTooLarge):
        client.ask(REQUEST)


def test_any_other_400_is_an_invalid_request_with_the_apis_message() -> None:
    """Not an outage: the audit ends saying the API refused the request as invalid."""
    client = AnthropicCiteClient(sdk(lambda r: error(400, "invalid_request_error", "bad schema")))
    with pytest.raises(InvalidRequest) as caught:
        client.ask(REQUEST)
    assert str(caught.value) == (
        "the API refused the request as invalid: bad schema (HTTP 400 invalid_request_error)"
    )
    assert isinstance(caught.value.__cause__, anthropic.BadRequestError)


@pytest.mark.parametrize("status", [429, 500, 529])
def test_an_overloaded_or_failing_api_is_model_unavailable(status: int) -> None:
    client = AnthropicCiteClient(sdk(lambda r: error(status, "overloaded_error", "Overloaded")))
    with pytest.raises(ModelUnavailable) as caught:
        client.ask(REQUEST)
    assert caught.value.fault == "unavailable"
    assert str(caught.value).startswith(f"model API unavailable: {status} Overloaded")


def _raises(exc: Exception) -> Handler:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise exc

    return handler


@pytest.mark.parametrize(
    ("cause", "fault"),
    [(httpx2.ReadTimeout("timed out"), "timeout"), (httpx2.ConnectError("refused"), "connection")],
)
def test_an_api_that_times_out_or_cannot_be_reached_says_which(
    cause: Exception, fault: str
) -> None:
    """The SDK's timeout is a kind of connection error: the two keep their old words and
    are told apart by the error's `fault`."""
    with pytest.raises(ModelUnavailable) as caught:
        AnthropicCiteClient(sdk(_raises(cause))).ask(REQUEST)
    assert caught.value.fault == fault
    assert str(caught.value).startswith("model API unreachable: ")


def test_judge_halves_a_window_the_api_refuses_with_413() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        asked = json.loads(body["messages"][0]["content"])
        if len(asked["state"].get("quotes", {})) > 1:
            return error(413, "request_too_large", "too large")
        props = body["output_config"]["format"]["schema"]["properties"]
        return httpx2.Response(200, json=message({k: 0.9 for k in props}))

    report = judge(
        source("q1", "q2"),
        concerns(screened()),
        AnthropicCiteClient(sdk(handler)),
        {"concurrency": 1},
    )
    assert [e.round for e in report.errors] == [2]  # round 1 was halved, not an error
    assert report.findings[0].verdict is None  # round 2 reads both passages: 413 is its error
    assert report.findings[0].error is not None
    assert report.findings[0].error.kind == "request_too_large"
    assert report.requests == 4
    assert report.usage.cache_read_input_tokens == 3000


def test_a_reply_that_is_not_json_leaves_every_answer_missing() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=message(None, text="I cannot", stop="refusal"))

    channel = Descriptor(
        name="channel",
        ask=Choice(question="?", criteria={"a": Criterion(what="."), "b": Criterion(what=".")}),
    )
    report = judge(
        source("q1"), concerns(screened(descriptors=[channel])), AnthropicCiteClient(sdk(handler))
    )
    (error_,) = report.errors
    assert error_.kind == "missing_answers" and error_.keys == ["q1:supports"]
    assert report.models == ["claude-haiku-5-5"]


def test_answer_fields_are_safe_and_unique() -> None:
    fields = answer_fields(["a:b", "a_b", "a.b", "x" * 80, "x" * 80 + "y", "ünï"])
    assert list(fields.values()) == ["a:b", "a_b", "a.b", "x" * 80, "x" * 80 + "y", "ünï"]
    for name in fields:
        assert len(name) <= 64
        assert all(ch.isascii() and (ch.isalnum() or ch in "_.-") for ch in name)
    assert len(set(fields)) == 6


def test_answer_schema_maps_fields_back_to_question_keys() -> None:
    schema, names = answer_schema(REQUEST["questions"])  # type: ignore[arg-type]
    assert names == {"q1_supports": "q1:supports", "severity": "severity", "channel": "channel"}
    assert schema["properties"]["severity"]["type"] == "number"


NOUL = REQUEST["questions"]["q1:supports"]


def test_a_field_named_by_the_rule_from_its_key_alone_is_not_described() -> None:
    keys = ["s1-p1:c-a", "confirm:s1-p1", "c-a", "a:b", "a_b", "x:" * 40, "ünï"]
    schema, names = answer_schema({k: NOUL for k in keys})  # type: ignore[misc]
    assert list(names.values()) == keys
    described = {names[f]: p.get("description") for f, p in schema["properties"].items()}
    assert described == {
        "s1-p1:c-a": None,  # s1-p1_c-a
        "confirm:s1-p1": None,
        "c-a": None,
        # `a:b` and `a_b` both read `a_b` by the rule: each field says its own key.
        "a:b": "a:b",
        "a_b": "a_b",
        "x:" * 40: "x:" * 40,  # cut at 64 characters
        "ünï": "ünï",  # a character outside the names' alphabet
    }
    assert schema["required"] == list(names)


def test_the_system_prompt_says_how_a_description_names_a_key_only_when_one_does() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=message({}))

    client = AnthropicCiteClient(sdk(handler))
    plain = {"state": REQUEST["state"], "questions": {"q1:supports": NOUL}}
    odd = {"state": REQUEST["state"], "questions": {"q1:supports": NOUL, "q1 x": NOUL}}
    client.ask(plain)
    client.ask(odd)
    texts = [body["system"][0]["text"] for body in bodies]
    assert "description" not in texts[0] and "description" not in json.dumps(bodies[0])
    assert "or in the field whose description names it" in texts[1]
    fields = bodies[1]["output_config"]["format"]["schema"]["properties"]
    described = {"type": "number", "description": "q1 x"}
    assert fields == {"q1_supports": {"type": "number"}, "q1_x": described}


def test_a_score_field_is_a_number_its_levels_left_to_the_message() -> None:
    schema, _ = answer_schema(REQUEST["questions"])  # type: ignore[arg-type]
    assert schema["properties"]["severity"] == {"type": "number"}
    # The message holds the levels the answer indexes.
    _, user = wire(REQUEST)  # type: ignore[arg-type]
    assert '["a","b","c"]' in user


def test_importing_harness_cite_does_not_import_anthropic() -> None:
    code = "import sys, harness.cite; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_answer_schema_redacts_every_key_reading_the_secrets_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import harness.redact

    secret = "sk-ant-secret-in-a-passage-id"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    reads: list[int] = []
    real = harness.redact.secrets

    def counted() -> list[str]:
        reads.append(1)
        return real()

    monkeypatch.setattr(harness.redact, "secrets", counted)
    question = REQUEST["questions"]["q1:supports"]
    keys = [f"{secret}:supports", f"{secret}:x", "plain", f"a{secret}"]
    schema, names = answer_schema({k: question for k in keys})  # type: ignore[misc]
    assert len(reads) == 1  # one request, one read of the secrets (not two per key)
    assert list(names.values()) == keys  # each field still maps back to its own key
    assert secret not in json.dumps(schema) and secret not in "".join(names)
    assert list(names) == ["_redacted__supports", "_redacted__x", "plain", "a_redacted_"]
    # The same fields as redacting each key on its own; a field the rule does not name from
    # the key the message shows ("[redacted]:supports") is described by that key.
    assert answer_fields(keys) == names
    descriptions = [p.get("description") for p in schema["properties"].values()]
    redacted = [harness.redact.redact(k) for k in keys]
    assert descriptions == [redacted[0], redacted[1], None, redacted[3]]


def _body(**changed: Any) -> bytes:
    """A reply to REQUEST with some fields replaced (a value of None: the field removed)."""
    return altered(message({"q1_supports": 0.9}), **changed)


# Replies with status 200 that are not a usable message, and what the error says. Each is
# this request's fault alone (ModelUnavailable: its answers are missing, the audit goes
# on), never another exception, which would end the whole audit.
UNUSABLE: list[tuple[str, bytes, str]] = [
    ("truncated-json", b'{"id": "msg_01", "type": "mess', "could not be read as a message"),
    ("json-array", b"[1, 2, 3]", "not a message (got list"),
    ("json-not-a-message", b'{"hello": "world"}', "not a complete message"),
    ("no-model", _body(model=None), "its model is not a string"),
    ("model-a-number", _body(model=5), "its model is not a string"),
    ("stop-reason-a-number", _body(stop_reason=5), "its stop_reason is neither"),
    ("text-not-a-string", _body(content=[{"type": "text", "text": 5}]), "no string text"),
    ("text-missing", _body(content=[{"type": "text"}]), "no string text"),
    (
        "tool-use-without-id",
        _body(content=[{"type": "tool_use", "name": "x", "input": {}}]),
        "no string id and name",
    ),
    ("key-twice", _body()[:-1] + b', "model": "other"}', "found a duplicate key"),
]


@pytest.mark.parametrize(("body", "words"), [u[1:] for u in UNUSABLE], ids=[u[0] for u in UNUSABLE])
def test_a_reply_that_is_not_a_usable_message_is_unavailable(body: bytes, words: str) -> None:
    reply = httpx2.Response(200, content=body, headers={"content-type": "application/json"})
    with pytest.raises(ModelUnavailable) as caught:
        AnthropicCiteClient(sdk(lambda r: reply)).ask(REQUEST)
    assert words in str(caught.value)


def test_an_html_page_is_unavailable() -> None:
    page = httpx2.Response(
        200, content=b"<html>Bad gateway</html>", headers={"content-type": "text/html"}
    )
    with pytest.raises(ModelUnavailable):
        AnthropicCiteClient(sdk(lambda r: page)).ask(REQUEST)


@pytest.mark.parametrize("status", [402, 409, 418, 451, 501])
def test_an_undocumented_status_is_unavailable_not_the_audits_end(status: int) -> None:
    client = AnthropicCiteClient(sdk(lambda r: error(status, "api_error", "odd")))
    with pytest.raises(ModelUnavailable) as caught:
        client.ask(REQUEST)
    assert str(caught.value).startswith(f"model API unavailable: {status}")


def test_a_block_of_a_kind_unknown_here_is_skipped_not_read_as_text() -> None:
    body = _body(
        content=[
            {"type": "newer_block", "data": 1},
            {"type": "text", "text": '{"q1_supports": 0.7}'},
        ]
    )
    reply = httpx2.Response(200, content=body, headers={"content-type": "application/json"})
    answered = AnthropicCiteClient(sdk(lambda r: reply)).ask(REQUEST)
    assert answered.answers == {"q1:supports": 0.7}
    assert answered.model == "claude-haiku-5-5"
