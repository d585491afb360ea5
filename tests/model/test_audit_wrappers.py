"""The wrappers one audit sends its requests through, composed in one function
(`audit_client`), and the few words a failed request gets on the progress line: from the
error's kind (`ModelUnavailable.fault`, set where harness.model caught the SDK's
exception), never from the words of its message."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cite.client import Reply, Request
from harness.errors import ConfigError, JudgeError, ModelUnavailable, OutOfTime, RateLimited
from harness.model.resolve import Guard, Watched, audit_client, failed_words
from harness.usage import Usage


class _Failing:
    def __init__(self, exc: JudgeError) -> None:
        self.exc = exc

    def ask(self, request: Request) -> Reply:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (
            ModelUnavailable("the request timed out", fault="timeout"),
            "the API did not answer in time",
        ),
        (
            ModelUnavailable("could not connect (x)", fault="connection"),
            "the API could not be reached",
        ),
        (ModelUnavailable("HTTP 529 overloaded_error: Overloaded"), "the API was unavailable"),
        # The message's words say nothing of the kind: an overload whose text speaks of a
        # timeout or a connection is an overload, and a kind said in no words is still said.
        (
            ModelUnavailable("HTTP 529 overloaded_error: upstream connect timeout"),
            "the API was unavailable",
        ),
        (
            ModelUnavailable("HTTP 504 api_error: Bad gateway", fault="timeout"),
            "the API did not answer in time",
        ),
        (ModelUnavailable("no detail", fault="connection"), "the API could not be reached"),
        (
            ConfigError("HTTP 401 authentication_error: invalid x-api-key"),
            "the API refused the key",
        ),
        (
            OutOfTime("the request timed out at the end of the audit's time"),
            "the audit's time ran out",
        ),
        (RateLimited("rate limited: HTTP 429 and 0.5 s left"), "the API kept rate limiting"),
    ],
)
def test_the_words_follow_the_errors_kind(exc: JudgeError, words: str) -> None:
    assert failed_words(exc) == words


def test_the_progress_event_of_a_failed_request_says_its_kind() -> None:
    events: list[dict[str, Any]] = []
    failure = ModelUnavailable("model API unreachable: Connection error.", fault="timeout")
    watched = Watched(_Failing(failure), events.append, None)
    with pytest.raises(ModelUnavailable) as caught:
        watched.ask({"state": {}, "questions": {}})
    assert caught.value is failure
    assert events == [{"event": "audit-failed", "why": "the API did not answer in time"}]


class _Answering:
    def __init__(self) -> None:
        self.asked = 0

    def ask(self, request: Request) -> Reply:
        self.asked += 1
        return Reply(answers={}, usage=Usage(input_tokens=3, output_tokens=2), model="m")


def test_the_audits_client_is_watched_then_guarded() -> None:
    inner, events = _Answering(), []
    client = audit_client(inner, events.append, None)
    assert isinstance(client, Guard)
    client.ask({"state": {}, "questions": {}})
    assert inner.asked == 1 and events == [{"event": "audit-request", "tokens": 5}]
    # A stop said by the caller refuses the request before the inner client sees it.
    stopped = audit_client(inner, None, lambda: "the batch was interrupted")
    with pytest.raises(ModelUnavailable, match="the batch was interrupted"):
        stopped.ask({"state": {}, "questions": {}})
    assert inner.asked == 1


def test_without_progress_or_stop_the_guard_wraps_the_client_itself() -> None:
    failing = _Failing(ModelUnavailable("HTTP 529 overloaded_error: Overloaded"))
    client = audit_client(failing)
    for _ in range(8):
        with pytest.raises(ModelUnavailable):
            client.ask({"state": {}, "questions": {}})
    assert client.tripped is not None and client.tripped.startswith("8 requests in a row")
