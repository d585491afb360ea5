"""Files and processes: killed runs, concurrent runs, read-only folders, full disks.

judge.json is always the previous file or a valid new one (never torn, never invalid),
two runs of one session are serialised by the lock, and a folder that cannot be
written or a disk that is full ends in exit 1 with `wroteJudge: false` and a note that
says why. The session's own files are byte-identical after every run (checked here
explicitly, and for every in-process run of the suite by conftest's guard).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness.fs.artifacts as artifacts_module
from harness.cli import cli
from harness.contract.judgment import check_judge_file
from harness.fs.artifacts import LockTimeout
from harness.run import judge_session
from tests.support.apiserver import FakeAPI, Reply, judge_responder
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.paths import REPO
from tests.support.sessions import snapshot
from tests.support.tried import count

KEY = "sk-ant-canary-kill-0001"
PAUSE = 0.15  # the slow disk's pause inside every write


def _judge_cmd(session: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(REPO / "tests" / "support" / "slowdisk.py"),
        str(PAUSE),
        "run",
        str(session),
        "--force",  # every run here writes: an up-to-date run would be killed doing nothing
        "--fetch",
        "stored",
        "--no-cite",
        "--timeout",
        "10",
        "--max-retries",
        "0",
        "-q",
        *extra,
    ]


def _state(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _writing(folder: Path, before: tuple[int, int] | None) -> bool:
    """A judge.json write is under way: a temp file exists, or judge.json changed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    temp = any(n.startswith(".judge.") and n.endswith(".tmp") for n in names)
    return temp or _state(folder / "judge.json") != before


def _kill_lane(session: Path, api: FakeAPI, seed: int, runs: int, span: float) -> Counter[str]:
    """`runs` runs of `judge run` on `session`, each SIGKILLed: every other one at a random
    moment of its life, the rest at a random moment while judge.json is being written."""
    rng = random.Random(seed)
    outcomes: Counter[str] = Counter()
    before = snapshot(session)
    target = session / "judge.json"
    previous = target.read_bytes() if target.exists() else None
    for i in range(runs):
        count("processes: runs killed at random")
        start_state = _state(target)
        proc = subprocess.Popen(
            _judge_cmd(session),
            env=api.child_env(KEY),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if i % 2:
            time.sleep(rng.uniform(0.3, 1.05) * span)
        else:
            deadline = time.monotonic() + 30
            while proc.poll() is None and not _writing(session, start_state):
                assert time.monotonic() < deadline
                time.sleep(0.002)
            time.sleep(rng.uniform(0, PAUSE))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        now = target.read_bytes() if target.exists() else None
        if now == previous:
            outcomes["previous" if now is not None else "absent"] += 1
        else:
            check = check_judge_file(target)
            assert check.valid, (i, now[:200] if now else now, check.error_lines())
            outcomes["new and valid"] += 1
            previous = now
        assert snapshot(session) == before
    return outcomes


def test_runs_killed_at_random_leave_the_old_judge_or_a_valid_new_one(
    small_session: Path, tmp_path: Path
) -> None:
    """20 runs of `judge run` as subprocesses on a slow disk, SIGKILLed (two lanes of 10,
    each on its own session): judge.json is the previous file or a valid new one."""
    other = tmp_path / "second"
    shutil.copytree(small_session, other)
    with FakeAPI(latency=0.02) as api:
        started = time.monotonic()
        calibrate = subprocess.run(
            _judge_cmd(small_session), env=api.child_env(KEY), capture_output=True, timeout=60
        )
        span = time.monotonic() - started
        assert calibrate.returncode == 0, calibrate.stderr
        with ThreadPoolExecutor(2) as pool:
            lanes = [
                pool.submit(_kill_lane, folder, api, seed, 10, span)
                for seed, folder in enumerate([small_session, other])
            ]
            outcomes = sum((lane.result() for lane in lanes), Counter())
        # A run left to finish after all that still succeeds.
        done = subprocess.run(
            _judge_cmd(small_session), env=api.child_env(KEY), capture_output=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["wroteJudge"] is True
    assert check_judge_file(small_session / "judge.json").valid
    assert sum(outcomes.values()) == 20
    # A killed writer's temp file is left in the artifact folder, never among the session's.
    for folder in (small_session, other):
        assert [n for n in os.listdir(folder) if n.endswith(".tmp")] == []
    print(f"killed runs: {dict(outcomes)}")


# -- the lock ------------------------------------------------------------------------


def _held_model(started: threading.Event, release: threading.Event) -> ScriptedModel:
    def first(request: dict[str, Any]) -> dict[str, Any]:
        started.set()
        assert release.wait(20)
        return message(write_judge())

    return ScriptedModel([first, message(text("done"))])


def test_a_second_run_waits_for_the_first(small_session: Path) -> None:
    started, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}
    first = threading.Thread(
        target=lambda: results.setdefault(
            "first",
            judge_session(
                small_session, client=_held_model(started, release), fetch="off", cite=False
            ),
        )
    )
    first.start()
    assert started.wait(10)
    second_model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("done"))])
    second = threading.Thread(
        target=lambda: results.setdefault(
            "second",
            judge_session(
                small_session, client=second_model, fetch="off", cite=False, lock_timeout=20
            ),
        )
    )
    second.start()
    time.sleep(0.5)
    assert second_model.requests == []  # still waiting for the lock
    release.set()
    first.join(20)
    second.join(20)
    assert results["first"].outcome == "model-written"
    # The first run's fresh judgment, on identical inputs, is neither paid for again nor
    # demoted: the second run finds it up to date (harness.run.uptodate).
    assert results["second"].outcome == "up-to-date"
    assert second_model.requests == []
    assert check_judge_file(small_session / "judge.json").valid
    assert not (small_session / ".judge" / "previous-judge.json").exists()


@contextlib.contextmanager
def _holding_the_lock(
    session: Path, *, release_after: float | None = None
) -> Iterator[threading.Thread]:
    """Another run of `session` in a thread (yielded), holding its lock (its model waits)
    until the block ends, or `release_after` seconds into it; joined when the block ends."""
    started, release = threading.Event(), threading.Event()
    first = threading.Thread(
        target=judge_session,
        args=(session,),
        kwargs={
            "client": _held_model(started, release),
            "fetch": "off",
            "cite": False,
            "force": True,
        },
    )
    first.start()
    try:
        assert started.wait(10)
        if release_after is not None:
            threading.Timer(release_after, release.set).start()
        yield first
    finally:
        release.set()
        first.join(20)


def test_a_second_run_that_cannot_wait_fails_clearly(small_session: Path) -> None:
    with _holding_the_lock(small_session) as holder:
        with pytest.raises(LockTimeout, match=r"another judge run holds .*--lock-timeout"):
            judge_session(small_session, client=ScriptedModel([]), fetch="off", lock_timeout=0.3)
        # It gave up while the other run still held the lock (held until this block ends, or
        # 20 s): a wait that ignored --lock-timeout would have outlived the holder instead.
        assert holder.is_alive()
        result = CliRunner().invoke(
            cli,
            ["run", str(small_session), "--replay", "/dev/null", "--lock-timeout", "0.2"],
        )
        assert result.exit_code == 1
        assert json.loads(result.stdout.splitlines()[0])["wroteJudge"] is False
        assert "another judge run holds" in result.stderr and "Traceback" not in result.stderr
    assert check_judge_file(small_session / "judge.json").valid


def test_the_wait_for_the_lock_sits_under_the_runs_time(small_session: Path) -> None:
    """--max-seconds bounds the whole run, the wait for another run's lock included: a
    wait that reaches it ends the run clearly, naming --max-seconds; a run that got the
    lock after waiting has only the rest of its time, and run.json says what the wait took."""
    with _holding_the_lock(small_session) as holder:
        with pytest.raises(LockTimeout, match=r"waited 0\.4 s.*raise --max-seconds"):
            judge_session(small_session, client=ScriptedModel([]), fetch="off", max_seconds=0.4)
        # Not the 30 s of --lock-timeout: it gave up while the holder (20 s at most) still ran.
        assert holder.is_alive()
    second_model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("done"))])
    with _holding_the_lock(small_session, release_after=1.0):
        result = judge_session(
            small_session, client=second_model, fetch="off", cite=False, force=True, max_seconds=60
        )
    assert result.outcome == "model-written"
    shares = json.loads((small_session / ".judge" / "run.json").read_text())["time"]
    assert shares["lockWait"] >= 0.5  # the second run waited for the first's release
    assert shares["beforeAudit"] >= shares["lockWait"]
    assert shares["judge"]["allowed"] <= 60 - shares["lockWait"]


def test_two_processes_are_serialised(small_session: Path) -> None:
    # The first run's first reply waits until the impatient run has given up: however slow
    # a loaded machine starts a process, the lock is still held when it asks (issue 31 §6).
    impatient_done = threading.Event()

    def held_until_the_impatient_run_ends(request: dict[str, Any]) -> dict[str, Any]:
        impatient_done.wait(90)
        return judge_responder(request)

    with FakeAPI([Reply(held_until_the_impatient_run_ends)]) as api:
        env = api.child_env(KEY)
        # Its request waits as long as the reply is held: with the kill tests' --timeout 10
        # it gave up, and the lock, while a loaded machine was still starting the impatient run.
        slow = subprocess.Popen(
            _judge_cmd(small_session, "--timeout", "120"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        lock = small_session / ".judge" / "lock"
        deadline = time.monotonic() + 20
        while not (lock.exists() and lock.read_text().strip() == str(slow.pid)):
            assert time.monotonic() < deadline and slow.poll() is None
            time.sleep(0.01)
        impatient = subprocess.Popen(
            _judge_cmd(small_session, "--lock-timeout", "0.2"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        # The patient run waits out the impatient one's start-up and exit and then the
        # whole of the first run: minutes on a loaded machine, not a lock-wait to time.
        patient = subprocess.Popen(
            _judge_cmd(small_session, "--lock-timeout", "300"),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            impatient_out, impatient_err = impatient.communicate(timeout=60)
        finally:
            impatient_done.set()
        _, patient_err = patient.communicate(timeout=330)
        _, err = slow.communicate(timeout=60)
    assert impatient.returncode == 1
    assert json.loads(impatient_out)["wroteJudge"] is False
    assert b"another judge run holds" in impatient_err
    assert slow.returncode == 0, err
    assert patient.returncode == 0, patient_err
    assert check_judge_file(small_session / "judge.json").valid


# -- folders that cannot be written, disks that are full ---------------------------------


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[str]:
    """Make `folder` itself unwritable however this process is privileged.

    An unprivileged user gets chmod; root ignores modes, so root gets the immutable
    attribute (chattr +i); where neither works, creating files in the folder is made
    to fail the way a read-only mount does (EROFS), which is what the harness sees.
    """
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield "chmod"
        finally:
            folder.chmod(mode)
        return
    made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if made.returncode == 0:
        try:
            yield "chattr +i"
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        return
    # judge.json is renamed into the session folder by descriptor (harness.fs.artifacts):
    # a rename whose destination folder is `folder` fails the way a read-only mount does.
    real_rename = os.rename
    here = folder.stat()

    def rename(src: Any, dst: Any, **kwargs: Any) -> None:
        dst_fd = kwargs.get("dst_dir_fd")
        where = os.fstat(dst_fd) if dst_fd is not None else os.stat(Path(dst).parent)
        if (where.st_dev, where.st_ino) == (here.st_dev, here.st_ino):
            raise OSError(30, "Read-only file system", str(dst))
        real_rename(src, dst, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(artifacts_module.os, "rename", rename)
        yield "EROFS (simulated)"


def _run_cli(folder: Path, replay: Path) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        cli,
        # A hand-written replay: no metadata line, hence --replay-any.
        [
            "run",
            str(folder),
            "--replay",
            str(replay),
            "--fetch",
            "stored",
            "--no-cite",
            "--replay-any",
        ],
    )
    return result.exit_code, json.loads(result.stdout.splitlines()[0]), result.stderr


def _replay(tmp_path: Path) -> Path:
    path = tmp_path / "replay.jsonl"
    # A Write, then three ends of turn: enough for the re-asks if the Write is refused.
    lines = [message(write_judge())] + [message(text("done"))] * 3
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_artifact_folder_that_cannot_be_made(small_session: Path, tmp_path: Path) -> None:
    (small_session / ".judge").write_text("a file where the artifact folder goes\n")
    before = snapshot(small_session)
    code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert code == 1 and receipt["wroteJudge"] is False
    # Not "make it writable" (it is writable): the note names the path and the fix.
    assert ".judge is a regular file, not a folder" in receipt["note"]
    assert "remove" in receipt["note"] and "writable" not in receipt["note"]
    assert "Traceback" not in err
    assert not (small_session / "judge.json").exists()
    assert snapshot(small_session) == before


def test_read_only_session_folder(small_session: Path, tmp_path: Path) -> None:
    (small_session / ".judge").mkdir()
    before = snapshot(small_session)
    with read_only(small_session) as how:
        code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert code == 1, (how, receipt)
    assert receipt["wroteJudge"] is False
    assert "no judge.json could be written" in receipt["note"], how
    assert "Traceback" not in err
    assert not (small_session / "judge.json").exists()
    assert snapshot(small_session) == before
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "not-written"
    # The model's Write was refused with the reason, then the fallback failed the same way.
    assert any("could not be written" in c["detail"] for c in record["toolCalls"])


def test_full_disk(small_session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every judge.json temp file is /dev/full: the kernel's own ENOSPC on write."""
    real = artifacts_module._temp

    def on_full_disk(dir_fd: int, name: str) -> tuple[int, str]:
        fd, tmp = real(dir_fd, name)
        if name != "judge.json":
            return fd, tmp
        os.close(fd)
        os.unlink(tmp, dir_fd=dir_fd)
        return os.open("/dev/full", os.O_WRONLY), tmp

    monkeypatch.setattr(artifacts_module, "_temp", on_full_disk)
    (small_session / "judge.json").write_text("{not valid")
    before = snapshot(small_session)
    code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert code == 1 and receipt["wroteJudge"] is False
    assert "No space left on device" in receipt["note"]
    assert "Traceback" not in err
    assert (small_session / "judge.json").read_text() == "{not valid"  # untouched, not torn
    assert snapshot(small_session) == before
    assert [n for n in os.listdir(small_session) if n.endswith(".tmp")] == []


# -- a hostile artifact folder: links planted where the run writes ------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text("CANARY-ARTIFACT-0ab1 keep me\n")
    return folder


def test_an_artifact_folder_that_is_a_link_is_not_followed(
    small_session: Path, tmp_path: Path, outside: Path
) -> None:
    (small_session / ".judge").symlink_to(outside)
    before = snapshot(small_session)
    code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert code == 1 and receipt["wroteJudge"] is False
    assert "symbolic link" in receipt["note"] and "Traceback" not in err
    assert sorted(os.listdir(outside)) == ["precious.txt"]
    assert snapshot(small_session) == before


@pytest.mark.parametrize("name", ["lock", "previous-judge.json", "run.json"])
def test_links_planted_in_the_artifact_folder_are_not_written_through(
    small_session: Path, tmp_path: Path, outside: Path, name: str
) -> None:
    (small_session / "judge.json").write_text(json.dumps(GOOD_JUDGE) + "\n")
    (small_session / ".judge").mkdir()
    (small_session / ".judge" / name).symlink_to(outside / "precious.txt")
    before = snapshot(small_session)
    code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert (outside / "precious.txt").read_text() == "CANARY-ARTIFACT-0ab1 keep me\n"
    assert sorted(os.listdir(outside)) == ["precious.txt"]
    assert "Traceback" not in err
    assert snapshot(small_session) == before
    if name == "lock":
        assert code == 1 and "run lock" in err and "symbolic link" in err
    else:
        assert code == 0 and receipt["wroteJudge"] is True
        assert not (small_session / ".judge" / name).is_symlink()
    if name == "previous-judge.json":
        kept = (small_session / ".judge" / name).read_text()
        assert json.loads(kept) == GOOD_JUDGE


def test_a_judge_json_link_is_never_read(
    small_session: Path, tmp_path: Path, outside: Path
) -> None:
    secret = outside / "secret.json"
    secret.write_text('{"scores": "CANARY-LINKED-77c1", "note": "CANARY-LINKED-77c1"}')
    (small_session / "judge.json").symlink_to(secret)
    model = ScriptedModel([message(write_judge()), message(text("done"))], repeat_last=True)
    result = judge_session(small_session, client=model, fetch="off", cite=False)
    seen = json.dumps(model.requests)
    record = (small_session / ".judge" / "run.json").read_text()
    for blob in (seen, record, result.receipt.line()):
        assert "CANARY-LINKED" not in blob
    assert not (small_session / ".judge" / "previous-judge.json").exists()
    assert secret.read_text().startswith('{"scores": "CANARY-LINKED')  # not written through
    # The model's Write is refused (not through a link); the fallback replaces the link.
    assert result.outcome == "fallback"
    assert not (small_session / "judge.json").is_symlink()
    assert check_judge_file(small_session / "judge.json").valid


def test_the_suite_wide_guard_catches_a_run_that_changes_the_session(small_session: Path) -> None:
    """conftest wraps every in-process run; a run that touches a session file fails."""

    def meddle(request: dict[str, Any]) -> dict[str, Any]:
        (small_session / "answer.md").write_text("changed during the run\n")
        return message(write_judge())

    model = ScriptedModel([meddle, message(text("done"))])
    with pytest.raises(AssertionError, match=r"changed the session's own files: \['answer.md'\]"):
        judge_session(small_session, client=model, fetch="off", cite=False)
