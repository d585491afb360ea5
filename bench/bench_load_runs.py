"""Load: `judge run` on the large fixture, and on many sessions in parallel processes,
against the loopback Messages-API server (tests/support/apiserver.py) with simulated latency.

Every run is a real `python -m harness run` process through the real SDK, answered by
the obedient fake judge (Read the findings, Write judge.json, end). Reported: errors
(any exit code but 0, an invalid judge.json, a changed session file), wall time, and
each child's own peak RSS (sampled from the kernel: bench/peak.py). Then in-process runs: open file
descriptors and threads before and after (with the garbage collector held off).

    python bench/bench_load_runs.py                       # large + 50 parallel + in-process
    python bench/bench_load_runs.py --sessions 20 --latency 0.5 --json
    python bench/bench_load_runs.py --strict              # exit 1 on any error or leak
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.peak import PeakRSS  # noqa: E402
from harness.contract.judgment import check_judge_file  # noqa: E402
from tests.support.apiserver import FakeAPI  # noqa: E402
from tests.support.paths import FIXTURES  # noqa: E402
from tests.support.sessions import snapshot  # noqa: E402

KEY = "sk-ant-bench-not-a-real-key"


@dataclass
class Child:
    session: str
    code: int
    seconds: float
    cpu_s: float
    max_rss_mb: float
    valid: bool
    untouched: bool

    @property
    def ok(self) -> bool:
        return self.code == 0 and self.valid and self.untouched


def _command(folder: Path) -> list[str]:
    return [sys.executable, "-m", "harness", "run", str(folder), "--fetch", "stored"]


def _start(
    folder: Path, api: FakeAPI
) -> tuple[subprocess.Popen[bytes], PeakRSS, float, dict[str, bytes]]:
    before = snapshot(folder)
    proc = subprocess.Popen(
        [*_command(folder), "--no-cite", "-q", "--timeout", "60", "--max-retries", "2"],
        env=api.child_env(KEY),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, PeakRSS(proc.pid), time.monotonic(), before


def _finish(
    folder: Path,
    proc: subprocess.Popen[bytes],
    peak: PeakRSS,
    started: float,
    before: dict[str, bytes],
) -> Child:
    # wait4 gives this child's own CPU; its peak RSS is sampled (bench/peak.py says why).
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Child(
        session=folder.name,
        code=proc.returncode,
        seconds=round(time.monotonic() - started, 2),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 2),
        max_rss_mb=round(peak.stop(), 1),
        valid=check_judge_file(folder / "judge.json").valid,
        untouched=snapshot(folder) == before,
    )


def run_parallel(folders: list[Path], api: FakeAPI) -> tuple[list[Child], float]:
    started = time.monotonic()
    running = [(folder, *_start(folder, api)) for folder in folders]
    # One waiter per child, so that each run's time ends when it does.
    with ThreadPoolExecutor(len(running)) as pool:
        children = list(pool.map(lambda r: _finish(*r), running))
    return children, time.monotonic() - started


def in_process(folder: Path, api: FakeAPI, runs: int) -> dict[str, Any]:
    from harness.run import judge_session

    os.environ.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY)
    options = {"fetch": "stored", "cite": False, "timeout": 60.0}
    judge_session(folder, **options)  # warm-up: imports and caches
    gc.collect()
    gc.disable()
    try:
        fds = len(os.listdir("/proc/self/fd"))
        threads = threading.active_count()
        started = time.monotonic()
        outcomes = [judge_session(folder, **options).outcome for _ in range(runs)]
        seconds = time.monotonic() - started
        fds_after = len(os.listdir("/proc/self/fd"))
        threads_after = threading.active_count()
    finally:
        gc.enable()
    return {
        "runs": runs,
        "seconds": round(seconds, 2),
        "outcomes": sorted(set(outcomes)),
        "fds": [fds, fds_after],
        "threads": [threads, threads_after],
    }


def _summary(children: list[Child]) -> dict[str, Any]:
    rss = [c.max_rss_mb for c in children]
    secs = [c.seconds for c in children]
    cpu = [c.cpu_s for c in children]
    return {
        "runs": len(children),
        "errors": sum(not c.ok for c in children),
        "seconds_median": round(statistics.median(secs), 2),
        "seconds_max": max(secs),
        "cpu_s_median": round(statistics.median(cpu), 2),
        "rss_mb_median": statistics.median(rss),
        "rss_mb_max": max(rss),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50, help="parallel runs")
    parser.add_argument("--fixture", default="clean", help="fixture copied for each session")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per API reply")
    parser.add_argument("--in-process", type=int, default=20, help="sequential in-process runs")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--strict", action="store_true", help="exit 1 on any error or leak")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="judge-load-"))
    try:
        with FakeAPI(latency=args.latency) as api:
            large = Path(shutil.copytree(FIXTURES / "large", work / "large"))
            (large_child,), _ = run_parallel([large], api)
            folders = [
                Path(shutil.copytree(FIXTURES / args.fixture, work / f"{args.fixture}-{i:03d}"))
                for i in range(args.sessions)
            ]
            children, wall = run_parallel(folders, api)
            requests = len(api.requests)
            inproc = in_process(work / f"{args.fixture}-000", api, args.in_process)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    report = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "latency_s": args.latency,
        "large": asdict(large_child),
        "parallel": {**_summary(children), "wall_s": round(wall, 2), "api_requests": requests},
        "in_process": inproc,
    }
    leak = inproc["fds"][1] > inproc["fds"][0] or inproc["threads"][1] > inproc["threads"][0]
    errors = report["parallel"]["errors"] + (not large_child.ok)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        p, ip = report["parallel"], inproc
        print(f"judge run under load ({report['machine']}; API latency {args.latency:g} s)")
        print(
            f"  large fixture (320 claims): exit {large_child.code}, {large_child.seconds} s "
            f"({large_child.cpu_s} s CPU), "
            f"peak RSS {large_child.max_rss_mb} MB, valid={large_child.valid}, "
            f"session untouched={large_child.untouched}"
        )
        print(
            f"  {p['runs']} sessions in parallel processes: {p['errors']} error(s), "
            f"wall {p['wall_s']} s, per run median {p['seconds_median']} s "
            f"(max {p['seconds_max']} s), CPU per run median {p['cpu_s_median']} s, "
            f"peak RSS median {p['rss_mb_median']} MB "
            f"(max {p['rss_mb_max']} MB), {p['api_requests']} API requests"
        )
        print(
            f"  {ip['runs']} in-process runs: {ip['seconds']} s, outcomes {ip['outcomes']}, "
            f"open fds {ip['fds'][0]} -> {ip['fds'][1]}, "
            f"threads {ip['threads'][0]} -> {ip['threads'][1]}"
        )
    return 1 if args.strict and (errors or leak) else 0


if __name__ == "__main__":
    sys.exit(main())
