"""Where a `judge batch` of small sessions spends its wall time, request by request.

One real `python -m harness batch` process against the bench's loopback fake (the same
`CountingAPI` as bench_batch.py). The fake stamps every request: when its handler got it
(headers and body read), when the reply was flushed, and which session it belongs to (the
claim and the first message name the session). The batch's stdout lines are stamped as
they arrive (a session's end). From these, per session:

- the fake's own latency: reply flushed - request read (the ideal bound assumes 300 ms);
- the client's gaps: request read - previous reply flushed (the session's own work
  between requests: parse, audit bookkeeping, brief, tools, writes; plus both
  processes' waits for a core and for their GIL);
- before the first request (from the previous session's end on that thread, or from
  the batch's first request for the first wave), and after the last reply (to its
  stdout line);
- the batch's start-up (process start to first request) and exit (last line to exit).

    python bench/trace_batch.py --small 200 --sessions 8
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_batch import KEY, CountingAPI, make_large, make_small

NAME = re.compile(r"(?:small-\d{3}|large-\d{2})")


class TracingAPI(CountingAPI):
    """CountingAPI that also stamps when each reply was flushed, and whose request."""

    def __init__(self, latency: float) -> None:
        super().__init__(latency)
        self.stamps: list[tuple[str, float, float, str]] = []  # session, read, sent, kind
        self._local = threading.local()
        handler = self._server.RequestHandlerClass
        api = self

        class Stamped(handler):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:
                super().do_POST()
                received = getattr(api._local, "received", None)
                if received is not None:
                    api._stamp(received, time.monotonic())
                    api._local.received = None

        self._server.RequestHandlerClass = Stamped

    def next_action(self, received: Any) -> Any:
        self._local.received = received
        return super().next_action(received)

    def _stamp(self, received: Any, sent: float) -> None:
        text = json.dumps(received.body)
        found = NAME.search(text)
        kind = (
            "audit"
            if isinstance(received.body, dict) and "output_config" in received.body
            else "judge"
        )
        with self._gauge:
            self.stamps.append((found.group(0) if found else "?", received.at, sent, kind))


def in_flight(stamps: list[tuple[str, float, float, str]]) -> dict[str, Any]:
    """Requests the fake held at once, weighted by time, from first request to last reply."""
    edges = sorted([(got, 1) for _, got, _, _ in stamps] + [(sent, -1) for _, _, sent, _ in stamps])
    level, at, spent = 0, edges[0][0], {}
    for t, step in edges:
        spent[level] = spent.get(level, 0.0) + t - at
        level, at = level + step, t
    total = sum(spent.values()) or 1.0
    mean = sum(k * v for k, v in spent.items()) / total
    return {
        "mean": round(mean, 1),
        "most": max(spent),
        "share_by_level": {
            str(k): round(v / total, 3) for k, v in sorted(spent.items()) if v / total >= 0.01
        },
    }


def run(api: TracingAPI, root: Path, width: int, cite_requests: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "-q"]
    cmd += ["--sessions", str(width), "--cite-requests", str(cite_requests)]
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd, env=api.child_env(KEY), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdout is not None
    ends: dict[str, float] = {}
    for line in proc.stdout:
        ends[json.loads(line)["session"]] = time.monotonic()
    _, _status, usage = os.wait4(proc.pid, 0)
    exited = time.monotonic()
    by: dict[str, list[tuple[float, float, str]]] = {}
    for name, got, sent, kind in api.stamps:
        by.setdefault(name, []).append((got, sent, kind))
    latency, gaps, heads, tails, own = [], [], [], [], []
    gap_at: dict[int, list[float]] = {}
    # Only requests that name their session (the large fixture's audit ones do not).
    order = sorted((n for n in by if n in ends), key=lambda n: by[n][0][0])
    # A session's head: from when a thread became free (the end of the session that ended
    # last before this one's first request, or the batch's first request) to its first.
    end_times = sorted(ends.values())
    for name in order:
        reqs = sorted(by[name])
        latency += [sent - got for got, sent, _ in reqs]
        for i in range(1, len(reqs)):
            gap = reqs[i][0] - reqs[i - 1][1]
            gaps.append(gap)
            gap_at.setdefault(i, []).append(gap)
        start = reqs[0][0]
        freed = max([t for t in end_times if t < start], default=api.first or start)
        heads.append(start - freed)
        tails.append(ends[name] - reqs[-1][1])
        own.append(ends[name] - start - sum(sent - got for got, sent, _ in reqs))
    ms = lambda xs: round(1000 * statistics.median(xs), 1) if xs else None  # noqa: E731
    mean = lambda xs: round(1000 * statistics.fmean(xs), 1) if xs else None  # noqa: E731
    return {
        "sessions": len(order),
        "in_flight": width,
        "requests": len(api.stamps),
        "wall_s": round(exited - started, 2),
        "startup_to_first_request_s": round((api.first or started) - started, 2),
        "work_s": round(api.last - api.first, 2) if api.first else None,
        "last_line_to_exit_s": round(exited - max(ends.values()), 2),
        "in_flight_at_fake": in_flight(api.stamps),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "fake_latency_ms": {
            "median": ms(latency),
            "mean": mean(latency),
            "max": round(1000 * max(latency), 1),
        },
        "client_gap_ms": {"median": ms(gaps), "mean": mean(gaps)},
        "gap_before_request_ms": {
            str(i + 1): {"median": ms(g), "mean": mean(g)} for i, g in gap_at.items()
        },
        "head_ms": {"median": ms(heads), "mean": mean(heads)},
        "tail_ms": {"median": ms(tails), "mean": mean(tails)},
        "session_own_ms": {"median": ms(own), "mean": mean(own), "sum_s": round(sum(own), 2)},
        "load": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--large", type=int, default=0, help="copies of `large` instead")
    parser.add_argument("--cite-requests", type=int, help="default: --sessions (small), 4x (large)")
    parser.add_argument("--latency", type=float, default=0.3)
    args = parser.parse_args()
    api = TracingAPI(args.latency)
    with tempfile.TemporaryDirectory(prefix="trace-batch-") as tmp, api:
        root = Path(tmp, "sessions")
        if args.large:
            make_large(root, args.large)
        else:
            make_small(root, args.small)
        cite = args.cite_requests or (4 * args.sessions if args.large else args.sessions)
        print(json.dumps(run(api, root, args.sessions, cite), indent=2))


if __name__ == "__main__":
    main()
