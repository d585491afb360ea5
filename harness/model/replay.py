"""Record and replay Messages-API traffic at the HTTP layer, through the real SDK.

A replay file is JSON Lines, one Messages-API response body per line, exactly
as the API returns it, consumed in order. Streaming requests get the same
message re-encoded as server-sent events, so both client paths are exercised.
A replay that runs dry or cannot answer a request fails loudly: a test or a
demo must never fall back silently.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2

from harness.errors import ReplayError
from harness.redact import artifact_text, register

MESSAGES_PATH = "/v1/messages"


META_KEY = "judgeReplay"
BOUND_FIELDS = ("sessionDigest", "briefDigest", "model")


def replay_meta(session_digest: str, brief_digest: str, model: str) -> dict[str, Any]:
    """The first line `--record` writes: what the recording was made for."""
    return {
        META_KEY: 1,
        "sessionDigest": session_digest,
        "briefDigest": brief_digest,
        "model": model,
    }


def read_meta(path: Path) -> dict[str, Any] | None:
    """The metadata line of a replay file, or None for a file without one (older format)."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    first = json.loads(line)
                    return first if isinstance(first, dict) and META_KEY in first else None
    except OSError as exc:
        raise ReplayError(f"cannot read replay file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # not UTF-8, not JSON: load_replay says where
        raise ReplayError(f"replay file {path} does not start with a JSON line ({exc})") from exc
    return None


def check_binding(path: Path, expected: dict[str, Any]) -> None:
    """Refuse a replay recorded for another session, brief or model (`--replay-any` skips
    this check). A file without metadata is refused too: nothing says what it is for."""
    found = read_meta(path)
    if found is None:
        raise ReplayError(
            f"replay file {path} has no metadata line (it predates recordings that say what "
            "they were made for); re-record it with --record, or pass --replay-any to replay "
            "it anyway"
        )
    wrong = [k for k in BOUND_FIELDS if found.get(k) != expected.get(k)]
    if wrong:
        detail = "; ".join(
            f"{k}: this run has {expected.get(k)!s}, the replay was recorded for {found.get(k)!s}"
            for k in wrong
        )
        raise ReplayError(
            f"replay file {path} was recorded for another session, brief or model ({detail}); "
            "replay it on the session it was recorded for, re-record it, or pass --replay-any"
        )


def load_replay(path: Path) -> list[dict[str, Any]]:
    """Read a replay file; every line must be a Messages-API message object (after an
    optional first metadata line, see `replay_meta`)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReplayError(f"cannot read replay file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ReplayError(f"replay file {path} is not UTF-8 text") from exc
    bodies: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            body = json.loads(line)
        except (ValueError, RecursionError) as exc:  # an integer too long to convert too
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
            raise ReplayError(f"{path}:{number}: not a JSON line ({why})") from exc
        if not bodies and isinstance(body, dict) and META_KEY in body:
            continue  # the metadata line: checked by check_binding, not a response
        if not isinstance(body, dict) or body.get("type") not in ("message", "error"):
            raise ReplayError(
                f"{path}:{number}: expected a Messages-API response body "
                '({"type": "message", ...} or an {"type": "error", ...} body)'
            )
        bodies.append(body)
    return bodies


class ReplayTransport(httpx2.BaseTransport):
    """Answers POST /v1/messages from recorded bodies, in order."""

    def __init__(self, bodies: list[dict[str, Any]], source: str = "replay") -> None:
        self._bodies = list(bodies)
        self._source = source
        self._lock = threading.Lock()
        self.calls = 0
        self.failure: ReplayError | None = None

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.calls += 1
            call = self.calls
            if not request.url.path.endswith(MESSAGES_PATH):
                self.failure = ReplayError(
                    f"{self._source}: call {call} asked for {request.method} {request.url.path}, "
                    "which a replay cannot answer"
                )
            elif call > len(self._bodies):
                self.failure = ReplayError(
                    f"{self._source}: call {call} has no recorded response "
                    f"(the replay holds {len(self._bodies)}); re-record it or extend the file"
                )
            if self.failure is not None:
                # The SDK wraps transport exceptions; callers check `failure` to stay loud.
                raise self.failure
            body = self._bodies[call - 1]
        if body.get("type") == "error":
            status = int(body.get("status", 500)) if isinstance(body.get("status"), int) else 500
            payload = {k: v for k, v in body.items() if k != "status"}
            return httpx2.Response(status, json=payload)
        if _wants_stream(request):
            return httpx2.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content=b"".join(message_to_sse(body)),
            )
        return httpx2.Response(200, json=body)


def _wants_stream(request: httpx2.Request) -> bool:
    try:
        return bool(json.loads(request.content or b"{}").get("stream"))
    except (json.JSONDecodeError, AttributeError):
        return False


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def message_to_sse(message: dict[str, Any]) -> Iterator[bytes]:
    """Re-encode a complete message as the Messages API's stream of events."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 0}
    yield _event("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message.get("content") or []):
        # Each block opens empty and receives its content as one delta; others open whole.
        opening, delta = block, None
        if block.get("type") == "text":
            opening = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        elif block.get("type") == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        if delta is not None:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {
                "stop_reason": message.get("stop_reason"),
                "stop_sequence": message.get("stop_sequence"),
            },
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield _event("message_stop", {"type": "message_stop"})


class RecordingTransport(httpx2.BaseTransport):
    """Passes requests to the real API and appends each response body to a replay file.

    Only response bodies are saved (never request headers), and the API key is
    scrubbed from them in case an error body echoes it.
    """

    def __init__(
        self,
        inner: httpx2.BaseTransport,
        path: Path,
        secret: str | None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self._inner = inner
        self._path = path
        register(secret)
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        first = "" if meta is None else artifact_text(meta, indent=None) + "\n"
        path.write_text(first, encoding="utf-8")

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        if not request.url.path.endswith(MESSAGES_PATH):
            return response
        body = response.read()
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or an integer too long to convert
            document = None
        if isinstance(document, dict) and document.get("type") in ("message", "error"):
            if document.get("type") == "error":
                document = {**document, "status": response.status_code}
            line = artifact_text(document, indent=None)  # redacted (this secret too)
            with self._lock, self._path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
        return httpx2.Response(
            response.status_code, headers=response.headers, content=body, request=request
        )

    def close(self) -> None:
        self._inner.close()
