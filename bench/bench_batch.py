"""Many sessions: `judge batch` against the loopback Messages-API fake answering after 300 ms.

Every batch is a real `python -m harness batch` process through the real SDK, against
`tests/support/apiserver.py`'s FakeAPI running in this process (so the fake's CPU is not the
batch's), answered by a stateless responder (the audit's requests get 0.9 for every
question; the judge reads the findings, writes judge.json and ends). Measured per batch:
wall time, the child's CPU (user + system) from its own rusage (wait4), its own peak RSS
(sampled: bench/peak.py says why not wait4's), and
the requests the fake answered, and the "work" wall (first request received to last
reply sent: the batch without its interpreter start-up). The ideal bound is total
request latency ÷ requests in flight: with `--sessions N` and `--cite-requests N`, a
small session does one request at a time (audit round 1, round 2, three judge turns),
so at most N are in flight.

The fake's own per-reply latency is measured as a client sees it (sequential requests
through httpx2, as the SDK sends them, before each batch) and the ideal bound uses that
figure, not the nominal `--latency`. Also shown, labelled apart, a critical-path bound
for small sessions: a session holds one of the N slots for its 5 sequential requests, so
S sessions need ceil(S / N) waves of 5 replies at least (200 at 32: 7 waves, not 6.25).
And for every batch, a CPU bound: the child's CPU seconds. The batch is one Python
process, whose Python runs on one core at a time (the GIL), so its wall cannot be shorter
than its CPU time (about 1 % of that CPU, the sockets' system calls, could overlap);
shown with the CPU per request, and the wall against the largest of the bounds.
Every measurement records the load average; `--repeat R` runs each batch R times and
reports medians; `--harness DIR,DIR` runs the children on other checkouts' `harness`
(e.g. an export of an older commit, `git archive C harness briefs schemas`), one after
the other for each repetition, so the same fake and load compare them, in the opposite
order every other repetition (a later run on the same sessions peaks higher).

Compared: one `judge run` process on one small session (its CPU), and the README's shell
loop (`for s in …; do judge run "$s" -q; done`) on `--loop` small sessions, scaled per
session (the loop is sequential: 200 sessions would take minutes of pure latency).

Batch-API mode (`--batch-api N`, default 20): N small sessions with `--batch-api` against
`tests/support/batchapiserver.py` (each batch ends after one poll), and the same sessions through
the ordinary API of the same server: batch submissions against rounds (the audit's two,
then one per agent turn), and the priced cost of both from each run.json's usage, at the
`PRICES` below (assumed list prices per million tokens; a batch request at half price).

Real-latency mode (`--lognormal`): the fake answers each request after a latency drawn
from a log-normal distribution, median 1 s for an audit request and 4 s for an agent turn,
`--sigma` 0.5 (p90 1.9x the median, p99 3.2x: a long tail, as generation time follows the
length of what is generated), all times `--scale`d by one constant to keep runs short.
Each draw is a function of (session, kind, n-th request of that kind): every checkout
compared meets the same latencies. S small sessions run all at once (`--sessions S
--cite-requests S`, so S is also the number of requests in flight); the bound is the
larger of the critical path (the slowest session's chain: the sum of its own 5 draws, as
the fake recorded them) and the work divided by the slots (all draws / S). Wall (process
start to exit) and work (first request to last reply) are both shown against it. A
streamed request (the audit's first, which waits only for the API to accept the key) gets
its status and headers at 30 % of its draw, as the API's come before it generates the
answer, and the rest of the reply at the draw. Each row also splits the wall: `start_s`
(process start to the first request), `starts_spread_s` (the first session's first request
to the last session's), `starts_median_s` and `slowest_chain_start_s` (the median
session's first request and the slowest chain's session's, after the first session's:
the starts are not evenly spaced, and the slowest chain's start decides the wall) and
`as_started_vs_bound`, the wall had no session been held up once its first request was
out (each chain counted from its own first request): what the wall has beyond that came
after the starts.

Floor mode (`--floor 32,128,512`, nothing run): from the same draws, wall ÷ bound for one
process in which nothing is slow but the starts (`--floor-startup` seconds to the first
request, then a session's first request every `--floor-start-ms`, in the batch's order,
every chain then run without delay); with `--shards 1,2,4`, also for that many
processes each on a core of its own, the sessions split as `--shard K/N` splits them.
It is a floor only for a process whose every start takes at least `--floor-start-ms`
after the one before. Measured starts are not evenly spaced (quick while few replies
compete for the GIL, slower later: see `starts_median_s`), so a run can come in under
the figure for its average start cost.

Many-sessions mode (`--many 1000,3000,10000`): N small sessions with no claim (judged
without a model request: the no-findings fallback) are discovered and judged, then the
batch runs again and finds each up to date (resume), then again with `--batch-api` (the
planner over sessions all up to date); the child's peak RSS of each, against N.

    python bench/bench_batch.py                  # 200 small at 8 and 32, 20 large, loop of 10
    python bench/bench_batch.py --lognormal 32,128,512 --scale 0.5 --harness /tmp/main,.
    python bench/bench_batch.py --many 1000,3000,10000 --harness /tmp/main,.
    python bench/bench_batch.py --floor 32,128,512 --floor-startup 0,1.7 --floor-start-ms 0,10
    python bench/bench_batch.py --small 50 --large 4 --latency 0.1 --json
    python bench/bench_batch.py --large 2 --loop 2 --batch-api 0 --repeat 3 --harness /tmp/old,.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.peak import PeakRSS  # noqa: E402
from tests.support.apiserver import Drip, FakeAPI, Reply, Slow  # noqa: E402
from tests.support.batch_helpers import responder, write_named_session  # noqa: E402
from tests.support.paths import FIXTURES  # noqa: E402

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
    reply_ms: float = 0.0  # the fake's per-reply latency as a client saw it, just before
    critical_s: float | None = None  # small sessions: ceil(S / N) waves of 5 replies
    load: float = 0.0  # 1-minute load average when the batch ended
    harness: str = ""

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


@dataclass(frozen=True)
class Latencies:
    """The log-normal latencies, a function of (session, kind, n-th request of that kind in
    that session): what `LogNormalAPI` answers after, and what `--floor` reads, with no
    server."""

    sigma: float
    scale: float
    AUDIT_MEDIAN = 1.0
    TURN_MEDIAN = 4.0

    def draw(self, session: str, kind: str, n: int) -> float:
        seed = hashlib.sha256(f"{session}:{kind}:{n}".encode()).digest()
        u = (int.from_bytes(seed[:8], "big") + 0.5) / 2**64
        median = self.AUDIT_MEDIAN if kind == "audit" else self.TURN_MEDIAN
        return self.scale * median * math.exp(self.sigma * statistics.NormalDist().inv_cdf(u))

    def chain(self, session: str, audits: int = 2, turns: int = 3) -> float:
        """A small session's chain as drawn for it (two audit requests, three turns), without
        running it: the draws are a function of the session's name."""
        return sum(self.draw(session, "audit", n) for n in range(audits)) + sum(
            self.draw(session, "turn", n) for n in range(turns)
        )


class LogNormalAPI(FakeAPI):
    """FakeAPI answering each request after its `Latencies` draw; records every draw per
    session."""

    # A streamed reply's status and headers come when the API has accepted the request and
    # begins to answer (queueing and reading the prompt), before the answer is generated:
    # modelled as this share of the request's draw (about 0.3 s of a median audit request).
    ACCEPTED_SHARE = 0.3

    def __init__(self, sigma: float, scale: float) -> None:
        super().__init__(default=Reply(responder))
        self.latencies = Latencies(sigma, scale)
        self._seen = threading.Lock()
        self.counts: dict[tuple[str, str], int] = {}
        self.drawn: dict[str, list[float]] = {}
        self.started: dict[str, float] = {}  # when each session's first request came
        self.first: float | None = None
        self.last = 0.0

    def next_action(self, received: Any) -> Any:
        action = super().next_action(received)
        body = received.body if isinstance(received.body, dict) else {}
        text = json.dumps(body.get("messages", ""))
        found = _SESSION.search(text)
        session = (found.group(1) or found.group(2)) if found else "?"
        kind = "audit" if "output_config" in body else "turn"
        with self._seen:
            n = self.counts.get((session, kind), 0)
            self.counts[(session, kind)] = n + 1
            latency = self.latencies.draw(session, kind, n)
            self.drawn.setdefault(session, []).append(latency)
            now = time.monotonic()
            self.started.setdefault(session, now)
            if self.first is None:
                self.first = now
        threading.Timer(latency, self._done).start()
        if body.get("stream"):  # its status and headers first, its events at the draw
            accepted = self.ACCEPTED_SHARE * latency
            return Slow(accepted, Drip(action.body, latency - accepted, interval=0.05))
        return Slow(latency, action)

    def _done(self) -> None:
        with self._seen:
            self.last = time.monotonic()


_SESSION = re.compile(r"as (small-[0-9]+) says|session `(small-[0-9]+)`")


def lognormal_batch(
    api: LogNormalAPI, root: Path, width: int, harness: Path, shards: int = 1
) -> dict[str, Any]:
    """All `width` small sessions under `root` at once; wall and work against the bound.
    With `shards` P > 1: P `judge batch --shard K/P` processes started together on the
    same ROOT, each with all of its sessions in flight (how a machine with P cores is used: one
    process's Python runs on one core at a time); wall is the first start to the last
    exit, CPU their sum, RSS the largest and the sum."""
    reset(root)
    with api._lock:
        api.requests.clear()
    with api._seen:
        api.counts.clear()
        api.drawn.clear()
        api.started.clear()
        api.first = None
    env = api.child_env(KEY, PYTHONPATH=str(harness))
    cmds = []
    for k in range(shards):  # each shard holds all of its sessions in flight: width in all
        cmd = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "-q"]
        cmd += ["--sessions", str(width), "--cite-requests", str(width)]
        cmds.append(cmd + (["--shard", f"{k}/{shards}"] if shards > 1 else []))
    began = time.monotonic()
    code, wall, cpu, rss, rss_sum, out = children(cmds, env, cwd=harness)
    # The regex has two groups: the session is whichever matched.
    drawn = {k: v for k, v in api.drawn.items() if k != "?"}
    # The wall had no session been held up once its first request was out: where each
    # session's chain ends, counted from its own first request. What the wall has beyond
    # that came after the starts; what that has beyond the bound, from the starts.
    chain_of = {k: sum(v) for k, v in drawn.items()}
    starts = {k: t - began for k, t in api.started.items() if k in drawn}
    started_ends = [starts[k] + chain for k, chain in chain_of.items()]
    chains = list(chain_of.values())
    critical = max(chains) if chains else 0.0
    first_start = min(starts.values()) if starts else 0.0
    # The starts are not evenly spaced: where the median session and the slowest chain's
    # session fall in them says more about the wall than the spread alone.
    slowest = max(chain_of, key=chain_of.__getitem__) if chain_of else None
    slots = sum(chains) / width if chains else 0.0
    bound = max(critical, slots)
    work = api.last - api.first if api.first is not None else wall
    requests = sum(len(v) for v in drawn.values())
    return {
        "harness": str(harness),
        "in_flight": width,
        "processes": shards,
        "sessions": len(out.splitlines()),
        "code": code,
        "requests": requests,
        "unattributed": len(api.drawn.get("?", [])),
        "critical_path_s": round(critical, 2),
        "work_over_slots_s": round(slots, 2),
        "bound_s": round(bound, 2),
        "wall_s": round(wall, 2),
        "work_s": round(work, 2),
        "wall_vs_bound": round(wall / bound, 3) if bound else None,
        "work_vs_bound": round(work / bound, 3) if bound else None,
        "start_s": round(first_start, 2) if starts else None,
        "starts_spread_s": round(max(starts.values()) - first_start, 2) if starts else None,
        "as_started_vs_bound": round(max(started_ends) / bound, 3)
        if started_ends and bound
        else None,
        "starts_median_s": round(statistics.median(starts.values()) - first_start, 2)
        if starts
        else None,
        "slowest_chain_start_s": round(starts[slowest] - first_start, 2)
        if slowest in starts
        else None,
        "cpu_s": round(cpu, 2),
        "cpu_per_request_ms": round(1000 * cpu / max(1, requests), 2),
        "max_rss_mb": round(rss),
        "sum_rss_mb": round(rss_sum),
        "load": round(os.getloadavg()[0], 2),
    }


def rounds(checkouts: list[Path], repeat: int) -> list[Path]:
    """The checkouts in the order they run, `repeat` rounds, each round in the order
    opposite to the one before: whichever runs second in a round on the same sessions
    peaks higher in RSS (about 50 MB at 600 sessions, for either checkout), so no checkout
    is always second."""
    order: list[Path] = []
    for n in range(repeat):
        order += checkouts if n % 2 == 0 else checkouts[::-1]
    return order


def lognormal_mode(args: argparse.Namespace, checkouts: list[Path], tmp: Path) -> dict[str, Any]:
    widths = [int(w) for w in args.lognormal.split(",")]
    api = LogNormalAPI(args.sigma, args.scale)
    rows = []
    with api:
        for width in widths:
            root = tmp / f"lognormal-{width}"
            make_small(root, width)
            for checkout in rounds(checkouts, args.repeat):
                for shards in sorted({1, *args.shards}):
                    row = lognormal_batch(api, root, width, checkout, shards)
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
            shutil.rmtree(root)
    return {
        "sigma": args.sigma,
        "scale": args.scale,
        "medians_s": {
            "audit": Latencies.AUDIT_MEDIAN * args.scale,
            "turn": Latencies.TURN_MEDIAN * args.scale,
        },
        "rows": rows,
    }


def start_floor(
    latencies: Latencies, width: int, startup: float, per_start: float, shards: int = 1
) -> float:
    """Wall ÷ bound for `width` small sessions, were nothing slow but the starts: each of
    `shards` processes (`--shard K/N`, harness.batch.shard, each on a core of its own)
    takes `startup` seconds to its first request, then starts one session every
    `per_start` seconds (its preparation under that process's one GIL), in the order the
    batch hands them out, and every chain then runs with no delay of any kind. A process
    whose every start takes at least `per_start` does no better. Measured starts are
    quicker than their average early and slower late, so this is not a floor for an
    average start cost."""
    from harness.batch.shard import shard_of

    names = [f"small-{i:03d}" for i in range(width)]
    chains = {name: latencies.chain(name) for name in names}
    bound = max(max(chains.values()), sum(chains.values()) / width)
    ends = []
    for k in range(shards):
        mine = [name for name in names if shards == 1 or shard_of(name, shards) == k]
        if mine:
            ends.append(startup + max(i * per_start + chains[n] for i, n in enumerate(mine)))
    return max(ends) / bound


def floor_mode(args: argparse.Namespace) -> dict[str, Any]:
    latencies = Latencies(args.sigma, args.scale)
    startups = [float(x) for x in args.floor_startup.split(",")]
    costs = [float(x) for x in args.floor_start_ms.split(",")]
    rows = []
    for width in (int(w) for w in args.floor.split(",")):
        for shards in args.shards:
            for startup in startups:
                floors = {
                    f"{ms:g} ms": round(
                        start_floor(latencies, width, startup, ms / 1000, shards), 3
                    )
                    for ms in costs
                }
                rows.append(
                    {
                        "in_flight": width,
                        "processes": shards,
                        "startup_s": startup,
                        "floor_by_start_cost": floors,
                    }
                )
    return {"sigma": args.sigma, "scale": args.scale, "rows": rows}


def make_empty(root: Path, n: int) -> None:
    """N sessions with a findings folder and no claim: judged without a model request."""
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"s-{i:05d}" / "findings").mkdir(parents=True)


def _phase(cmd: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    code, wall, cpu, rss, out = child(cmd, env, cwd=cwd)
    outcomes: dict[str, int] = {}
    for line in out.splitlines():
        kind = json.loads(line)["outcome"]
        outcomes[kind] = outcomes.get(kind, 0) + 1
    return {
        "code": code,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "max_rss_mb": round(rss, 1),
        "outcomes": outcomes,
    }


def many_mode(args: argparse.Namespace, checkouts: list[Path], tmp: Path) -> dict[str, Any]:
    """Per N: N claimless sessions judged (no model request), then resumed (all up to
    date); N small sessions with one claim planned by --batch-api (its first pass over all
    of them) and stopped by --max-batch-seconds before the batch is submitted."""
    from tests.support.batchapiserver import BatchAPI

    rows = []
    with BatchAPI() as api:
        for n in [int(x) for x in args.many.split(",")]:
            empty, claims = tmp / f"many-{n}", tmp / f"claims-{n}"
            make_empty(empty, n)
            make_small(claims, n)
            for checkout in checkouts:
                reset(empty)
                shutil.rmtree(claims / ".judge-batch", ignore_errors=True)
                env = api.child_env(KEY, PYTHONPATH=str(checkout))
                base = [sys.executable, "-m", "harness", "batch", "-q", "--fetch", "off"]
                base += ["--sessions", "32"]
                row: dict[str, Any] = {"harness": str(checkout), "sessions": n}
                row["judged"] = _phase([*base, str(empty)], env, checkout)
                row["resumed"] = _phase([*base, str(empty)], env, checkout)
                planning = [*base, str(claims), "--batch-api", "--max-batch-seconds", "0.2"]
                row["planned_batch_api"] = _phase(planning, env, checkout)
                row["planned_batch_api"]["submitted"] = api.calls["create"]
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
            shutil.rmtree(empty)
            shutil.rmtree(claims)
    return {"rows": rows}


def child(
    cmd: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[int, float, float, float, str]:
    """(exit code, wall s, CPU s, peak RSS MB, stdout) of one process, from its rusage."""
    code, wall, cpu, rss, _, out = children([cmd], env, cwd)
    return code, wall, cpu, rss, out


def children(
    cmds: list[list[str]], env: dict[str, str], cwd: Path | None = None
) -> tuple[int, float, float, float, float, str]:
    """Processes started together: (the worst exit code, first start to last
    exit, CPU summed, the largest and the summed peak RSS, stdout joined)."""
    started = time.monotonic()
    procs = [
        subprocess.Popen(c, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for c in cmds
    ]
    peaks = [PeakRSS(proc.pid) for proc in procs]  # not wait4's: see bench/peak.py
    outs: list[str] = [""] * len(procs)

    def read(i: int) -> None:
        stream = procs[i].stdout
        assert stream is not None
        outs[i] = stream.read().decode()

    readers = [threading.Thread(target=read, args=(i,)) for i in range(len(procs))]
    for r in readers:
        r.start()
    codes, cpu, rss = [], 0.0, []
    for proc, peak in zip(procs, peaks, strict=True):
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        codes.append(proc.returncode)
        cpu += usage.ru_utime + usage.ru_stime
        rss.append(peak.stop())
    wall = time.monotonic() - started
    for r in readers:
        r.join()
    return max(codes, key=abs), wall, cpu, max(rss), sum(rss), "".join(outs)


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


def reply_latency(api: CountingAPI, n: int = 12) -> float:
    """The fake's per-reply latency in seconds as a client sees it: the median of `n`
    sequential requests on one kept-alive connection through httpx2 (TCP_NODELAY, as the
    SDK sends). Not counted in the fake's requests."""
    import httpx2

    body = {
        "model": "claude-haiku-5-5",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "probe"}],
    }
    seen: list[float] = []
    with httpx2.Client(base_url=api.url) as client:
        for _ in range(n):
            started = time.monotonic()
            client.post("/v1/messages", json=body).read()
            seen.append(time.monotonic() - started)
    with api._lock:
        del api.requests[-n:]
    return statistics.median(seen)


def batch(
    api: CountingAPI,
    root: Path,
    label: str,
    width: int,
    cite_requests: int,
    extra: list[str],
    harness: Path = REPO,
) -> Measure:
    reset(root)
    reply = reply_latency(api)
    before = len(api.requests)
    api.most, api.first = 0, None
    cmd = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "-q"]
    cmd += ["--sessions", str(width), "--cite-requests", str(cite_requests), *extra]
    # Run from the checkout: `python -m` puts the working directory before PYTHONPATH,
    # so from another checkout's root its `harness` would be the one imported.
    env = api.child_env(KEY, PYTHONPATH=str(harness))
    code, wall, cpu, rss, out = child(cmd, env, cwd=harness)
    requests = len(api.requests) - before
    sessions = len(out.splitlines())
    # The cap on requests in flight: N sessions one request at a time (small), or the
    # shared audit pool plus the sessions in their judge phase (large), as measured.
    small = cite_requests <= width
    in_flight = min(width, sessions) if small else max(api.most, 1)
    ideal = requests * reply / in_flight
    critical = None
    if small and sessions:  # 5 sequential requests a session, one slot each
        critical = max(ideal, math.ceil(sessions / in_flight) * (requests / sessions) * reply)
    work = api.last - api.first if api.first is not None else wall
    return Measure(
        label,
        sessions,
        in_flight,
        requests,
        wall,
        cpu,
        rss,
        ideal,
        code,
        work,
        1000 * reply,
        critical,
        os.getloadavg()[0],
        str(harness),
    )


def medians(runs: list[Measure]) -> dict[str, Any]:
    """The median of each figure over repeated runs of one batch, and the load range."""

    def med(values: list[float]) -> float:
        return statistics.median(values)

    first = runs[0]
    ratio = [m.wall_s / m.ideal_s for m in runs]
    work_ratio = [m.work_s / m.ideal_s for m in runs]
    crit = [m.critical_s for m in runs if m.critical_s]
    # The CPU bound (one process, one GIL): its wall is at least its CPU seconds.
    bound = [max(m.ideal_s, m.critical_s or 0.0, m.cpu_s) for m in runs]
    return {
        "label": first.label,
        "harness": first.harness,
        "in_flight": first.in_flight,
        "requests": first.requests,
        "runs": len(runs),
        "codes": sorted({m.code for m in runs}),
        "load": [round(min(m.load for m in runs), 2), round(max(m.load for m in runs), 2)],
        "reply_ms": round(med([m.reply_ms for m in runs]), 1),
        "wall_s": round(med([m.wall_s for m in runs]), 2),
        "work_s": round(med([m.work_s for m in runs]), 2),
        "ideal_s": round(med([m.ideal_s for m in runs]), 2),
        "critical_s": round(med(crit), 2) if crit else None,
        "wall_vs_ideal": round(med(ratio), 3),
        "work_vs_ideal": round(med(work_ratio), 3),
        "work_vs_critical": round(med([m.work_s / m.critical_s for m in runs if m.critical_s]), 3)
        if crit
        else None,
        "cpu_s": round(med([m.cpu_s for m in runs]), 2),
        "cpu_per_session_ms": round(med([m.cpu_per_session_ms for m in runs]), 1),
        "cpu_per_request_ms": round(med([1000 * m.cpu_s / max(1, m.requests) for m in runs]), 2),
        "bound_s": round(med(bound), 2),
        "wall_vs_bound": round(med([m.wall_s / b for m, b in zip(runs, bound, strict=True)]), 3),
        "max_rss_mb": round(med([m.max_rss_mb for m in runs])),
        "all_wall_s": [round(m.wall_s, 2) for m in runs],
        "all_work_s": [round(m.work_s, 2) for m in runs],
        "all_cpu_s": [round(m.cpu_s, 2) for m in runs],
        "all_load": [round(m.load, 2) for m in runs],
    }


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
    from tests.support.batchapiserver import BatchAPI

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
    parser.add_argument("--repeat", type=int, default=1, help="runs of each batch (medians)")
    parser.add_argument(
        "--harness",
        default=str(REPO),
        help="checkouts (comma-separated) whose harness/ the batches run, alternately",
    )
    parser.add_argument("--batch-api", type=int, default=20, help="sessions (0: skip)")
    parser.add_argument("--only-batch-api", action="store_true")
    parser.add_argument(
        "--lognormal", default="", help="real-latency mode: sessions in flight, e.g. 32,128,512"
    )
    parser.add_argument(
        "--shards",
        default="1",
        help="real-latency mode: also as P `--shard K/P` processes at once, e.g. 1,2",
    )
    parser.add_argument("--sigma", type=float, default=0.5, help="log-normal sigma")
    parser.add_argument("--scale", type=float, default=1.0, help="all latencies times this")
    parser.add_argument("--many", default="", help="many-sessions mode: e.g. 1000,10000")
    parser.add_argument(
        "--floor",
        default="",
        help="floor mode (computed, nothing run): sessions in flight, e.g. 32,128,512",
    )
    parser.add_argument("--floor-startup", default="0,1.9", help="floor mode: seconds")
    parser.add_argument("--floor-start-ms", default="0,5,10,15,25", help="floor mode: ms")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.shards = [int(p) for p in args.shards.split(",")]
    widths = [int(w) for w in args.widths.split(",")]
    checkouts = [Path(h).resolve() for h in args.harness.split(",")]
    for checkout in checkouts:
        if not (checkout / "harness" / "__init__.py").is_file():
            parser.error(f"--harness {checkout}: no harness/ package there")
    if args.loop < 1 and not (args.lognormal or args.many):
        parser.error("--loop must be at least 1: one of its sessions is also judged by `judge run`")
    if args.floor:
        print(json.dumps(floor_mode(args), indent=2))
        return
    if args.lognormal or args.many:
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            out: dict[str, Any] = {}
            if args.lognormal:
                out["lognormal"] = lognormal_mode(args, checkouts, Path(tmp))
            if args.many:
                out["many"] = many_mode(args, checkouts, Path(tmp))
        print(json.dumps(out, indent=2))
        return
    runs: dict[tuple[str, int, Path], list[Measure]] = {}
    api = CountingAPI(args.latency)
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp, api:
        small, large, loop = Path(tmp, "small"), Path(tmp, "large"), Path(tmp, "loop")
        if args.only_batch_api:
            print(json.dumps(batch_api_mode(args.batch_api, Path(tmp)), indent=2))
            return
        make_small(small, args.small)
        make_large(large, args.large)
        make_small(loop, args.loop)
        plan: list[tuple[Path, str, int, int]] = []
        for width in widths:
            plan.append((small, f"{args.small} small", width, width))
        for width in widths:
            # The large audit is 620 requests a copy: the shared pool is 4× the sessions.
            plan.append((large, f"{args.large} large", width, 4 * width))
        for root, label, width, cite in plan:
            if not any(root.iterdir()):
                continue  # --small 0 or --large 0: that part is not measured
            for checkout in rounds(checkouts, args.repeat):  # the same load for each
                m = batch(api, root, label, width, cite, [], checkout)
                runs.setdefault((label, width, checkout), []).append(m)
                print(
                    f"  {label} x{width} [{checkout.name}]: wall {m.wall_s:.1f} s, "
                    f"work {m.work_s:.1f} s, ideal {m.ideal_s:.1f} s, cpu {m.cpu_s:.2f} s, "
                    f"reply {m.reply_ms:.0f} ms, load {m.load:.2f}",
                    file=sys.stderr,
                    flush=True,
                )
        one_wall, one_cpu = judge_run(api, next(loop.iterdir()))
        loop_n, loop_wall, loop_cpu = shell_loop(api, loop)
        single = batch(api, loop, f"{args.loop} small", 1, 1, [])
        batched = batch_api_mode(args.batch_api, Path(tmp)) if args.batch_api else None
    rows = [medians(group) for group in runs.values()]
    small_rows = [r for r in rows if "small" in r["label"]]
    summary = {
        "latency_s": args.latency,
        "judge_run_process": {"wall_s": round(one_wall, 2), "cpu_s": round(one_cpu, 3)},
        "cpu_per_session_vs_judge_run": [
            round(r["cpu_per_session_ms"] / 1000 / one_cpu, 3) for r in small_rows
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
            round((loop_wall / loop_n) / (r["wall_s"] / args.small), 1) for r in small_rows
        ],
        "shell_loop_vs_batch_cpu_per_session": [
            round((loop_cpu / loop_n) / (r["cpu_s"] / args.small), 1) for r in small_rows
        ],
        "batch_api": batched,
    }
    if args.json:
        print(json.dumps({"batches": rows, **summary}, indent=2))
        return
    print(
        f"judge batch against a fake answering after {args.latency * 1000:.0f} ms "
        f"(medians of {args.repeat} run(s) each)"
    )
    head = (
        f"{'sessions':<12}{'harness':>16}{'in flight':>10}{'requests':>9}{'reply':>8}"
        f"{'wall s':>8}{'work s':>8}{'ideal s':>8}{'crit s':>8}{'× ideal':>8}{'work×':>7}"
        f"{'work×crit':>10}{'CPU s':>7}{'CPU/sess':>10}{'CPU/req':>9}{'wall×bound':>11}"
        f"{'RSS':>8}{'load':>12}"
    )
    print(head)
    for r in rows:
        crit = f"{r['critical_s']:>8.1f}" if r["critical_s"] else f"{'-':>8}"
        vs_crit = f"{r['work_vs_critical']:>10.2f}" if r["work_vs_critical"] else f"{'-':>10}"
        load = f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"
        print(
            f"{r['label']:<12}{Path(r['harness']).name[-15:]:>16}{r['in_flight']:>10}"
            f"{r['requests']:>9}{r['reply_ms']:>6.0f}ms{r['wall_s']:>8.1f}{r['work_s']:>8.1f}"
            f"{r['ideal_s']:>8.1f}{crit}{r['wall_vs_ideal']:>8.2f}{r['work_vs_ideal']:>7.2f}"
            f"{vs_crit}{r['cpu_s']:>7.1f}{r['cpu_per_session_ms']:>7.0f} ms"
            f"{r['cpu_per_request_ms']:>6.2f} ms{r['wall_vs_bound']:>11.2f}"
            f"{r['max_rss_mb']:>5} MB{load:>12}"
        )
    print(json.dumps({"batches": rows, **summary}, indent=2))


if __name__ == "__main__":
    main()
