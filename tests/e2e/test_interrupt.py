"""SIGINT and SIGTERM end a run with run.json saying `interrupted`, the one-line
receipt, exit 130 / 143, and never a traceback; also for a Ctrl-C in the first
milliseconds of the process. Real processes against a slow loopback API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.apiserver import FakeAPI, Reply, Slow, judge_responder
from tests.support.paths import REPO
from tests.support.waits import WITHIN

KEY = "sk-ant-interrupt-" + "7" * 24


def _start(
    session: Path, server: FakeAPI, cite: bool = False, timeout: float = 30
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "harness", "run", str(session), "--fetch", "off"]
    command += ["--timeout", f"{timeout:g}", *([] if cite else ["--no-cite"])]
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


@pytest.mark.parametrize(
    ("signum", "code", "cite"),
    [(signal.SIGINT, 130, False), (signal.SIGTERM, 143, False), (signal.SIGINT, 130, True)],
    ids=["SIGINT-judge", "SIGTERM-judge", "SIGINT-audit"],
)
def test_a_signal_mid_run_records_interrupted_and_prints_the_receipt(
    small_session: Path, signum: int, code: int, cite: bool
) -> None:
    """Mid-request: the judge's first call, or (cite) the audit's, with its worker threads.
    The API answers after 600 s (and --timeout is as long): a run that waited for the reply
    instead of ending at the signal would miss the 60 s below by minutes, while ending
    takes a second or two even on a loaded machine."""
    with FakeAPI([Slow(600, Reply(judge_responder))]) as server:
        proc = _start(small_session, server, cite, timeout=600)
        _wait_for_request(server, proc, 30)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
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
    if cite:
        assert "output_config" in server.requests[0].body  # it was the audit's request


def _wait_for_handlers(pid: int, timeout: float = 20) -> None:
    """Until the process catches SIGTERM (Python alone catches only SIGINT): the moment
    `harness/__main__` installed its handlers, its first lines. A signal before that lands
    in Python's own start-up, which no program can catch."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(x for x in status.splitlines() if x.startswith("SigCgt:")).split()[1], 16)
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.0005)
    raise AssertionError("the handlers were never installed")


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.05, 0.1, 0.3])
def test_an_early_ctrl_c_is_a_receipt_not_a_traceback(small_session: Path, delay: float) -> None:
    """A Ctrl-C `delay` seconds after the handlers are installed (while the harness
    imports the CLI, the SDK, loads the session): a receipt, exit 130, no traceback."""
    with FakeAPI([Slow(30, Reply(judge_responder))]) as server:
        proc = _start(small_session, server)
        _wait_for_handlers(proc.pid)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err, err.decode()[-2000:]
    assert proc.returncode == 130, (proc.returncode, err.decode()[-2000:])
    (line,) = out.decode().splitlines()
    assert "interrupted by SIGINT" in json.loads(line)["note"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_while_loading_still_records_interrupted(
    small_session: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """A signal that lands before the run has read its inputs (here: inside the loader):
    run.json is still written, atomically, says `interrupted`, and leaves the inputs it had
    not read yet absent; the receipt says so and the exit code is the signal's."""
    from jsonschema import Draft202012Validator

    import harness.run.prepare as prepare
    from harness.interrupt import Interrupted
    from harness.run import judge_session

    def stopped(*args: object, **kwargs: object) -> None:
        raise Interrupted(signum)

    monkeypatch.setattr(prepare, "load_session", stopped)
    result = judge_session(small_session, replay=None, fetch="off", cite=False)
    assert result.exit_code == (130 if signum == signal.SIGINT else 143)
    assert result.receipt.wroteJudge is False and "interrupted by" in result.receipt.note
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    schema = json.loads((REPO / "schemas" / "run.schema.json").read_text())
    Draft202012Validator(schema).validate(record)
    assert record["outcome"]["kind"] == "interrupted"
    assert record["interrupted"]["exitCode"] == result.exit_code
    assert record["sessionDigest"] is None and record["brief"] is None
    assert not (small_session / "judge.json").exists()


def _wait_for_lock_wait(pid: int, lock: Path, timeout: float = 30) -> None:
    """Until process `pid` holds `lock` open: it is waiting for the flock we hold."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if Path(os.readlink(fd)) == lock:
                    return
            except OSError:
                continue
        time.sleep(0.01)
    raise AssertionError("the run never opened the lock")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_waiting_for_the_lock_writes_nothing_and_says_so(
    small_session: Path, signum: int, code: int
) -> None:
    """Another run holds the lock: a signal to the run waiting for it prints the receipt
    saying so and exits 130/143, and writes no run.json (that file is the holder's)."""
    from harness.fs.artifacts import ArtifactDir

    with ArtifactDir(small_session) as artifacts, artifacts.lock(5):
        holders = small_session / ".judge" / "run.json"
        holders.write_text('{"the": "lock holder\'s run.json"}\n')
        with FakeAPI([Reply(judge_responder)]) as server:
            command = [sys.executable, "-m", "harness", "run", str(small_session)]
            command += ["--fetch", "off", "--no-cite", "--lock-timeout", "60"]
            proc = subprocess.Popen(
                command, env=server.child_env(KEY), stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
            _wait_for_lock_wait(proc.pid, (small_session / ".judge" / "lock").resolve())
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=20)
        assert server.requests == []
    assert proc.returncode == code, err.decode()[-2000:]
    assert b"Traceback" not in err
    (line,) = out.decode().splitlines()
    name = signal.Signals(signum).name
    assert json.loads(line) == {
        "wroteJudge": False,
        "upToDate": False,
        "note": f"interrupted by {name} while waiting for the lock held by another run; "
        "no run.json written (it belongs to that run) and judge.json is unchanged",
    }
    assert holders.read_text() == '{"the": "lock holder\'s run.json"}\n'
    assert not (small_session / "judge.json").exists()
    assert "interrupted" in err.decode()


def test_a_signal_inside_deferred_bookkeeping_is_raised_when_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness import interrupt

    monkeypatch.setattr(interrupt, "_raised", threading.Event())  # this test's own state
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    interrupt.install()
    steps: list[str] = []
    try:
        with pytest.raises(interrupt.Interrupted) as caught, interrupt.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # the handler has run: nothing is raised in here
            steps.append("bookkeeping finished")
        assert steps == ["bookkeeping finished"] and caught.value.exit_code == 143
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal while stopping: ignored
        time.sleep(0.05)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _wrapped_interrupt(*args: object, **kwargs: object) -> None:
    from harness.interrupt import Interrupted

    # What Python raises when a signal lands while it creates a class (an import).
    raise RuntimeError("Error calling __set_name__ on 'Field' instance 'x' in 'S'") from (
        Interrupted(signal.SIGINT)
    )


def test_a_signal_wrapped_by_an_import_is_still_an_interrupt(
    small_session: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness import interrupt, run
    from harness.cli.main import main

    assert interrupt.within(ValueError("plain")) is None
    monkeypatch.setattr(run, "judge_session", _wrapped_interrupt)
    monkeypatch.setattr(sys, "argv", ["judge", "run", str(small_session)])
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with pytest.raises(SystemExit) as stopped:
            main()  # installs the handlers: put back below
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    out, err = capsys.readouterr()
    assert stopped.value.code == 130, err
    assert "internal error" not in err and "judge: interrupted by SIGINT" in err
    assert "interrupted by SIGINT before the run started" in json.loads(out)["note"]


@pytest.mark.timeout(2 * WITHIN)
def test_a_signal_that_lands_where_python_cannot_raise_is_raised_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A handler that runs inside a weakref's callback (the import system's module lock,
    # dropped as an import ends: how a Ctrl-C was lost in a run) raises into nothing:
    # Python prints "Exception ignored" and goes on. The signal is delivered again and
    # raised where the main thread can raise.
    import weakref

    from harness import interrupt

    monkeypatch.setattr(interrupt, "_raised", threading.Event())  # this test's own state
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # put back after
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    interrupt.install()
    ran: list[str] = []

    class Held:
        pass

    def callback(_: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        end = time.monotonic() + WITHIN
        while time.monotonic() < end:  # the handler runs in here, where it cannot raise
            time.sleep(0)
        ran.append("the callback ran to its end")

    held = Held()
    ref = weakref.ref(held, callback)
    try:
        with pytest.raises(interrupt.Interrupted) as caught:
            del held  # the callback runs now
            end = time.monotonic() + WITHIN
            while time.monotonic() < end:
                time.sleep(0.01)
        assert caught.value.exit_code == 143
        assert ran == []  # the handler's raise ended the callback: it landed in there
        assert ref() is None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
