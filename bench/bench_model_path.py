"""The CPU of a small session's model requests alone, at N sessions in flight.

What a `judge batch` session costs at 512 in flight is mostly its five model requests
(docs/batch.md, "A session's own CPU, without the crowd"). This bench measures that part
with nothing of the run around it, so that a target for the whole session can be set
against it: whatever the run does besides, a session cannot cost less than its requests.

1. One small session (`tests/support/batch_helpers.write_named_session`) is judged by a
   real `python -m harness run` against the loopback Messages API
   (`tests/support/apiserver.py`, the batch bench's stateless responder); the request
   bodies the fake received are kept, in order: the audit's two rounds (the first
   streamed) and the judge's three turns.
2. A child process sends those bodies again, as N sessions at once, each its five in
   order, against the same fake answering every request after `--latency` seconds (so
   the N sessions' requests overlap as in a batch); below 64 in flight, each of the N
   sends its session's requests again until 64 sessions are sent, so that a few
   one-off costs do not weigh on few sessions. Its CPU (user + system, its own rusage,
   after one warm-up session) divided by the sessions sent is the figure. Four ways of sending:

   - `sdk-threads`: the `anthropic` SDK alone, one thread per session (as `judge batch`
     runs sessions): `messages.with_raw_response.create(...).parse()`, a streamed body's
     events iterated to the end;
   - `sdk-loop`: the SDK's `AsyncAnthropic`, every session a task on one event loop (no
     thread hands the GIL to another);
   - `run-path`: the run's own model seam, `harness.model.messages.AnthropicModel` over
     `build_client` (redaction of what is sent, the strict read of the reply, our reply
     types), one thread per session;
   - `http-threads`: no SDK: httpx2 posts each body as JSON with the headers the SDK
     sends and reads the reply as JSON, one thread per session (what the requests would
     cost were they sent without the SDK).

The client keeps N connections alive (`ClientSettings.connections`, as a batch of N
sessions asks), so no request waits for, or opens, a connection of another's.

    python bench/bench_model_path.py                   # 8 and 512 in flight, 0.5 s replies
    python bench/bench_model_path.py --in-flight 512 --repeat 3 --json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.apiserver import FakeAPI, Reply  # noqa: E402
from tests.support.batch_helpers import responder, write_named_session  # noqa: E402

KEY = "sk-ant-bench-not-a-real-key"
MODES = ("sdk-threads", "sdk-loop", "run-path", "http-threads")
AT_LEAST = 64  # sessions sent per measurement, whatever the number in flight


def capture(tmp: Path) -> list[dict[str, Any]]:
    """The request bodies of one small session's `judge run`, in the order sent."""
    session = write_named_session(tmp / "small-000")
    with FakeAPI(default=Reply(responder)) as api:
        env = api.child_env(KEY, PYTHONPATH=str(REPO))
        cmd = [sys.executable, "-m", "harness", "run", str(session), "--fetch", "off", "-q"]
        done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the capturing run failed ({done.returncode}): {done.stderr[-600:]}")
        bodies = [b for b in api.bodies if isinstance(b, dict) and "messages" in b]
    if len(bodies) != 5:
        raise SystemExit(f"expected a small session's 5 requests, the fake received {len(bodies)}")
    return bodies


def measure(bodies: Path, mode: str, width: int, latency: float) -> dict[str, Any]:
    """One child sending `width` sessions' requests in `mode`; its CPU per session."""
    with FakeAPI(default=Reply(responder), latency=latency) as api:
        env = api.child_env(KEY, PYTHONPATH=str(REPO))
        cmd = [sys.executable, __file__, "--worker", mode, str(width), str(bodies)]
        done = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{mode} at {width} failed ({done.returncode}): {done.stderr[-800:]}")
        row: dict[str, Any] = json.loads(done.stdout)
    row["load"] = round(os.getloadavg()[0], 2)
    return row


# -- the child -----------------------------------------------------------------


Usage = tuple[float, float, int]  # CPU s, system s, context switches


def _usage() -> Usage:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, r.ru_stime, r.ru_nvcsw + r.ru_nivcsw


def _connections(width: int) -> int:
    """Connections kept alive for `width` sessions at once (and a few to spare): none
    waits for, or opens, a connection of another's."""
    return width + 8


def _limits(width: int) -> Any:
    """`_connections(width)` as httpx2 pool limits, for the ways not through `build_client`."""
    import httpx2

    return httpx2.Limits(
        max_connections=_connections(width), max_keepalive_connections=_connections(width)
    )


def _split(body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    params = {k: v for k, v in body.items() if k != "stream"}
    return params, bool(body.get("stream"))


def _sdk_threads(bodies: list[dict[str, Any]], width: int) -> Callable[[], None]:
    import anthropic

    client = anthropic.Anthropic(
        max_retries=0, http_client=anthropic.DefaultHttpxClient(limits=_limits(width))
    )

    def session() -> None:
        for body in bodies:
            params, stream = _split(body)
            if stream:
                for _ in client.messages.create(**params, stream=True):
                    pass
            else:
                client.messages.with_raw_response.create(**params).parse()

    return session


def _http_threads(bodies: list[dict[str, Any]], width: int) -> Callable[[], None]:
    """No SDK: each body posted by httpx2 as JSON, each reply read as JSON (a streamed
    one read whole), with the headers the SDK sends."""
    import anthropic
    import httpx2

    sdk = anthropic.Anthropic(max_retries=0)
    headers = {**sdk.default_headers, **sdk.auth_headers, "content-type": "application/json"}
    client = httpx2.Client(base_url=str(sdk.base_url), limits=_limits(width), timeout=60)

    def session() -> None:
        for body in bodies:
            data = json.dumps(body).encode()
            reply = client.post("/v1/messages", content=data, headers=headers)
            if body.get("stream"):
                reply.read()  # the events, read whole
            else:
                json.loads(reply.content)

    return session


def _run_path(bodies: list[dict[str, Any]], width: int) -> Callable[[], None]:
    from harness.model.client import ClientSettings, build_client
    from harness.model.messages import AnthropicModel

    built = build_client(ClientSettings(max_retries=0, connections=_connections(width)))
    plain, streamed = AnthropicModel(built), AnthropicModel(built, stream=True)

    def session() -> None:
        for body in bodies:
            params, stream = _split(body)
            (streamed if stream else plain).generate(params, 60.0)

    return session


def _threads(session: Callable[[], None], width: int, rounds: int) -> None:
    def sessions() -> None:
        for _ in range(rounds):
            session()

    threads = [threading.Thread(target=sessions) for _ in range(width)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _sdk_loop(bodies: list[dict[str, Any]], width: int, rounds: int) -> dict[str, Any]:
    """The loop's CPU of `width` sessions at once, `rounds` each, its client warmed by one
    session first."""
    import asyncio

    import anthropic

    async def main() -> dict[str, Any]:
        client = anthropic.AsyncAnthropic(
            max_retries=0, http_client=anthropic.DefaultAsyncHttpxClient(limits=_limits(width))
        )

        async def session(rounds: int = 1) -> None:
            for body in bodies * rounds:
                params, stream = _split(body)
                if stream:
                    async for _ in await client.messages.create(**params, stream=True):
                        pass
                else:
                    (await client.messages.with_raw_response.create(**params)).parse()

        await session()
        before = _usage()
        await asyncio.gather(*(session(rounds) for _ in range(width)))
        after = _usage()
        return _row(before, after, width * rounds, len(bodies))

    return asyncio.run(main())


def _row(before: Usage, after: Usage, sessions: int, n: int) -> dict[str, Any]:
    cpu, system, switches = (a - b for a, b in zip(after, before, strict=True))
    return {
        "sessions": sessions,
        "cpu_ms_per_session": round(1000 * cpu / sessions, 2),
        "cpu_ms_per_request": round(1000 * cpu / (sessions * n), 3),
        "system_ms_per_request": round(1000 * system / (sessions * n), 3),
        "switches_per_request": round(switches / (sessions * n), 1),
    }


def worker(mode: str, width: int, bodies_file: Path) -> None:
    bodies = json.loads(bodies_file.read_text())
    rounds = -(-AT_LEAST // width)
    if mode == "sdk-loop":
        row = _sdk_loop(bodies, width, rounds)
    else:
        made = {"sdk-threads": _sdk_threads, "run-path": _run_path, "http-threads": _http_threads}
        session = made[mode](bodies, width)
        session()  # warm: imports, the first connection
        before = _usage()
        _threads(session, width, rounds)
        row = _row(before, _usage(), width * rounds, len(bodies))
    print(json.dumps({"mode": mode, "in_flight": width, **row}))


# -- the parent ----------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--in-flight", default="8,512", help="sessions at once, e.g. 8,512")
    parser.add_argument("--latency", type=float, default=0.5, help="the fake's reply delay, s")
    parser.add_argument("--repeat", type=int, default=2, help="rounds, each mode once a round")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        mode, width, bodies = args.worker
        worker(mode, int(width), Path(bodies))
        return
    with tempfile.TemporaryDirectory() as tmp:
        bodies = Path(tmp) / "bodies.json"
        bodies.write_text(json.dumps(capture(Path(tmp))))
        rows = []
        for width in (int(w) for w in args.in_flight.split(",")):
            for n in range(args.repeat):  # each round in the order opposite the one before
                for mode in MODES if n % 2 == 0 else MODES[::-1]:
                    row = measure(bodies, mode, width, args.latency)
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"latency_s": args.latency, "rows": rows}, indent=2))
        return
    print(f"a small session's 5 model requests, replies after {args.latency} s; medians")
    print(f"{'in flight':>9}  {'mode':<12} {'CPU ms/session':>15} {'ms/request':>11}", end="")
    print(f" {'switches':>9}")
    for width in sorted({r["in_flight"] for r in rows}):
        for mode in MODES:
            mine = [r for r in rows if r["in_flight"] == width and r["mode"] == mode]
            per_session = statistics.median(r["cpu_ms_per_session"] for r in mine)
            per_request = statistics.median(r["cpu_ms_per_request"] for r in mine)
            switches = statistics.median(r["switches_per_request"] for r in mine)
            print(f"{width:>9}  {mode:<12} {per_session:>15.2f} {per_request:>11.3f}", end="")
            print(f" {switches:>9.1f}")


if __name__ == "__main__":
    main()
