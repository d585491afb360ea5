"""A batch killed at any moment and started again does only what is left."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from apiserver import FakeAPI, Reply

from harness.contract.judgment import check_judge_file

from .helpers import mentions, responder, sessions_under

KEY = "sk-ant-canary-batch-resume-01"


def _batch(root: Path, api: FakeAPI) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off", "--sessions", "2"],
        env=api.child_env(KEY),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def test_a_killed_batch_restarted_pays_nothing_for_finished_sessions(tmp_path: Path) -> None:
    root = tmp_path / "root"
    names = [f"sess-{i:02d}" for i in range(10)]
    sessions_under(root, names)
    with FakeAPI(default=Reply(responder), latency=0.03) as api:
        proc = _batch(root, api)
        assert proc.stdout is not None
        finished: list[str] = []
        deadline = time.monotonic() + 60
        while len(finished) < 3:
            assert time.monotonic() < deadline, "the batch made no progress"
            line = proc.stdout.readline()
            assert line, "the batch ended before it could be killed"
            finished.append(json.loads(line)["session"])
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.returncode == -signal.SIGKILL
        judged = {n: (root / n / "judge.json").read_bytes() for n in finished}
        mark = len(api.requests)

        again = _batch(root, api)
        out, _ = again.communicate(timeout=120)
        assert again.returncode == 0
        results = {json.loads(x)["session"]: json.loads(x) for x in out.splitlines()}
        later = api.requests[mark:]

    assert sorted(results) == names
    for name in finished:  # finished before the kill: up to date, not one request
        assert results[name]["outcome"] == "up-to-date" and results[name]["skipped"]
        assert not any(mentions(r.body, name) for r in later), name
        assert (root / name / "judge.json").read_bytes() == judged[name]
    for name in names:
        assert check_judge_file(root / name / "judge.json").valid
        if results[name]["outcome"] != "up-to-date":
            assert results[name]["outcome"] == "model-written"
            assert any(mentions(r.body, name) for r in later)
        else:  # finished, perhaps just before its line was printed: never paid twice
            assert not any(mentions(r.body, name) for r in later), name
    left = [n for n in names if results[n]["outcome"] == "model-written"]
    assert len(left) >= 10 - 3 - 2  # at most the two in flight had finished unseen
    # Each session costs 3 judge turns and 2 audit requests: the restart paid for what
    # was left and nothing else.
    assert len(later) == 5 * len(left)
