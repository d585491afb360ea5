"""A loopback Messages API that also speaks the Message Batches endpoints.

`POST /v1/messages` answers with `responder` (the ordinary API). The batch endpoints:
`POST /v1/messages/batches` (create), `GET /v1/messages/batches/{id}` (retrieve:
`in_progress` for the first `polls` retrieves, then `ended` with a `results_url`),
`GET /v1/messages/batches/{id}/results` (JSON Lines, in reverse order, as the API does
not promise order), `POST /v1/messages/batches/{id}/cancel` (ends it, every request
`canceled`). `fate(custom_id, params)` decides each request's result: `succeeded` (the
message `responder` gives), `errored`, `expired` or `unusable` (succeeded, its
message's model null: a reply no reader can use). `hold` (an Event) keeps every batch
`in_progress` while it is clear (with `hold_from=n`, only the n-th batch created and
those after it). `latency` delays each ordinary `POST /v1/messages` answer;
`refuse_create` (an HTTP status) answers every create with that error. Every call is
counted in `calls` by kind.

Hostile results files, for the waits of the batch: `drip=(size, interval)` sends each
results file `size` bytes at a time, `interval` s apart; `huge_line=n` makes the first
result line of each results file a succeeded message whose text is `n` bytes (streamed,
never held whole); `stall=s` sends a results file's headers, then nothing for `s` s
before its body. Each such reply gives up after `give_up` s, as soon as the client has
gone (a write fails), or when the server is closed (its stall and its pauses end at once):
no loop of the server outlives its test. `slow_replies` counts those in flight.

Strict by default, as the real API is (`apirules`): an ordinary request it would refuse
is answered 400 `invalid_request_error` (404 for an unknown model); a create whose
`custom_id`s break the pattern `^[a-zA-Z0-9_-]{1,64}$` or repeat, or whose params ask to
stream, is refused 400; and a request whose params the API would refuse ends `errored`
with the API's `invalid_request_error` and message. Every refusal is kept in `rejected`.

Run as a program (`python -m tests.support.batchapiserver [--polls N]`) it prints its URL and
serves until killed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.apirules import Refusal, check_batch, check_messages
from tests.support.apiserver import LoopbackServer
from tests.support.batch_helpers import responder
from tests.support.fakes import message, text

_ids = itertools.count(1)


class BatchAPI:
    def __init__(
        self,
        *,
        polls: int = 1,
        fate: Callable[[str, dict[str, Any]], str] | None = None,
        hold: threading.Event | None = None,
        hold_from: int = 1,
        latency: float = 0.0,
        refuse_create: int = 0,
        strict: bool = True,
        drip: tuple[int, float] | None = None,
        huge_line: int = 0,
        stall: float = 0.0,
        give_up: float = 120.0,
    ) -> None:
        self.strict = strict
        self.drip = drip
        self.huge_line = huge_line
        self.stall = stall
        self.give_up = give_up
        self.rejected: list[Refusal] = []
        self.latency = latency
        self.refuse_create = refuse_create  # an HTTP status every create answers with
        self.polls = polls
        self.hold_from = hold_from
        self.fate = fate or (lambda cid, params: "succeeded")
        self.hold = hold
        self.calls: Counter[str] = Counter()
        self.batches: dict[str, dict[str, Any]] = {}
        self.messages: list[dict[str, Any]] = []  # bodies sent to the ordinary API
        self.lock = threading.Lock()
        self.slow_replies = 0  # dripped, huge or stalled results files being sent
        self.closed = threading.Event()  # set by close(): every slow reply stops waiting
        self._server = LoopbackServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def child_env(self, key: str, **extra: str) -> dict[str, str]:
        """The environment for a `judge` process talking to this server (`child_env`)."""
        from tests.support.apiserver import child_env

        return child_env(self.url, key, **extra)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> BatchAPI:
        self._thread.start()
        return self

    def close(self) -> None:
        self.closed.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> BatchAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batch_requests(self) -> int:
        return sum(len(b["requests"]) for b in self.batches.values())

    # -- the batch objects --------------------------------------------------------------

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"msgbatch_{next(_ids):06d}"
        with self.lock:
            self.batches[batch_id] = {
                "requests": body["requests"],
                "retrieves": 0,
                "status": "in_progress",
                "created": datetime.now(UTC),
                "results": None,
                "ordinal": len(self.batches) + 1,
            }
        return self.view(batch_id)

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            batch["retrieves"] += 1
            held = self.hold is not None and not self.hold.is_set()
            held = held and batch["ordinal"] >= self.hold_from
            if batch["status"] == "in_progress" and batch["retrieves"] > self.polls and not held:
                self._end(batch_id, batch)
        return self.view(batch_id)

    def cancel(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            if batch["status"] != "ended":
                batch["results"] = [
                    {"custom_id": r["custom_id"], "result": {"type": "canceled"}}
                    for r in batch["requests"]
                ]
                batch["status"] = "ended"
        return self.view(batch_id)

    def _end(self, batch_id: str, batch: dict[str, Any]) -> None:
        results = []
        for n, request in enumerate(batch["requests"]):
            cid, params = request["custom_id"], request["params"]
            refusal = check_messages(params, where=f"requests.{n}.params.") if self.strict else None
            kind = "invalid" if refusal is not None else self.fate(cid, params)
            if refusal is not None:
                self.rejected.append(refusal)
                result: dict[str, Any] = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": refusal.kind, "message": refusal.message},
                    },
                }
            elif kind == "succeeded":
                result = {"type": "succeeded", "message": responder(params)}
            elif kind == "unusable":  # succeeded, with a message whose model is no string
                result = {"type": "succeeded", "message": {**responder(params), "model": None}}
            elif kind == "errored":
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": "api_error", "message": "Internal server error"},
                    },
                }
            else:
                result = {"type": kind}
            results.append({"custom_id": cid, "result": result})
        batch["results"] = list(reversed(results))
        batch["status"] = "ended"

    def view(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        counts = Counter(r["result"]["type"] for r in batch["results"] or [])
        ended = batch["status"] == "ended"
        created = batch["created"]
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": batch["status"],
            "request_counts": {
                "processing": 0 if ended else len(batch["requests"]),
                "succeeded": counts["succeeded"],
                "errored": counts["errored"],
                "canceled": counts["canceled"],
                "expired": counts["expired"],
            },
            "created_at": created.isoformat(),
            "expires_at": (created + timedelta(hours=24)).isoformat(),
            "ended_at": datetime.now(UTC).isoformat() if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }


def _handler(api: BatchAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # TCP_NODELAY: the headers and the body are two writes; with Nagle the body
        # waits for the client's delayed ACK of the headers (about 40 ms a reply).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, document: Any) -> None:
            self._raw(status, json.dumps(document).encode(), "application/json")

        def _raw(self, status: int, content: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def _parts(self) -> list[str]:
            return self.path.split("?")[0].strip("/").split("/")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.loads(raw) if raw else {}
            parts = self._parts()
            if parts == ["v1", "messages"]:
                api.calls["messages"] += 1
                with api.lock:
                    api.messages.append(body)
                refusal = check_messages(body) if api.strict else None
                if refusal is not None:
                    with api.lock:
                        api.rejected.append(refusal)
                    self._json(refusal.status, refusal.body())
                    return
                time.sleep(api.latency)
                self._json(200, responder(body))
            elif parts == ["v1", "messages", "batches"]:
                api.calls["create"] += 1
                if api.refuse_create:
                    kind = "authentication_error" if api.refuse_create == 401 else "api_error"
                    error = {"type": kind, "message": "refused by the fake"}
                    self._json(api.refuse_create, {"type": "error", "error": error})
                    return
                refusal = check_batch(body) if api.strict else None
                if refusal is not None:
                    with api.lock:
                        api.rejected.append(refusal)
                    self._json(refusal.status, refusal.body())
                    return
                self._json(200, api.create(body))
            elif len(parts) == 5 and parts[4] == "cancel" and parts[3] in api.batches:
                api.calls["cancel"] += 1
                self._json(200, api.cancel(parts[3]))
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

        def do_GET(self) -> None:
            parts = self._parts()
            if len(parts) == 4 and parts[:3] == ["v1", "messages", "batches"]:
                if parts[3] not in api.batches:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error"}})
                    return
                api.calls["retrieve"] += 1
                self._json(200, api.retrieve(parts[3]))
            elif len(parts) == 5 and parts[4] == "results" and parts[3] in api.batches:
                api.calls["results"] += 1
                lines = api.batches[parts[3]]["results"] or []
                content = "".join(json.dumps(x) + "\n" for x in lines).encode()
                if api.drip is None and not api.huge_line and not api.stall:
                    self._raw(200, content, "application/binary")
                    return
                pieces = _huge_first(lines, api.huge_line) if api.huge_line else [content]
                self.send_response(200)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(sum(len(p) for p in pieces)))
                self.end_headers()
                self.wfile.flush()
                with api.lock:
                    api.slow_replies += 1
                try:
                    self._send_slowly(pieces)
                finally:
                    with api.lock:
                        api.slow_replies -= 1
            else:
                self._json(404, {"type": "error", "error": {"type": "not_found_error"}})

        def _send_slowly(self, pieces: list[Any]) -> None:
            """The body after the stall, in drips: given up after `give_up` s, when the
            client has gone, or when the server is closed, whichever comes first."""
            until = time.monotonic() + api.give_up
            if api.closed.wait(min(api.stall, api.give_up)):
                self.close_connection = True
                return
            size, pause = api.drip or (1 << 16, 0.0)
            try:
                for piece in pieces:
                    for start in range(0, len(piece), size):
                        if time.monotonic() > until:
                            return
                        self.wfile.write(piece[start : start + size])
                        self.wfile.flush()
                        if pause and api.closed.wait(pause):
                            self.close_connection = True
                            return
            except OSError:  # the client has gone
                self.close_connection = True

    return Handler


class _Run:
    """`n` bytes of `x`, produced a piece at a time (a huge line is never held whole)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self.n)
        return b"x" * max(0, stop - start)


def _huge_first(lines: list[dict[str, Any]], size: int) -> list[Any]:
    """The results file with its first line's message text `size` bytes long."""
    if not lines:
        return [b""]
    first = json.loads(json.dumps(lines[0]))
    first["result"] = {"type": "succeeded", "message": message(text("@@HUGE@@"))}
    head, tail = json.dumps(first).encode().split(b"@@HUGE@@")
    rest = "".join(json.dumps(x) + "\n" for x in lines[1:]).encode()
    return [head, _Run(size), tail + b"\n" + rest]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=1)
    args = parser.parse_args()
    api = BatchAPI(polls=args.polls).start()
    print(api.url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
