"""SIGINT and SIGTERM end a run with run.json saying `interrupted`, the one-line
receipt, exit 130 / 143, and never a traceback; also for a Ctrl-C in the first
milliseconds of the process. Real processes against a slow loopback API."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from apiserver import FakeAPI, Reply, Slow, judge_responder

KEY = "sk-ant-interrupt-" + "7" * 24


def _start(session: Path, server: FakeAPI) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "harness", "run", str(session), "--fetch", "off"]
    command += ["--no-cite", "--timeout", "30"]
    return subprocess.Popen(
        command,
        env=server.child_env(KEY),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for_request(server: FakeAPI, proc: subprocess.Popen[bytes], timeout: float) -> None:
    end = time.monotonic() + timeout
    while not server.requests:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < end, "the run never reached the API"
        time.sleep(0.02)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_records_interrupted_and_prints_the_receipt(
    small_session: Path, signum: int, code: int
) -> None:
    with FakeAPI([Slow(30, Reply(judge_responder))]) as server:
        proc = _start(small_session, server)
        _wait_for_request(server, proc, 30)
        began = time.monotonic()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    assert time.monotonic() - began < 10  # not the 30 s the API would have taken
    assert proc.returncode == code, err.decode()[-2000:]
    assert b"Traceback" not in err
    (line,) = out.decode().splitlines()
    receipt = json.loads(line)
    name = signal.Signals(signum).name
    assert receipt["wroteJudge"] is False and f"interrupted by {name}" in receipt["note"]
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["interrupted"] == {"signal": name, "exitCode": code}
    assert record["outcome"]["kind"] == "interrupted"
    assert not (small_session / "judge.json").exists()
    assert not list((small_session / ".judge").glob("*.tmp*"))  # written atomically


def _python_start_up() -> float:
    """How long this machine's Python takes to start and import site (the slowest of 3):
    a signal before then lands in Python's own start-up, which no program can catch."""
    took = []
    for _ in range(3):
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        took.append(time.monotonic() - began)
    return max(took)


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.05, 0.1, 0.3])
def test_an_early_ctrl_c_is_a_receipt_not_a_traceback(small_session: Path, delay: float) -> None:
    """A Ctrl-C `delay` seconds after Python's own start-up (while the harness imports,
    installs its handlers, loads the session): a receipt, exit 130, no traceback."""
    start_up = _python_start_up()
    with FakeAPI([Slow(30, Reply(judge_responder))]) as server:
        proc = _start(small_session, server)
        time.sleep(start_up + delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode()[-2000:]
    assert proc.returncode == 130, (proc.returncode, err.decode()[-2000:])
    (line,) = out.decode().splitlines()
    assert "interrupted by SIGINT" in json.loads(line)["note"]
