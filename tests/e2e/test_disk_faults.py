"""Disk faults lose nothing and say so (#22 §5).

A full disk, an I/O error on run.json, an I/O error while copying the previous judgment:
the run always prints its receipt, exits 1 with a note naming the fault, and the previous
judge.json stays byte for byte. Real processes on a small tmpfs where this process may
mount one (CI runs as root); everywhere, the same faults injected at the one write seam
(`harness.fs.artifacts.atomic_write`: its rename into place) through the real CLI.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness.fs.artifacts as artifacts_module
from harness.cli import cli
from tests.support.fakes import message, text, write_judge
from tests.support.paths import REPO

FAULTS = {errno.ENOSPC: "the disk is full", errno.EIO: "the disk reported an I/O error"}


def _replay(tmp_path: Path) -> Path:
    path = tmp_path / "replay.jsonl"
    lines = [message(write_judge())] + [message(text("done"))] * 3
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _args(folder: Path, replay: Path, *more: str) -> list[str]:
    flags = ["--fetch", "stored", "--no-cite", "--replay-any"]
    return ["run", str(folder), "--replay", str(replay), *flags, *more]


def _run_cli(folder: Path, replay: Path, *more: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, _args(folder, replay, *more))
    lines = result.stdout.splitlines()
    assert lines, f"no receipt on stdout (stderr: {result.stderr})"
    return result.exit_code, json.loads(lines[0]), result.stderr


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def judged(small_session: Path, tmp_path: Path) -> Path:
    """A session with a valid judge.json from an earlier run."""
    code, receipt, err = _run_cli(small_session, _replay(tmp_path))
    assert code == 0 and receipt["wroteJudge"], err
    return small_session


def _fail_at_seam(monkeypatch: pytest.MonkeyPatch, name: str, code: int) -> list[str]:
    """Every atomic write of the artifact `name` fails with `code` at its last step, as
    the kernel may answer (the temp file written, then the rename into place refused).
    Returns the names written."""
    real = os.rename
    seen: list[str] = []

    def faulty(src: Any, dst: Any, **kwargs: Any) -> None:
        seen.append(str(dst))
        if dst == name:
            raise OSError(code, os.strerror(code))
        real(src, dst, **kwargs)

    monkeypatch.setattr(artifacts_module.os, "rename", faulty)
    return seen


@pytest.mark.parametrize("code", sorted(FAULTS))
@pytest.mark.parametrize("name", ["previous-judge.json", "judge.json", "run.json"])
def test_a_fault_at_the_write_seam_is_said_and_loses_nothing(
    judged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, code: int
) -> None:
    before = (judged / "judge.json").read_bytes()
    seen = _fail_at_seam(monkeypatch, name, code)
    exit_code, receipt, err = _run_cli(judged, _replay(tmp_path), "--force")
    assert exit_code == 1, receipt
    assert "Traceback" not in err and "internal error" not in err
    assert FAULTS[code] in receipt["note"] and os.strerror(code) in receipt["note"]
    assert name in receipt["note"]  # which file could not be written
    if name != "run.json":
        assert receipt["wroteJudge"] is False
        assert (judged / "judge.json").read_bytes() == before  # the previous judgment stands
    if name == "previous-judge.json":
        # The backup was not safe: nothing after it ran, judge.json was never replaced.
        assert "judge.json" not in seen
    assert [n for n in os.listdir(judged / ".judge") if n.endswith(".tmp")] == []


def test_an_io_error_reading_the_previous_judgment_keeps_it(
    judged: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EIO while reading judge.json for its copy: the old judgment is not replaced."""
    before = (judged / "judge.json").read_bytes()
    real_read = os.read
    judge_ino = (judged / "judge.json").stat().st_ino

    def failing_read(fd: int, n: int) -> bytes:
        if os.fstat(fd).st_ino == judge_ino:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_read(fd, n)

    monkeypatch.setattr(artifacts_module.os, "read", failing_read)
    exit_code, receipt, _ = _run_cli(judged, _replay(tmp_path), "--force")
    monkeypatch.undo()
    assert exit_code == 1 and receipt["wroteJudge"] is False
    assert "I/O error" in receipt["note"] and "previous-judge.json" in receipt["note"]
    assert (judged / "judge.json").read_bytes() == before


# -- a real full disk: a small tmpfs, a real process ----------------------------------


# Without mount permission the same process runs with the kernel's answer faked at the
# write seam: every artifact write past the flag file fails with ENOSPC.
_FAKED_FULL = """
import errno, os, sys
import harness.fs.artifacts as a
real = a.atomic_write
def full(dir_fd, name, content, *, dst_fd=None):
    if os.path.exists(os.environ["JUDGE_TEST_DISK_FULL"]):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    real(dir_fd, name, content, dst_fd=dst_fd)
a.atomic_write = full
import runpy
sys.argv[0] = "judge"
runpy.run_module("harness", run_name="__main__")
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A 4 MiB tmpfs mounted for the test (root, as in CI), unmounted after; without
    permission to mount, a folder whose "full disk" is faked at the write seam. Yields
    the folder and the command that runs `judge` there."""
    where = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    where.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(where)],
            capture_output=True,
            check=False,
        ).returncode
    except OSError:  # no mount(8) at all
        mounted = 1
    if mounted != 0:
        yield where, [sys.executable, "-c", _FAKED_FULL]
        return
    try:
        yield where, [sys.executable, "-m", "harness"]
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> None:
    """Fill the disk to its last byte (on a faked disk: raise the flag)."""
    (disk.parent / "disk-full-flag").write_text("full\n")
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    written = 0
    try:
        for size in (65536, 512, 1):
            try:
                while written < (64 << 20):  # a faked disk is not filled for real
                    written += os.write(fd, b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_a_full_disk_in_a_real_process(
    small_disk: tuple[Path, list[str]], small_session: Path, tmp_path: Path
) -> None:
    disk, judge = small_disk
    folder = disk / "s"
    shutil.copytree(small_session, folder)
    replay = _replay(tmp_path)
    flag = disk.parent / "disk-full-flag"
    env = {**os.environ, "PYTHONPATH": str(REPO), "JUDGE_TEST_DISK_FULL": str(flag)}
    cmd = [*judge, *_args(folder, replay)]
    first = subprocess.run(cmd, capture_output=True, env=env, timeout=120, check=False)
    assert first.returncode == 0, first.stderr.decode()
    before = _sha(folder / "judge.json")
    record_before = (folder / ".judge" / "run.json").read_bytes()
    _fill(disk)
    again = subprocess.run(
        [*cmd, "--force"], capture_output=True, env=env, timeout=120, check=False
    )
    out, err = again.stdout.decode(), again.stderr.decode()
    (disk / "filler").unlink()
    assert again.returncode == 1, (out, err)
    receipt = json.loads(out.splitlines()[0])  # the receipt is always printed
    assert receipt["wroteJudge"] is False
    assert "the disk is full (No space left on device)" in receipt["note"]
    assert "internal error" not in err and "Traceback" not in err
    assert _sha(folder / "judge.json") == before  # the previous judgment unchanged
    assert (folder / ".judge" / "run.json").read_bytes() == record_before  # and its record
