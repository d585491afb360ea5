"""Many sessions: `judge batch` against the loopback Messages-API fake answering after 300 ms.

Every batch is a real `python -m harness batch` process through the real SDK, against
`tests/apiserver.py`'s FakeAPI running in this process (so the fake's CPU is not the
batch's), answered by a stateless responder (the audit's requests get 0.9 for every
question; the judge reads the findings, writes judge.json and ends). Measured per batch:
wall time, the child's CPU (user + system) and peak RSS from its own rusage (wait4), and
the requests the fake answered, and the "work" wall (first request received to last
reply sent: the batch without its interpreter start-up). The ideal bound is total
request latency ÷ requests in flight: with `--sessions N` and `--cite-requests N`, a
small session does one request at a time (audit round 1, round 2, three judge turns),
so at most N are in flight.

Compared: one `judge run` process on one small session (its CPU), and the README's shell
loop (`for s in …; do judge run "$s" -q; done`) on `--loop` small sessions, scaled per
session (the loop is sequential: 200 sessions would take minutes of pure latency).

Batch-API mode (`--batch-api N`, default 20): N small sessions with `--batch-api` against
`tests/batchapiserver.py` (each batch ends after one poll), and the same sessions through
the ordinary API of the same server: batch submissions against rounds (the audit's two,
then one per agent turn), and the priced cost of both from each run.json's usage, at the
`PRICES` below (assumed list prices per million tokens; a batch request at half price).

    python bench/bench_batch.py                  # 200 small at 8 and 32, 20 large, loop of 10
    python bench/bench_batch.py --small 50 --large 4 --latency 0.1 --json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from apiserver import FakeAPI, Reply  # noqa: E402
from batch.helpers import responder, write_named_session  # noqa: E402
from conftest import FIXTURES  # noqa: E402

KEY = "sk-ant-bench-not-a-real-key"

# $ per million tokens: input, output, cache write, cache read (assumed; only ratios matter).
PRICES = {
    "claude-sonnet-5-5": (3.0, 15.0, 3.75, 0.30),
    "claude-haiku-5-5": (1.0, 5.0, 1.25, 0.10),
}
BATCH_DISCOUNT = 0.5


@dataclass
class Measure:
    label: str
    sessions: int
    in_flight: int
    requests: int
    wall_s: float
    cpu_s: float
    max_rss_mb: float
    ideal_s: float
    code: int
    work_s: float  # first request received to last reply sent (no start-up, no exit)

    @property
    def vs_ideal(self) -> float:
        return self.wall_s / self.ideal_s if self.ideal_s else float("nan")

    @property
    def cpu_per_session_ms(self) -> float:
        return 1000 * self.cpu_s / max(1, self.sessions)


class CountingAPI(FakeAPI):
    """FakeAPI that also counts requests in flight (most at once)."""

    def __init__(self, latency: float) -> None:
        super().__init__(default=Reply(responder), latency=latency)
        self._gauge = threading.Lock()
        self.now = 0
        self.most = 0
        self.first: float | None = None
        self.last = 0.0

    def next_action(self, received: Any) -> Any:
        with self._gauge:
            self.now += 1
            self.most = max(self.most, self.now)
            if self.first is None:
                self.first = time.monotonic()
        action = super().next_action(received)
        latency = self.latency
        threading.Timer(latency, self._done).start()
        return action

    def _done(self) -> None:
        with self._gauge:
            self.now -= 1
            self.last = time.monotonic()


def child(cmd: list[str], env: dict[str, str]) -> tuple[int, float, float, float, str]:
    """(exit code, wall s, CPU s, peak RSS MB, stdout) of one process, from its rusage."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def make_small(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        write_named_session(root / f"small-{i:03d}")


def make_large(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        shutil.copytree(FIXTURES / "large", root / f"large-{i:02d}")


def reset(root: Path) -> None:
    for session in root.iterdir():
        shutil.rmtree(session / ".judge", ignore_errors=True)
        (session / "judge.json").unlink(missing_ok=True)


def batch(
    api: CountingAPI, root: Path, label: str, width: int, cite_requests: int, extra: list[str]
) -> Measure:
    reset(root)
    before = len(api.requests)
    api.most, api.first = 0, None
    cmd = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "-q"]
    cmd += ["--sessions", str(width), "--cite-requests", str(cite_requests), *extra]
    code, wall, cpu, rss, out = child(cmd, api.child_env(KEY))
    requests = len(api.requests) - before
    sessions = len(out.splitlines())
    # The cap on requests in flight: N sessions one request at a time (small), or the
    # shared audit pool plus the sessions in their judge phase (large), as measured.
    in_flight = min(width, sessions) if cite_requests <= width else max(api.most, 1)
    ideal = requests * api.latency / in_flight
    work = api.last - api.first if api.first is not None else wall
    return Measure(label, sessions, in_flight, requests, wall, cpu, rss, ideal, code, work)


def judge_run(api: CountingAPI, session: Path) -> tuple[float, float]:
    shutil.rmtree(session / ".judge", ignore_errors=True)
    (session / "judge.json").unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "harness", "run", str(session), "--fetch", "off", "-q"]
    code, wall, cpu, _, _ = child(cmd, api.child_env(KEY))
    assert code == 0, f"judge run exited {code}"
    return wall, cpu


def shell_loop(api: CountingAPI, root: Path) -> tuple[int, float, float]:
    """The README's loop, as a real shell: (sessions, wall s, CPU s of all its children)."""
    reset(root)
    judge = f"{sys.executable} -m harness"
    script = f'for s in "{root}"/*/; do {judge} run "$s" -q --fetch off >/dev/null; done'
    code, wall, cpu, _, _ = child(["sh", "-c", script], api.child_env(KEY))
    assert code == 0, f"the shell loop exited {code}"
    return len(list(root.iterdir())), wall, cpu


def _cost(usage: dict[str, int] | None, model: str) -> float:
    if not usage:
        return 0.0
    p_in, p_out, p_write, p_read = PRICES[model]
    return (
        usage.get("input_tokens", 0) * p_in
        + usage.get("output_tokens", 0) * p_out
        + usage.get("cache_creation_input_tokens", 0) * p_write
        + usage.get("cache_read_input_tokens", 0) * p_read
    ) / 1e6


def priced(root: Path) -> float:
    """The judge's and the audit's tokens of every session, at list prices."""
    total = 0.0
    for session in root.iterdir():
        if not (session / ".judge" / "run.json").is_file():
            continue
        record = json.loads((session / ".judge" / "run.json").read_text())
        total += _cost(record.get("usage"), "claude-sonnet-5-5")
        total += _cost((record.get("citations") or {}).get("usage"), "claude-haiku-5-5")
    return total


def batch_api_mode(n: int, tmp: Path) -> dict[str, Any]:
    from batchapiserver import BatchAPI

    root = tmp / "batch-api"
    make_small(root, n)
    with BatchAPI(polls=1) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY, PYTHONPATH=str(REPO))
        base = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "-q"]
        base += ["--sessions", str(n)]
        code, wall, cpu, _, _ = child([*base, "--batch-api", "--batch-poll", "0.2"], env)
        assert code == 0, f"judge batch --batch-api exited {code}"
        submissions, batched = api.calls["create"], api.batch_requests()
        direct = api.calls["messages"]
        cost_batch = priced(root) * BATCH_DISCOUNT  # every request went through a batch
        assert direct == 0, "requests fell back to the ordinary API; price them apart"
        reset(root)
        shutil.rmtree(root / ".judge-batch", ignore_errors=True)
        code2, wall2, cpu2, _, _ = child(base, env)
        assert code2 == 0, f"judge batch exited {code2}"
        cost_plain = priced(root)
        plain_requests = api.calls["messages"] - direct
    return {
        "sessions": n,
        "rounds_expected": 2 + 3,
        "batch_submissions": submissions,
        "batch_requests": batched,
        "ordinary_requests_same_run": plain_requests,
        "wall_s": {"batch_api": round(wall, 2), "ordinary": round(wall2, 2)},
        "cpu_s": {"batch_api": round(cpu, 2), "ordinary": round(cpu2, 2)},
        "priced_usd": {"batch_api": round(cost_batch, 4), "ordinary": round(cost_plain, 4)},
        "cost_ratio": round(cost_batch / cost_plain, 3) if cost_plain else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200)
    parser.add_argument("--large", type=int, default=20)
    parser.add_argument("--loop", type=int, default=10, help="small sessions in the shell loop")
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--widths", default="8,32")
    parser.add_argument("--batch-api", type=int, default=20, help="sessions (0: skip)")
    parser.add_argument("--only-batch-api", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    results: list[Measure] = []
    api = CountingAPI(args.latency)
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp, api:
        small, large, loop = Path(tmp, "small"), Path(tmp, "large"), Path(tmp, "loop")
        if args.only_batch_api:
            print(json.dumps(batch_api_mode(args.batch_api, Path(tmp)), indent=2))
            return
        make_small(small, args.small)
        make_large(large, args.large)
        make_small(loop, args.loop)
        for width in widths:
            results.append(batch(api, small, f"{args.small} small", width, width, []))
        for width in widths:
            # The large audit is 620 requests a copy: the shared pool is 4× the sessions.
            results.append(batch(api, large, f"{args.large} large", width, 4 * width, []))
        one_wall, one_cpu = judge_run(api, next(loop.iterdir()))
        loop_n, loop_wall, loop_cpu = shell_loop(api, loop)
        single = batch(api, loop, f"{args.loop} small", 1, 1, [])
        batched = batch_api_mode(args.batch_api, Path(tmp)) if args.batch_api else None
    rows = [
        {
            **asdict(m),
            "vs_ideal": round(m.vs_ideal, 3),
            "work_vs_ideal": round(m.work_s / m.ideal_s, 3) if m.ideal_s else None,
            "cpu_per_session_ms": round(m.cpu_per_session_ms, 1),
        }
        for m in results
    ]
    small_runs = [m for m in results if "small" in m.label]
    summary = {
        "latency_s": args.latency,
        "judge_run_process": {"wall_s": round(one_wall, 2), "cpu_s": round(one_cpu, 3)},
        "cpu_per_session_vs_judge_run": [
            round(m.cpu_s / max(1, m.sessions) / one_cpu, 3) for m in small_runs
        ],
        "shell_loop": {
            "sessions": loop_n,
            "wall_s": round(loop_wall, 2),
            "cpu_s": round(loop_cpu, 2),
            "per_session_wall_s": round(loop_wall / loop_n, 3),
            "per_session_cpu_s": round(loop_cpu / loop_n, 3),
        },
        "batch_same_sessions_one_at_a_time": {
            "wall_s": round(single.wall_s, 2),
            "cpu_s": round(single.cpu_s, 2),
        },
        "shell_loop_vs_batch_wall_per_session": [
            round((loop_wall / loop_n) / (m.wall_s / m.sessions), 1) for m in small_runs
        ],
        "shell_loop_vs_batch_cpu_per_session": [
            round((loop_cpu / loop_n) / (m.cpu_s / m.sessions), 1) for m in small_runs
        ],
        "batch_api": batched,
    }
    if args.json:
        print(json.dumps({"batches": rows, **summary}, indent=2))
        return
    print(f"judge batch against a fake answering after {args.latency * 1000:.0f} ms")
    head = (
        f"{'sessions':<12}{'in flight':>10}{'requests':>10}{'wall s':>9}{'work s':>9}"
        f"{'ideal s':>9}{'× ideal':>9}{'work×':>7}{'CPU s':>8}{'CPU/session':>13}"
        f"{'peak RSS':>10}{'exit':>6}"
    )
    print(head)
    for m in results:
        print(
            f"{m.label:<12}{m.in_flight:>10}{m.requests:>10}{m.wall_s:>9.1f}{m.work_s:>9.1f}"
            f"{m.ideal_s:>9.1f}{m.vs_ideal:>9.2f}{m.work_s / m.ideal_s:>7.2f}{m.cpu_s:>8.1f}"
            f"{m.cpu_per_session_ms:>10.0f} ms"
            f"{m.max_rss_mb:>7.0f} MB{m.code:>6}"
        )
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
