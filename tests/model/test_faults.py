"""Where the SDK's exception is caught, `ModelUnavailable` gets its kind (`fault`): a
timeout, a connection that failed or broke, or an API unavailable otherwise. The message
each carries is the one it carried before the kind was a field."""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import httpx2
import pytest

from harness.errors import ModelUnavailable
from harness.model.messages import api_fault, sdk_reply, unreadable_reply

REQUEST = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")


def _status(status: int, kind: str, text: str) -> anthropic.APIStatusError:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    response = httpx2.Response(status, json=body, request=REQUEST)
    return anthropic.APIStatusError(f"Error code: {status}", response=response, body=body)


def _connection(cause: BaseException) -> anthropic.APIConnectionError:
    exc = anthropic.APIConnectionError(request=REQUEST)
    exc.__cause__ = cause
    return exc


def _raising(exc: BaseException) -> Callable[[], tuple[object, dict[str, str]]]:
    def call() -> tuple[object, dict[str, str]]:
        raise exc

    return call


@pytest.mark.parametrize(
    ("exc", "fault", "said"),
    [
        (anthropic.APITimeoutError(request=REQUEST), "timeout", "the request timed out"),
        (
            _connection(httpx2.ConnectError("[Errno 111] Connection refused")),
            "connection",
            "could not connect ([Errno 111] Connection refused)",
        ),
        (
            # The server answered and broke off: said as an unreadable reply, a broken connection.
            _connection(
                httpx2.RemoteProtocolError(
                    "peer closed connection without sending complete message body"
                )
            ),
            "connection",
            "the API's reply could not be read as a message (RemoteProtocolError: peer closed "
            "connection without sending complete message body)",
        ),
        (
            _status(529, "overloaded_error", "Overloaded"),
            "unavailable",
            "HTTP 529 overloaded_error: Overloaded",
        ),
        (
            # Its words speak of a timeout; its status and type say an overload.
            _status(529, "overloaded_error", "upstream connect timeout"),
            "unavailable",
            "HTTP 529 overloaded_error: upstream connect timeout",
        ),
        (_status(504, "api_error", "Bad gateway"), "timeout", "HTTP 504 api_error: Bad gateway"),
        (_status(500, "timeout_error", "Late"), "timeout", "HTTP 500 timeout_error: Late"),
    ],
)
def test_sdk_reply_sets_the_kind_where_it_catches_the_sdks_error(
    exc: anthropic.APIError, fault: str, said: str
) -> None:
    with pytest.raises(ModelUnavailable) as caught:
        sdk_reply(_raising(exc))
    assert type(caught.value) is ModelUnavailable
    assert caught.value.fault == fault
    assert caught.value.message == said
    assert caught.value.__cause__ is exc


@pytest.mark.parametrize(
    ("exc", "fault"),
    [
        (httpx2.ReadTimeout("The read operation timed out"), "timeout"),
        (httpx2.ReadError("[Errno 104] Connection reset by peer"), "connection"),
        (httpx2.RemoteProtocolError("incomplete chunked read"), "connection"),
        (ValueError("Expecting value: line 1 column 1"), "unavailable"),
    ],
)
def test_a_reply_that_could_not_be_read_has_the_kind_of_what_stopped_it(
    exc: BaseException, fault: str
) -> None:
    """A stream read past its open raises httpx's own errors, not the SDK's."""
    made = unreadable_reply(exc)
    assert made.fault == fault == api_fault(exc)
    assert made.message.startswith("the API's reply could not be read as a message (")
    with pytest.raises(ModelUnavailable) as caught:
        sdk_reply(_raising(exc))
    assert caught.value.fault == fault


def test_an_unavailable_model_is_unavailable_unless_told_otherwise() -> None:
    assert ModelUnavailable("the API's reply is not a message (got str: '')").fault == "unavailable"
