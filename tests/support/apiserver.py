"""A loopback Messages-API server for end-to-end and fault tests through the real SDK.

`FakeAPI` listens on 127.0.0.1 (an ephemeral port) in a background thread and answers
each `POST /v1/messages` with the next scripted `Action`: a reply (a message body, or a
function of the request, sent as JSON or, when the request says `"stream": true`, as
server-sent events), an error status with headers, a connection reset, a slow reply, raw
bytes, or an event stream cut in the middle. Point the SDK at it with
`ANTHROPIC_BASE_URL=api.url`. It records every request (path, headers, JSON body).

`judge_responder` is a stateless, obedient judge: from the conversation alone it decides
the next step (read findings, write judge.json, end with the receipt), so any number of
concurrent runs, in threads or in other processes, can share one server.

Strict by default: a request the real API refuses (`apirules.check_messages`: roles,
alternation, block types, tool_use/tool_result pairing, empty or whitespace-only text,
cache_control count and TTL order, tool names, the structured-output schema subset,
model ids and output limits, sampling parameters) is answered as the API answers it, a
400 `invalid_request_error` (404 `not_found_error` for an unknown model) with the API's
wording, before any scripted action is used; it is kept in `rejected`. `strict=False`
answers every request with the script (a test of our own refusal paths).

Run it as a program for processes that need a server of their own:
`python -m tests.support.apiserver [--latency S]`, from the checkout, prints its URL on
stdout and serves until killed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.model.replay import message_to_sse
from tests.support.apirules import Refusal, check_messages
from tests.support.fakes import GOOD_JUDGE, message, text, tool_use, write_judge
from tests.support.paths import REPO

Body = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class LoopbackServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` with the listen backlog a wide client needs.

    socketserver's default backlog is 5. A batch with hundreds of sessions in flight opens
    hundreds of connections at once; those beyond the backlog were dropped by the kernel
    (ListenOverflows in /proc/net/netstat: 22 in one run of 512) and retried by the client
    a second later, a delay the real API's edge does not add. Linux caps it at somaxconn.
    """

    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that closed its connection (the SDK dropping a kept-alive socket, a run
        that ended) is no fault of the server: socketserver printed its traceback to
        sys.stderr, where a CliRunner in another thread captured it as the command's."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)


# -- actions -------------------------------------------------------------------


@dataclass
class Reply:
    """200 with a message body (or a function of the request body returning one)."""

    body: Body
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Error:
    """An API error status with the API's error body, e.g. 429 with retry-after."""

    status: int
    kind: str
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Reset:
    """Close the connection with a TCP reset before answering."""


@dataclass
class Slow:
    """Wait `seconds`, then do `then` (the client may have given up by then)."""

    seconds: float
    then: Action


@dataclass
class Raw:
    """Exactly these bytes as the body, with this status and content type."""

    content: bytes
    status: int = 200
    content_type: str = "application/json"


@dataclass
class CutStream:
    """A 200 event stream that stops after `keep` bytes of the full stream of `body`."""

    body: Body
    keep: int


@dataclass
class Drip:
    """A 200 that keeps the connection busy: `piece` every `interval` seconds for
    `seconds` (an SSE ping for a stream, a space before the JSON otherwise), then `body`.
    Each piece comes well within any read timeout, so only a total deadline stops it.
    `until`, when given, ends the drip early once it returns true (checked each piece):
    an answer held until something else has happened, however slow the machine."""

    body: Body
    seconds: float
    interval: float = 0.1
    until: Callable[[], bool] | None = None


@dataclass
class Pieces:
    """A 200 event stream of one tool_use whose input JSON (`input_json`, as text) comes in
    `piece`-character deltas, each its own chunk, then the rest of the message: how a
    model streams a long tool input. Ends early if the client stops reading."""

    name: str
    input_json: str
    piece: int = 1024
    id: str = "toolu_pieces_1"


@dataclass
class Routed:
    """`then` for a request `when(request)` holds (e.g. the audit's), else `otherwise`."""

    when: Callable[[dict[str, Any]], bool]
    then: Action
    otherwise: Action


Action = Reply | Error | Reset | Slow | Raw | CutStream | Drip | Pieces | Routed


# -- the obedient judge ----------------------------------------------------------

RECEIPT = 'Done. {"wroteJudge": true, "note": "scored"}'


def _last_user_blocks(request: dict[str, Any]) -> list[dict[str, Any]]:
    last = request["messages"][-1]
    content = last["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def judge_responder(request: dict[str, Any]) -> dict[str, Any]:
    """Read the findings folder, then write a good judge.json, then end with the receipt."""
    results = [b for b in _last_user_blocks(request) if b.get("type") == "tool_result"]
    if not results:
        return message(tool_use("Read", {"file_path": "findings"}))
    content = str(results[-1].get("content", ""))
    if "judge.json written" in content:
        return message(text(RECEIPT))
    return message(write_judge(GOOD_JUDGE))


# -- the server ------------------------------------------------------------------

DEFAULT_MODELS: dict[str, int | None] = {"claude-sonnet-5-5": 64_000, "claude-haiku-5-5": 64_000}


def is_audit(request: dict[str, Any]) -> bool:
    """A citation-audit request (structured output), not a judge turn."""
    return "output_config" in request


def cite_answer(request: dict[str, Any], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """An audit reply giving every question of `request` the answer 0.9 (`usage` as given:
    a hostile one too)."""
    fields = request["output_config"]["format"]["schema"]["properties"]
    return {
        "id": "msg_cite",
        "type": "message",
        "role": "assistant",
        "model": request["model"],
        "content": [{"type": "text", "text": json.dumps(dict.fromkeys(fields, 0.9))}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 5} if usage is None else usage,
    }


def model_info(model_id: str, max_tokens: int | None) -> dict[str, Any]:
    """The Models endpoint's body for one model."""
    info: dict[str, Any] = {
        "type": "model",
        "id": model_id,
        "display_name": model_id.replace("-", " ").title(),
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
    }
    if max_tokens is not None:
        info["max_tokens"] = max_tokens
    return info


def child_env(url: str, key: str, **extra: str) -> dict[str, str]:
    """The environment for a `judge` process talking to the server at `url` with `key`.

    None of this process's ANTHROPIC_* variables are passed on; the checkout is on
    PYTHONPATH; `extra` adds or overrides variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=key, PYTHONPATH=str(REPO))
    env.update(extra)
    return env


class FakeAPI:
    """Loopback Messages API answering with scripted actions, in order.

    When the script runs out, `default` answers (by default `judge_responder`); with
    `default=None` an exhausted script answers 500 and notes the overrun in `overruns`.
    `latency` delays every answer.
    """

    def __init__(
        self,
        actions: list[Action] | None = None,
        *,
        default: Action | None = Reply(judge_responder),  # noqa: B008
        latency: float = 0.0,
        strict: bool = True,
        models: dict[str, int | None] | None = None,
        key: str | None = None,
        batches: Error | None = None,
        models_action: Action | None = None,
    ) -> None:
        # GET endpoints (`judge doctor`): `models` maps each model id the Models endpoint
        # knows to its output limit (`max_tokens`; None: not stated), by default the
        # project's two; `key`, when given, is the only key a GET accepts (else 401);
        # `batches` answers `GET /v1/messages/batches` (default: an empty list).
        self.models = dict(DEFAULT_MODELS if models is None else models)
        self.key = key
        self.batches = batches
        # Answers every `GET /v1/models/…` in place of the model's info when set (a drip,
        # a redirect: `judge doctor`'s hostile endpoints).
        self.models_action = models_action
        self.actions = list(actions or [])
        self.default = default
        self.latency = latency
        self.strict = strict
        self.requests: list[Received] = []
        self.rejected: list[tuple[Received, Refusal]] = []  # refused by the API's rules
        self.overruns = 0
        self._lock = threading.Lock()
        self._server = LoopbackServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def child_env(self, key: str, **extra: str) -> dict[str, str]:
        """The environment for a `judge` process talking to this server (`child_env`)."""
        return child_env(self.url, key, **extra)

    def start(self) -> FakeAPI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_action(self, received: Received) -> Action | None:
        messages = received.path.split("?")[0] == "/v1/messages"
        refusal = check_messages(received.body) if self.strict and messages else None
        with self._lock:
            self.requests.append(received)
            if refusal is not None:
                self.rejected.append((received, refusal))
                return Error(refusal.status, refusal.kind, refusal.message)
            if self.actions:
                return self.actions.pop(0)
            if self.default is None:
                self.overruns += 1
            return self.default


def serve_with_env(monkeypatch: Any, key: str) -> Iterator[Callable[..., FakeAPI]]:
    """Body of an `api` fixture: start FakeAPIs on demand, point the SDK's env vars at
    the latest, close them all at the end."""
    servers: list[FakeAPI] = []

    def start(actions: list[Any] | None = None, **kwargs: Any) -> FakeAPI:
        server = FakeAPI(actions, **kwargs).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        return server

    yield start
    for server in servers:
        server.close()


def _handler_for(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY: the headers and the body are two writes; with Nagle the body
        # waits for the client's delayed ACK of the headers (about 40 ms a reply).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            action = api.next_action(received)
            if api.latency:
                time.sleep(api.latency)
            if action is None:
                action = Error(500, "api_error", "the fake API's script ran out")
            # A client that gave up (a timeout test) leaves nothing to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._do(action, body if isinstance(body, dict) else {})

        def do_GET(self) -> None:
            """The Models endpoint and the Message Batches list (nothing else is GET)."""
            headers = {k.lower(): v for k, v in self.headers.items()}
            with api._lock:
                api.requests.append(Received(self.path, headers, None))
            path = self.path.split("?", 1)[0].rstrip("/")
            if api.key is not None and headers.get("x-api-key") != api.key:
                action: Action = Error(401, "authentication_error", "invalid x-api-key")
            elif path.startswith("/v1/models/"):
                model_id = path.removeprefix("/v1/models/")
                if api.models_action is not None:
                    action = api.models_action
                elif model_id in api.models:
                    action = Reply(model_info(model_id, api.models[model_id]))
                else:
                    action = Error(404, "not_found_error", f"model: {model_id}")
            elif path == "/v1/messages/batches":
                empty = {"data": [], "has_more": False, "first_id": None, "last_id": None}
                action = api.batches or Reply(empty)
            else:
                action = Error(404, "not_found_error", f"no GET {path} here")
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._do(action, {})

        def _do(self, action: Action, request: dict[str, Any]) -> None:
            if isinstance(action, Routed):
                self._do(action.then if action.when(request) else action.otherwise, request)
            elif isinstance(action, Slow):
                time.sleep(action.seconds)
                self._do(action.then, request)
            elif isinstance(action, Reset):
                # SO_LINGER 0: close() sends RST instead of FIN.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
            elif isinstance(action, Error):
                payload = {
                    "type": "error",
                    "error": {"type": action.kind, "message": action.message or action.kind},
                }
                self._send(action.status, json.dumps(payload).encode(), headers=action.headers)
            elif isinstance(action, Raw):
                self._send(action.status, action.content, action.content_type)
            elif isinstance(action, Drip):
                self._send_drip(action, request)
            elif isinstance(action, Pieces):
                self._send_pieces(action)
            elif isinstance(action, CutStream):
                stream = b"".join(message_to_sse(_body(action.body, request)))
                self._send_cut(stream[: action.keep])
            else:
                answer = _body(action.body, request)
                if request.get("stream"):
                    stream = b"".join(message_to_sse(answer))
                    self._send(200, stream, "text/event-stream", action.headers)
                else:
                    self._send(200, json.dumps(answer).encode(), headers=action.headers)

        def _send(
            self,
            status: int,
            content: bytes,
            content_type: str = "application/json",
            headers: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(content)))
            self.send_header("request-id", "req_fake")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(content)
            self.wfile.flush()

        def _send_cut(self, partial: bytes) -> None:
            # Chunked, then the connection drops without the terminating chunk.
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            if partial:
                self.wfile.write(f"{len(partial):x}\r\n".encode() + partial + b"\r\n")
            self.wfile.flush()
            self.close_connection = True

        def _send_drip(self, action: Drip, request: dict[str, Any]) -> None:
            stream = bool(request.get("stream"))
            answer = _body(action.body, request)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream" if stream else "application/json")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            piece = b'event: ping\ndata: {"type": "ping"}\n\n' if stream else b" "
            end = time.monotonic() + action.seconds
            while time.monotonic() < end and not (action.until and action.until()):
                self._chunk(piece)
                time.sleep(min(action.interval, max(0.0, end - time.monotonic())))
            rest = b"".join(message_to_sse(answer)) if stream else json.dumps(answer).encode()
            self._chunk(rest)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _send_pieces(self, action: Pieces) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            body = message(tool_use(action.name, {}, id=action.id))
            start = {**body, "content": [], "stop_reason": None}
            block = {"type": "tool_use", "id": action.id, "name": action.name, "input": {}}
            self._chunk(_sse({"type": "message_start", "message": start}))
            self._chunk(_sse({"type": "content_block_start", "index": 0, "content_block": block}))
            text_, size = action.input_json, action.piece
            for at in range(0, len(text_), size):
                delta = {"type": "input_json_delta", "partial_json": text_[at : at + size]}
                self._chunk(_sse({"type": "content_block_delta", "index": 0, "delta": delta}))
            end = {"stop_reason": "tool_use", "stop_sequence": None}
            for event in (
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": end, "usage": {"output_tokens": 20}},
                {"type": "message_stop"},
            ):
                self._chunk(_sse(event))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _body(body: Body, request: dict[str, Any]) -> dict[str, Any]:
    return body(request) if callable(body) else body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--lenient", action="store_true", help="Do not enforce the API's rules.")
    args = parser.parse_args()
    api = FakeAPI(latency=args.latency, strict=not args.lenient).start()
    print(api.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        api.close()


if __name__ == "__main__":
    main()
