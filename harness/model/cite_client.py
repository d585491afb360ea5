"""A `CiteClient` over the Messages API: one request, one call, typed answers.

The request is written for the model by `cite_prompt` (each criteria and question wording
once). The answer is constrained by `output_config.format` (a JSON schema built from the
questions' types, each field named by its key as the system prompt says). The API accepts
only a subset of JSON Schema and ignores numeric bounds, so ranges are left to the shell's
reply check. Imported lazily by `harness.cite`: the SDK is slow to import.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import anthropic

from harness.cite.client import Reply, Request, RequestTooLarge
from harness.config import AUDIT_MAX_OUTPUT_TOKENS, SCREEN_MODEL
from harness.errors import InvalidRequest, JudgeError, ModelUnavailable
from harness.model.auth import credentials_refused
from harness.model.cite_prompt import estimate_tokens, field_name, wire
from harness.model.messages import (
    api_fault,
    checked_message,
    create_strict,
    describe_api_error,
    refused_as_invalid,
    unreadable_reply,
)
from harness.model.streamed import read_stream
from harness.redact import outbound, redactor
from harness.text.jsonstrict import loads_strict
from harness.usage import Usage, checked_usage

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_UNAVAILABLE = {408, 429, 500, 502, 503, 504, 529}
# The smallest minimum cacheable prompt of any current model, in tokens (Anthropic's prompt
# caching documentation: 1,024 for Sonnet 4.5 and the earlier Sonnet and Opus 4 models,
# 2,048 for Haiku 3 and 3.5, 4,096 for Haiku 4.5 and Opus 4.5/4.6). A shorter prefix is
# never cached, whatever it is marked: the generated system prompts (78 to 139 tokens)
# are far below it, so they are sent unmarked; a `system=` long enough is marked.
CACHE_MIN_TOKENS = 1024


def answer_fields(keys: list[str], redact: Callable[[str], str] | None = None) -> dict[str, str]:
    """Schema-safe field names (`^[A-Za-z0-9_.-]{1,64}$`) for question keys, unique.
    `redact`: a `redactor()` already made for this request (the secrets read once)."""
    redact = redact or redactor()
    out: dict[str, str] = {}
    for key in keys:
        # Keys carry passage ids from the session: redacted before they name a field.
        base = _UNSAFE.sub("_", redact(key))[:64] or "q"
        name, n = base, 1
        while name in out:
            n += 1
            suffix = f"_{n}"
            name = base[: 64 - len(suffix)] + suffix
        out[name] = key
    return out


def _schema(question: Mapping[str, Any], key: str | None) -> dict[str, Any]:
    """One answer field's schema, its description naming `key` unless None. A noul's
    range is in the system prompt and a score's levels are its criteria in the message
    (the answer is a level's index), so neither is repeated here."""
    kind = question["type"]
    if kind == "choice":
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "value": {"type": "string", "enum": list(question["criteria"])},
                "confidence": {"type": "number"},
            },
            "required": ["value", "confidence"],
            "additionalProperties": False,
        }
    else:
        schema = {"type": "number"}
    if key is not None:
        schema["description"] = key
    return schema


def answer_schema(
    questions: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON schema of one reply, and its field name -> question key map.

    The system prompt tells the model a key's field is the key with `:` as `_`
    (`cite_prompt.field_name`). A field so named, and named so from no other key, has no
    description; any other field (a key cut at 64 characters, one with another character
    outside the names' alphabet, two keys read alike) is described by its key."""
    # The secrets are read once per request, not twice per question key (a large
    # session's audit asks thousands of keys).
    redact = redactor()
    names = answer_fields(list(questions), redact)
    shown = {key: redact(key) for key in questions}  # the keys as the message shows them
    read = Counter(field_name(k) for k in shown.values())
    properties = {}
    for name, key in names.items():
        plain = name == field_name(shown[key]) and read[name] == 1
        properties[name] = _schema(questions[key], None if plain else shown[key])
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(names),
        "additionalProperties": False,
    }
    return schema, names


def described(schema: Mapping[str, Any]) -> bool:
    """Whether an `answer_schema` describes any field (the system prompt then says how
    a description names its key)."""
    return any("description" in field for field in schema["properties"].values())


def _too_large(exc: anthropic.APIStatusError) -> bool:
    if exc.status_code == 413:
        return True
    message = (exc.api_message or str(exc)).lower()
    return exc.status_code == 400 and "prompt is too long" in message


class AnthropicCiteClient:
    """Asks Claude one request per call. Safe to share across threads (the SDK client is)."""

    def __init__(
        self,
        client: anthropic.Anthropic,
        model: str = SCREEN_MODEL,
        max_tokens: int = AUDIT_MAX_OUTPUT_TOKENS,
        system: str | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._max_tokens = max_tokens
        self._system = system

    def params(self, request: Request) -> tuple[dict[str, Any], dict[str, str]]:
        """The Messages-API parameters for `request`, and the answer-field -> key map
        (the Message Batches API sends exactly these, see harness.batch.batchapi)."""
        schema, names = answer_schema(request["questions"])
        # Each criteria and question wording once (cite_prompt): the same request, shorter;
        # the instructions explain the forms and answer types the message uses.
        system, user = wire(request, described(schema))
        text = self._system if self._system is not None else system
        block: dict[str, Any] = {"type": "text", "text": text}
        if estimate_tokens(text) >= CACHE_MIN_TOKENS:
            # Only a prefix that some model can cache is marked (see CACHE_MIN_TOKENS).
            block["cache_control"] = {"type": "ephemeral"}
        params = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "system": [block],
            # Through the one choke point: redacted, no lone surrogate.
            "messages": [{"role": "user", "content": outbound(user)}],
            "output_config": {"format": {"type": "json_schema", "schema": schema}},
        }
        return params, names

    # `ask` takes `accepted` (harness.model.resolve.FirstAlone sends its first request so).
    tells_accepted = True

    def ask(self, request: Request, accepted: Callable[[], None] | None = None) -> Reply:
        """One request, one reply. With `accepted`, the request is sent streamed and
        `accepted()` is called as soon as the API has accepted it (its status and headers
        are in; the answer is still being generated): the same request and reply, with
        the key's acceptance known about one answer's time sooner."""
        params, names = self.params(request)
        try:
            if accepted is None:
                message = create_strict(self._client, params)
            else:
                message = self._streamed(params, accepted)
        except anthropic.APIStatusError as exc:
            refused = credentials_refused(exc, "the citation audit")
            if refused is not None:
                raise refused from exc  # a wrong key ends the audit and the run: exit 2
            if _too_large(exc):
                raise RequestTooLarge(str(exc)) from exc
            if exc.status_code not in _UNAVAILABLE and refused_as_invalid(exc):
                raise InvalidRequest(describe_api_error(exc)) from exc  # ends the audit
            # Any other status (a 5xx, 429, or one the API does not document) is this
            # request's fault alone, as in the judge's seam: its answers are missing.
            raise ModelUnavailable(f"model API unavailable: {exc}", fault=api_fault(exc)) from exc
        except anthropic.APIConnectionError as exc:
            # A timeout too (the SDK's APITimeoutError is a connection error): api_fault
            # tells the two apart.
            raise ModelUnavailable(f"model API unreachable: {exc}", fault=api_fault(exc)) from exc
        except (JudgeError, MemoryError):
            raise
        except Exception as exc:
            # Raised inside the SDK call, yet no status or connection fault: a reply that
            # is not a message (truncated JSON, an HTML page, a JSON array). This
            # request's answers are missing; the others' stand (as in the judge's seam).
            raise unreadable_reply(exc) from exc
        return self.reply(message, names)

    def _streamed(self, params: dict[str, Any], accepted: Callable[[], None]) -> Any:
        """The reply of `params` sent streamed; a refusal or a fault before the stream
        opens is raised as the SDK raises it (`ask` reads it as for any request). Once
        the stream is open the key was accepted: a stream that then breaks (an `error`
        event, a cut, a timeout, events out of order) is an unavailable reply."""
        opened = False

        def on_accepted() -> None:
            nonlocal opened
            opened = True
            accepted()

        try:
            message, _ = read_stream(self._client, params, None, accepted=on_accepted)
        except ModelUnavailable:
            raise
        except Exception as exc:
            if not opened:
                raise
            raise unreadable_reply(exc) from exc
        return message

    @staticmethod
    def reply(message: Any, names: Mapping[str, str]) -> Reply:
        """The engine's reply from a Messages-API message answering `params`.

        A refusal (`stop_reason: refusal`) answers nothing, whatever text came with it: the
        shell then records every question of the request as missing, an error, never a
        verdict. Usage is data from outside: clamped into range, each correction said in
        the reply's `problems` (the audit reports them once). A reply that is not a usable
        message (`checked_message`) is `ModelUnavailable`: this request's answers are
        missing, the audit goes on."""
        message = checked_message(message, needs_usage=False)
        counts, problems = checked_usage(getattr(message, "usage", None))
        refused = message.stop_reason == "refusal"
        return Reply(
            answers={} if refused else _answers(message.content, names),
            usage=Usage(**counts),
            model=message.model,
            problems=tuple(problems),
        )


def _answers(content: list[Any], names: Mapping[str, str]) -> dict[str, object]:
    # A reply that is cut short is not JSON: return no answers and let the shell record
    # every question as missing, rather than guess. One that is JSON but not strict JSON
    # (a key given twice, NaN, a lone surrogate) is malformed: every question gets a value
    # no question can have, so the shell rejects the reply whole as malformed.
    text = "".join(b.text for b in content if b.type == "text")  # str: checked_message
    strict = loads_strict(text, forbid_fractions=False)
    if not strict.parsed:
        return {}
    if strict.issues or not isinstance(strict.value, dict):
        return dict.fromkeys(names.values(), MALFORMED)
    data = strict.value
    return {key: data[name] for name, key in names.items() if name in data}


# The answer given to every question of a malformed reply: no question's type allows it.
MALFORMED = "(a malformed reply: not strict JSON)"
