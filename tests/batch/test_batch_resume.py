"""A batch killed at any moment and started again does only what is left."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.contract.judgment import check_judge_file
from tests.support.apiserver import FakeAPI, Reply
from tests.support.batch_helpers import mentions, responder, sessions_under

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


def test_sigterm_winds_the_batch_down_with_a_line_for_every_session(tmp_path: Path) -> None:
    root, results = tmp_path / "root", tmp_path / "results.csv"
    names = [f"sess-{i:02d}" for i in range(8)]
    sessions_under(root, names)
    with FakeAPI(default=Reply(responder), latency=0.3) as api:
        cmd = [sys.executable, "-m", "harness", "batch", str(root), "--fetch", "off"]
        proc = subprocess.Popen(
            [*cmd, "--sessions", "2", "--results", str(results)],
            env=api.child_env(KEY),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while len(api.requests) < 3:  # both first sessions are under way
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "judge: interrupted by SIGTERM" in err
    lines = {json.loads(x)["session"]: json.loads(x) for x in out.splitlines()}
    assert sorted(lines) == names  # one line each, as a pipeline reading stdout expects
    started = [n for n in names if lines[n]["outcome"] != "not-started"]
    assert 2 <= len(started) <= 4
    for name in started:  # wound down: a valid judge.json saying why, or finished
        assert check_judge_file(root / name / "judge.json").valid
        if lines[name]["outcome"] == "fallback":
            assert "the batch was interrupted" in lines[name]["note"]
    for name in set(names) - set(started):
        assert lines[name]["skipped"] and not (root / name / ".judge").exists()
        assert lines[name]["note"].startswith("not judged: the batch was interrupted before")
    # The summary and --results still account for every session.
    assert f"0/{len(names)}" not in err and "sessions with a valid judge.json" in err
    assert len(results.read_text().splitlines()) == 1 + len(names)
