"""The Messages call through the Anthropic SDK, behind our own seam (`ModelAPI`).

Every SDK exception and every reply the SDK could not turn into a message ends here as
`ModelUnavailable` with one line naming the fault and its kind (`api_fault`); a replay
that ran dry is re-raised as the loud `ReplayError` it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message

from harness import redact
from harness.errors import Fault, InvalidRequest, JudgeError, ModelUnavailable
from harness.model.auth import REFUSED_STATUSES, api_error, credentials_refused
from harness.model.client import BuiltClient
from harness.model.seam import ModelReply
from harness.model.streamed import read_stream
from harness.text.jsonstrict import loads_strict
from harness.usage import Usage, checked_usage

__all__ = [
    "INVALID_STATUSES",
    "AnthropicModel",
    "api_fault",
    "api_unavailable",
    "describe_api_error",
    "refused_as_invalid",
    "sdk_reply",
]

# What the API answers a request it will not take as sent (`invalid_request_error`; 404
# `not_found_error` for an unknown model; 413 for one too large): our defect or the
# operator's options, never an outage.
INVALID_STATUSES = (400, 404, 413, 422)
INVALID_PREFIX = "the API refused the request as invalid"


class AnthropicModel:
    """`ModelAPI` over a built SDK client; streamed when `stream` (large outputs)."""

    def __init__(self, built: BuiltClient, *, stream: bool = False) -> None:
        self.built = built
        self.stream = stream

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply:
        client = self.built.client
        # Everything the model is sent passes the one choke point: the first message (with
        # the audit's summary), tool results, re-asks. (The agent loop has made the history
        # one the API accepts: harness.model.seam.sendable_messages.)
        params = redact.outbound(params)

        def call() -> tuple[object, dict[str, str]]:
            if self.stream:
                # Read event by event, in linear time; a tool input past its cap is cut.
                return read_stream(client, params, timeout)
            return create_strict(client, params, timeout), {}

        return sdk_reply(call, self.built.check_replay)


def _no_replay() -> None:
    return None


def sdk_reply(
    call: Callable[[], tuple[object, dict[str, str]]],
    check_replay: Callable[[], None] = _no_replay,
) -> ModelReply:
    """The reply of one SDK call (`call` returns the message and the tool inputs cut while
    streaming) in our types; every SDK exception and every reply that is not a usable
    message becomes `ModelUnavailable` (a refused key: `ConfigError`; a request refused as
    invalid: `InvalidRequest`); our own `JudgeError`s pass as they are. `check_replay`
    re-raises a dry replay the SDK wrapped as a connection error."""
    try:
        message, cut = call()
    except anthropic.APIConnectionError as exc:
        check_replay()  # a dry replay is a loud error, never a fallback
        raise api_unavailable(exc) from exc
    except anthropic.APIStatusError as exc:
        refused = credentials_refused(exc, "the judge")
        if refused is not None:
            raise refused from exc  # a wrong key: exit 2, like a missing one
        if refused_as_invalid(exc):
            raise InvalidRequest(describe_api_error(exc)) from exc
        raise api_unavailable(exc) from exc
    except anthropic.APIError as exc:
        raise api_unavailable(exc) from exc
    except JudgeError:
        raise
    except MemoryError:
        raise  # this process ran out, not the API: the loop says so
    except Exception as exc:
        # Not an APIError, yet raised inside the SDK call: a reply that is not a
        # message (truncated JSON, an HTML page, events out of order) or a stream
        # cut mid-event. For the run it is an unusable reply, never a traceback.
        check_replay()
        raise unreadable_reply(exc) from exc
    return _reply(checked_message(message), cut)


def unreadable_reply(exc: BaseException) -> ModelUnavailable:
    """A reply that could not be read as a message (`exc` raised while reading it)."""
    return ModelUnavailable(_unreadable_text(exc), fault=api_fault(exc))


def api_unavailable(exc: anthropic.APIError, doing: str = "") -> ModelUnavailable:
    """`ModelUnavailable` for an SDK fault: `describe_api_error`'s line (after `doing: `,
    if given) and `api_fault`'s kind."""
    said = describe_api_error(exc)
    return ModelUnavailable(f"{doing}: {said}" if doing else said, fault=api_fault(exc))


# Statuses and error types of an API (or a proxy before it) that gave up waiting.
_TIMEOUT_STATUSES = (408, 504)
_TIMEOUT_KIND = "timeout_error"


def api_fault(exc: BaseException) -> Fault:
    """The kind of an SDK or transport fault: the request timed out (the SDK's
    `APITimeoutError`, httpx's timeouts, HTTP 408/504 or a `timeout_error`), the
    connection failed or broke (`APIConnectionError`, httpx's network and protocol
    errors), or else the API was unavailable."""
    if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
        return "timeout"
    if isinstance(exc, anthropic.APIConnectionError | httpx2.NetworkError):
        return "connection"
    if isinstance(exc, httpx2.RemoteProtocolError):  # a disconnection, or a reply cut short
        return "connection"
    if isinstance(exc, anthropic.APIStatusError) and (
        exc.status_code in _TIMEOUT_STATUSES or api_error(exc)[0] == _TIMEOUT_KIND
    ):
        return "timeout"
    return "unavailable"


def _broke_off(cause: BaseException | None) -> bool:
    """A reply that began and was cut (its body incomplete), not one that never came: httpx
    says the one as a body or chunk left incomplete, the other as a disconnection "without
    sending a response" (both RemoteProtocolError)."""
    if not isinstance(cause, httpx2.RemoteProtocolError):
        return False
    said = str(cause)
    return "message body" in said or "chunked" in said


def _unreadable_text(exc: BaseException) -> str:
    return (
        f"the API's reply could not be read as a message "
        f"({type(exc).__name__}: {str(exc)[:200] or 'no detail'})"
    )


def create_strict(client: Any, params: dict[str, Any], timeout: float | None = None) -> Any:
    """`messages.create`, its body read by the strict JSON reader first: a key given twice
    anywhere in the reply (a tool input's `content`, the `stop_reason`) makes it malformed,
    never silently the last copy. A caller's own client without `with_raw_response` (a
    test's scripted fake) is called as it is. Without `timeout`, the client's own (None
    would mean none at all to the SDK)."""
    timed = {} if timeout is None else {"timeout": timeout}
    raw = getattr(client.messages, "with_raw_response", None)
    if raw is None:
        return client.messages.create(**params, **timed)
    response = raw.create(**params, **timed)
    body = response.http_response.text
    strict = loads_strict(body, max_depth=None, forbid_fractions=False)
    twice = [i for i in strict.issues if i.rule == "duplicate_key"]
    if twice:
        raise ModelUnavailable(
            f"the API's reply is malformed: {twice[0].message()}"
            + (f" (and {len(twice) - 1} more)" if len(twice) > 1 else "")
        )
    return response.parse()


def _reply(message: Message, cut: dict[str, str] | None = None) -> ModelReply:
    # Usage is data from outside: a negative, absurd or non-numeric count is clamped, and
    # said, never trusted (a negative one would refund the run's token budget).
    counts, problems = checked_usage(message.usage)
    if cut:
        problems += [f"tool call {tool_id}: {why}" for tool_id, why in cut.items()]
    return ModelReply(
        content=[block.model_dump(mode="json", exclude_none=True) for block in message.content],
        stop_reason=message.stop_reason,
        model=message.model,
        usage=Usage(**counts),
        # As the API sent it, wrong types and all (the transcript shows them as they came).
        raw=message.model_dump(mode="json", warnings=False),
        cut=dict(cut or {}),
        problems=problems,
    )


def checked_message(response: object, *, needs_usage: bool = True) -> Message:
    """The reply, if it has what the judge's loop and the audit read; else ModelUnavailable
    saying what is wrong. The one check of a reply's shape, for both.

    The SDK builds responses without validating them: a body that is JSON but not a
    message comes back as a Message with missing fields or fields of any type, and a
    non-JSON body as a str. What is read is checked: the content blocks (a text block's
    text, a tool use's id and name), the usage, the model and the stop reason. A block or
    stop reason of a kind this version does not know passes: the readers skip it. Without
    `needs_usage` (the audit, whose counts are clamped) a reply without usage counts 0.
    """
    if not isinstance(response, Message):
        raise ModelUnavailable(
            f"the API's reply is not a message (got {type(response).__name__}: "
            f"{str(response)[:120]!r})"
        )
    content = getattr(response, "content", None)
    blocks_ok = isinstance(content, list) and all(
        isinstance(getattr(b, "type", None), str) for b in content
    )
    if not blocks_ok or (needs_usage and getattr(response, "usage", None) is None):
        raise ModelUnavailable(
            "the API's reply is not a complete message (content or usage is missing)"
        )
    wrong = _wrong_field(response)
    if wrong is not None:
        raise ModelUnavailable(f"the API's reply is malformed: {wrong}")
    return response


# A tool_use id as the API writes it, and accepts back in the history (its documented
# pattern): an id outside it would make the next request one the API refuses.
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _wrong_field(message: Message) -> str | None:
    """The first field of `message` the readers use that has the wrong type, said; or a
    tool use the API would not take back in the next request (its id malformed, its name
    empty; an id given twice is the conversation's fault: harness.model.seam)."""
    if not isinstance(getattr(message, "model", None), str):
        return "its model is not a string"
    if not isinstance(getattr(message, "stop_reason", None), str | None):
        return "its stop_reason is neither a string nor null"
    for n, block in enumerate(message.content, 1):
        kind = block.type
        if kind == "text" and not isinstance(getattr(block, "text", None), str):
            return f"content block {n} (text) has no string text"
        if kind != "tool_use":
            continue
        use_id, name = getattr(block, "id", None), getattr(block, "name", None)
        if not isinstance(use_id, str) or not isinstance(name, str):
            return f"content block {n} (tool_use) has no string id and name"
        if not TOOL_USE_ID.match(use_id) or not name:
            return f"content block {n} (tool_use) has an id or name the API would refuse"
    return None


def refused_as_invalid(exc: BaseException) -> bool:
    """Whether the API refused the request as invalid (not 401/403: those are the key's)."""
    if not isinstance(exc, anthropic.APIStatusError) or exc.status_code in REFUSED_STATUSES:
        return False
    return exc.status_code in INVALID_STATUSES or api_error(exc)[0] == "invalid_request_error"


def describe_api_error(exc: anthropic.APIError) -> str:
    """One line naming the fault, e.g. 'HTTP 529 overloaded_error: Overloaded'; for a
    request refused as invalid, 'the API refused the request as invalid: <the API's
    message> (HTTP 400 invalid_request_error)'."""
    if isinstance(exc, anthropic.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, anthropic.APIConnectionError):
        if _broke_off(exc.__cause__):
            # The server answered and broke off mid-reply (a stream cut mid-event): the
            # same words whether the SDK met it while opening the stream or reading it,
            # which depends only on how fast this process reads (a loaded machine).
            return _unreadable_text(exc.__cause__)  # type: ignore[arg-type]
        return f"could not connect ({exc.__cause__ or exc})"
    if isinstance(exc, anthropic.APIStatusError):
        kind, text = api_error(exc)  # the API's own message, not the SDK's dump of the body
        if refused_as_invalid(exc):
            return f"{INVALID_PREFIX}: {text[:300]} (HTTP {exc.status_code} {kind})".replace(
                " )", ")"
            )
        return f"HTTP {exc.status_code} {kind}: {text[:300]}".replace("  ", " ")
    return f"{type(exc).__name__}: {exc}"
