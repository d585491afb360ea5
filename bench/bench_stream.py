"""Benchmark reading a streamed tool input: the SDK's accumulator against the harness's.

One streamed reply holds a single Write whose input JSON is N MB, sent in `--piece`-byte
`input_json_delta` events, through the real SDK over `httpx2.MockTransport` (no network,
no server). Two readers, side by side in one run:

- `sdk`: `client.messages.stream(...).get_final_message()`, what the judge used before
  issue #22 (each piece is appended to a bytes buffer and the whole buffer re-parsed);
- `harness`: `harness.model.streamed.read_stream`, which keeps the pieces in a list and
  stops at `config.MAX_TOOL_INPUT_CHARS` (the reply's input is then refused, said).

The SDK's reader is given at most `--sdk-limit` seconds per size (a size that takes longer
is shown as `>limit`), since its cost grows with the square of the size.

    python bench/bench_stream.py                     # 0.5, 1, 2, 4 MB and 20 MB, 1 KB pieces
    python bench/bench_stream.py --sizes 1 2 --piece 256
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import anthropic  # noqa: E402
import httpx2  # noqa: E402

from harness import config  # noqa: E402
from harness.model.streamed import read_stream  # noqa: E402

PARAMS: dict[str, Any] = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 32_000,
    "messages": [{"role": "user", "content": "write"}],
}


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def stream_body(megabytes: float, piece: int) -> bytes:
    content = "x" * int(megabytes * 1024 * 1024)
    text = json.dumps({"file_path": "judge.json", "content": content})
    start = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    block = {"type": "tool_use", "id": "toolu_bench", "name": "Write", "input": {}}
    parts = [
        _sse({"type": "message_start", "message": start}),
        _sse({"type": "content_block_start", "index": 0, "content_block": block}),
    ]
    for at in range(0, len(text), piece):
        delta = {"type": "input_json_delta", "partial_json": text[at : at + piece]}
        parts.append(_sse({"type": "content_block_delta", "index": 0, "delta": delta}))
    end = {"stop_reason": "tool_use", "stop_sequence": None}
    parts += [
        _sse({"type": "content_block_stop", "index": 0}),
        _sse({"type": "message_delta", "delta": end, "usage": {"output_tokens": 5}}),
        _sse({"type": "message_stop"}),
    ]
    return b"".join(parts)


def client_for(body: bytes) -> anthropic.Anthropic:
    def handler(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx2.Response(200, content=body, headers=headers)

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return anthropic.Anthropic(api_key="bench", max_retries=0, http_client=http)


def sdk_seconds(body: bytes, limit: float) -> float | None:
    """The SDK's reader, on a daemon thread given `limit` s; None if it had not finished."""
    done: list[float] = []

    def read() -> None:
        started = time.perf_counter()
        with client_for(body).messages.stream(**PARAMS) as events:
            events.get_final_message()
        done.append(time.perf_counter() - started)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(limit)
    return done[0] if done else None


def harness_seconds(body: bytes) -> tuple[float, bool]:
    started = time.perf_counter()
    _, cut = read_stream(client_for(body), dict(PARAMS), 60.0)
    return time.perf_counter() - started, bool(cut)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[0.5, 1, 2, 4, 20])
    parser.add_argument("--piece", type=int, default=1024)
    parser.add_argument("--sdk-limit", type=float, default=60.0)
    args = parser.parse_args()
    print(
        f"streamed Write input in {args.piece}-byte pieces; harness cap "
        f"{config.MAX_TOOL_INPUT_CHARS:,} characters"
    )
    print(f"{'MB':>6} {'sdk s':>10} {'harness s':>10}  harness cut")
    for size in args.sizes:
        body = stream_body(size, args.piece)
        ours, cut = harness_seconds(body)
        theirs = sdk_seconds(body, args.sdk_limit)
        shown = f">{args.sdk_limit:g}" if theirs is None else f"{theirs:.2f}"
        print(f"{size:>6g} {shown:>10} {ours:>10.3f}  {'yes' if cut else 'no'}", flush=True)


if __name__ == "__main__":
    main()
