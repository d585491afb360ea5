"""The one choke point for this process's secrets.

Every artifact the harness writes (run.json, citations.json, judge.json written by the
fallback, transcripts, recordings), every text bound for a model (the first message with
the audit's summary, tool results, citation requests) and every line it prints passes
through `redact` (text) or `redact_data` (a JSON-like document) on its way out.

The secrets are read when asked for, not once: the environment's ANTHROPIC_API_KEY and
ANTHROPIC_AUTH_TOKEN, plus the credentials of any client `register_client` was given (a
caller may build its own client with a key that is not in the environment). Values
shorter than 8 characters are not secrets worth the noise (and would mangle text).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from typing import Any

REDACTED = "[redacted]"
ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
MIN_LENGTH = 8

_registered: set[str] = set()
_lock = threading.Lock()


def register(*values: object) -> None:
    """Add credentials this process holds outside the environment."""
    with _lock:
        _registered.update(v for v in values if isinstance(v, str) and len(v) >= MIN_LENGTH)


def register_client(client: object) -> None:
    """Add an SDK client's credentials (`api_key`, `auth_token`)."""
    register(getattr(client, "api_key", None), getattr(client, "auth_token", None))


def secrets() -> list[str]:
    """The secrets of this process, longest first (a key that contains another goes first)."""
    found = {v for v in (os.environ.get(name) for name in ENV_VARS) if v and len(v) >= MIN_LENGTH}
    with _lock:
        found |= _registered
    return sorted(found, key=len, reverse=True)


def _forms() -> list[str]:
    """Every form to replace, in order: each secret (longest first), then its JSON-escaped
    form where that differs."""
    forms: list[str] = []
    for secret in secrets():
        forms.append(secret)
        escaped = json.dumps(secret)[1:-1]
        if escaped != secret:
            forms.append(escaped)
    return forms


def _replace(text: str, forms: list[str]) -> str:
    for form in forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def redact(text: str) -> str:
    """`text` with every secret (and its JSON-escaped form) replaced by `[redacted]`."""
    return _replace(text, _forms())


def redactor() -> Callable[[str], str]:
    """`redact` with the secrets read once, for the many strings of one document (a
    citation request's question keys): the same result as `redact` on each."""
    forms = _forms()
    return lambda text: _replace(text, forms)


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like document (dicts, lists, strings) with every string redacted."""
    forms = _forms()  # the secrets are read once per document, not once per string
    if not forms:
        return value
    return _walk(value, lambda text: _replace(text, forms))


def _walk(value: Any, each: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return each(value)
    if isinstance(value, dict):
        return {
            _walk(k, each) if isinstance(k, str) else k: _walk(v, each) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_walk(v, each) for v in value]
    return value


def artifact_text(document: Any, *, indent: int | None = 2) -> str:
    """A document as the JSON an artifact holds: redacted, ASCII-safe (so a lone surrogate,
    U+2028 or a control character in a note can neither break the write nor a line), one
    line when `indent` is None."""
    return redact(json.dumps(document, indent=indent, ensure_ascii=True))


def artifact_bytes(document: Any, *, indent: int | None = 2) -> bytes:
    """`artifact_text` plus a final newline, encoded for the disk."""
    return (artifact_text(document, indent=indent) + "\n").encode("ascii")


def safe_bytes(text: str) -> bytes:
    """Redacted text as UTF-8 for a file; a lone surrogate becomes its `\\udXXX` escape
    instead of an encoding error (inside a JSON string that is the same value)."""
    return redact(text).encode("utf-8", "backslashreplace")


__all__ = [
    "REDACTED",
    "artifact_bytes",
    "artifact_text",
    "clean",
    "outbound",
    "redact",
    "redact_data",
    "redactor",
    "register",
    "register_client",
    "safe_bytes",
    "secrets",
]


def _unsurrogate(text: str) -> str:
    # A lone surrogate (from a name that is not UTF-8, or a `\ud800` escape) can be neither
    # encoded nor sent: show it as its escape, as ASCII-safe JSON would.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def clean(text: str) -> str:
    """Redacted text with no lone surrogate: safe for any writer and any model."""
    return _unsurrogate(redact(text))


def outbound(value: Any) -> Any:
    """A model-bound document (request parameters, a citation request): every string
    redacted and free of lone surrogates."""
    forms = _forms()  # once per document: a request holds thousands of strings
    return _walk(value, lambda text: _unsurrogate(_replace(text, forms)))
