"""The shared scripted fake models, one per seam, plus wire-format builders.

`ScriptedAPI` stands at our own seam (`harness.model.seam.ModelAPI`): `generate(params,
timeout)` returns the `ModelReply` of each scripted Messages-API body; the agent loop's
unit tests fake the model here. `ScriptedModel` stands where `anthropic.Anthropic`
stands: `.messages.create(**params)` returns `anthropic.types.Message` objects built from
the same wire JSON, so an SDK-boundary test sees exactly what the SDK would hand it.
"""

from __future__ import annotations

import copy
import itertools
import json
import socket
from collections.abc import Callable
from typing import Any

import anthropic
from anthropic.types import Message

from harness.model.seam import ModelReply
from harness.usage import Usage

_ids = itertools.count(1)

GOOD_JUDGE = {
    "scores": {
        "factualAccuracy": 4,
        "citationAccuracy": 4,
        "completeness": 3,
        "sourceQuality": 4,
        "toolEfficiency": "Unknown",
    },
    "unknowns": ["toolEfficiency"],
    "note": "Claims match their quotes; one facet thin; no tool log.",
    "rubricVersion": "deep-judge-v1",
}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: dict[str, Any], id: str | None = None) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": id or f"toolu_{next(_ids):04d}",
        "name": name,
        "input": tool_input,
    }


def write_judge(document: Any = None, *, raw: str | None = None) -> dict[str, Any]:
    content = raw if raw is not None else json.dumps(document or GOOD_JUDGE, indent=2)
    return tool_use("Write", {"file_path": "judge.json", "content": content})


def altered(body: dict[str, Any], **changed: Any) -> bytes:
    """`body` (a reply) as the JSON the API would send, with some fields replaced (a value
    of None: the field left out): a reply of the wrong shape."""
    return json.dumps({k: v for k, v in {**body, **changed}.items() if v is not None}).encode()


def message(
    *content: dict[str, Any],
    stop_reason: str | None = None,
    model: str = "claude-sonnet-5-5",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A Messages-API response body, as the API returns it."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {
        "id": f"msg_{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 50,
        },
    }


Step = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | BaseException


class _Messages:
    def __init__(self, owner: ScriptedModel) -> None:
        self._owner = owner

    def create(self, **params: Any) -> Message:
        return self._owner._next(params)


class ScriptedModel:
    """Answers each call with the next scripted step: a body, a function of the
    request, or an exception to raise (e.g. an `anthropic.APIError`).

    Strict, as the real API is: a request `apirules.check_messages` refuses raises the
    SDK's error for the API's 400 (or 404) answer, without using a step; it is kept in
    `rejected`."""

    def __init__(
        self, steps: list[Step], *, repeat_last: bool = False, strict: bool = True
    ) -> None:
        self.steps = list(steps)
        self.repeat_last = repeat_last
        self.strict = strict
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.messages = _Messages(self)

    def _next(self, params: dict[str, Any]) -> Message:
        params = copy.deepcopy(params)
        params.pop("timeout", None)
        self.requests.append(params)
        refused = strict_refusal(params) if self.strict else None
        if refused is not None:
            self.rejected.append(refused.message)
            self.requests.pop()
            raise refused
        index = len(self.requests) - 1
        if index >= len(self.steps):
            if not self.repeat_last or not self.steps:
                raise AssertionError(f"ScriptedModel: unexpected call {index + 1}")
            index = len(self.steps) - 1
        step = self.steps[index]
        if isinstance(step, BaseException):
            raise step
        body = step(params) if callable(step) else step
        return Message.model_validate(body)


class ScriptedAPI:
    """A `ModelAPI` answering each call with the next scripted step (as `ScriptedModel`:
    a body, a function of the request, or an exception to raise, e.g. our own
    `ModelUnavailable`). Strict, as the real API is: a request `apirules.check_messages`
    refuses raises `InvalidRequest` (what the SDK boundary makes of the API's 400), without
    using a step; it is kept in `rejected`."""

    def __init__(
        self, steps: list[Step], *, repeat_last: bool = False, strict: bool = True
    ) -> None:
        self._script = ScriptedModel(steps, repeat_last=repeat_last, strict=False)
        self.strict = strict
        self.requests = self._script.requests
        self.rejected: list[str] = []

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply:
        from harness.errors import InvalidRequest

        refused = strict_refusal(copy.deepcopy(params)) if self.strict else None
        if refused is not None:
            self.rejected.append(refused.message)
            raise InvalidRequest(f"the API refused the request as invalid: {refused.message}")
        body = self._script._next(params).model_dump(mode="json", warnings=False)
        usage = {k: int(v or 0) for k, v in body["usage"].items() if k in _USAGE}
        return ModelReply(
            content=[{k: v for k, v in b.items() if v is not None} for b in body["content"]],
            stop_reason=body["stop_reason"],
            model=body["model"],
            usage=Usage(**usage),
            raw=body,
        )


_USAGE = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def api_status_error(status: int, kind: str, text: str = "") -> anthropic.APIStatusError:
    """An SDK status error as the client raises it after its retries."""
    import httpx2

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    body = {"type": "error", "error": {"type": kind, "message": text or kind}}
    response = httpx2.Response(status, json=body, request=request)
    classes: dict[int, type[anthropic.APIStatusError]] = {
        400: anthropic.BadRequestError,
        404: anthropic.NotFoundError,
        413: anthropic.ContentTooLargeError,
        429: anthropic.RateLimitError,
        500: anthropic.InternalServerError,
        529: anthropic.OverloadedError,
    }
    cls = classes.get(status, anthropic.APIStatusError)
    return cls(text or kind, response=response, body=body)


def strict_refusal(params: dict[str, Any]) -> anthropic.APIStatusError | None:
    """The SDK's error for the API's refusal of `params`, or None if the API accepts it."""
    from tests.support.apirules import check_messages

    refusal = check_messages(params)
    if refusal is None:
        return None
    error = api_status_error(refusal.status, refusal.kind, refusal.message)
    return error


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message of a request."""
    last = request["messages"][-1]
    return [b for b in last["content"] if b.get("type") == "tool_result"]


class TableResolver:
    """A getaddrinfo stand-in for live fetching: answers from `table` (host -> IPs), never
    from a real DNS server, and records every host looked up in `calls`."""

    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = table or {}
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> list[tuple[Any, ...]]:
        self.calls.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (
                socket.AF_INET6 if ":" in ip else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (ip, port),
            )
            for ip in self.table[host]
        ]
