"""Writes: the artifact folder opened once, every artifact created by descriptor."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.fs.artifacts import ArtifactDir, NotWritable
from harness.run import judge_session
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.paths import REPO
from tests.support.sessions import write_small_session

CANARY = "CANARY-ARTIFACTS-41aa keep me\n"


@pytest.fixture
def sess(tmp_path: Path) -> Path:
    return write_small_session(tmp_path / "sess")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.txt").write_text(CANARY)
    return folder


def _state(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def _model() -> ScriptedModel:
    return ScriptedModel([message(write_judge()), message(text("done"))], repeat_last=True)


# -- a .judge that is not a folder -----------------------------------------------------


@pytest.mark.parametrize("kind", ["file", "fifo", "symlink"])
def test_a_judge_entry_that_is_not_a_folder_names_the_path_and_the_fix(
    sess: Path, outside: Path, kind: str
) -> None:
    entry = sess / ".judge"
    if kind == "file":
        entry.write_text("x")
    elif kind == "fifo":
        os.mkfifo(entry)
    else:
        entry.symlink_to(outside, target_is_directory=True)
    before = _state(outside)
    with pytest.raises(NotWritable) as caught:
        ArtifactDir(sess)
    message_ = caught.value.message
    assert str(entry) in message_ and "remove" in message_ and "writable" not in message_
    words = {"file": "a regular file, not a folder", "fifo": "a FIFO", "symlink": "symbolic link"}
    assert words[kind] in message_
    result = judge_session(sess, client=_model(), fetch="off", cite=False)
    assert result.outcome == "not-written" and not result.receipt.wroteJudge
    assert str(entry) in result.receipt.note and "remove" in result.receipt.note
    # A FIFO never blocks the run: opened with no writer it would block for ever, so no wall
    # bound is needed (the suite's per-test timeout fails a run that never returns).
    assert _state(outside) == before
    assert not (sess / "judge.json").exists()


def test_a_fifo_judge_through_the_cli_is_a_clear_exit_1(sess: Path) -> None:
    os.mkfifo(sess / ".judge")
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(sess), "--replay", "/dev/null"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 1, done.stderr
    receipt = json.loads(done.stdout.splitlines()[0])
    assert receipt["wroteJudge"] is False
    assert ".judge is a FIFO, not a folder" in receipt["note"] and "remove" in receipt["note"]
    assert "Traceback" not in done.stderr


# -- races: .judge swapped for a link after the run opened it --------------------------


def test_a_judge_folder_swapped_after_opening_keeps_the_writes_inside(
    sess: Path, outside: Path
) -> None:
    before = _state(outside)
    with ArtifactDir(sess) as artifacts:
        (sess / ".judge").rename(sess / ".judge.real")
        (sess / ".judge").symlink_to(outside, target_is_directory=True)
        artifacts.write("run.json", b"{}\n")
        artifacts.publish("judge.json", b"{}\n")
        with artifacts.lock(1):
            pass
    assert _state(outside) == before
    assert (sess / ".judge.real" / "run.json").read_bytes() == b"{}\n"
    assert (sess / "judge.json").read_bytes() == b"{}\n"


@pytest.mark.session_may_change  # the swap renames .judge during the run on purpose
def test_a_judge_folder_swapped_mid_run_does_not_send_run_json_outside(
    sess: Path, outside: Path
) -> None:
    before = _state(outside)

    def swap_then_write(_: dict[str, Any]) -> dict[str, Any]:
        if not (sess / ".judge.real").exists():
            (sess / ".judge").rename(sess / ".judge.real")
            (sess / ".judge").symlink_to(outside, target_is_directory=True)
        return message(write_judge())

    model = ScriptedModel([swap_then_write, message(text("done"))], repeat_last=True)
    result = judge_session(sess, client=model, fetch="off")
    assert result.outcome == "model-written"
    assert _state(outside) == before  # no run.json, citations.json or temp file outside
    written = sorted(p.name for p in (sess / ".judge.real").iterdir())
    assert {"run.json", "citations.json", "lock"} <= set(written)
    assert json.loads((sess / "judge.json").read_text()) == GOOD_JUDGE


# -- planted hard links ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["run.json", "citations.json", "previous-judge.json"])
def test_a_hard_linked_artifact_is_replaced_not_written_through(
    sess: Path, outside: Path, name: str
) -> None:
    (sess / ".judge").mkdir()
    (sess / "judge.json").write_text(json.dumps(GOOD_JUDGE))
    os.link(outside / "precious.txt", sess / ".judge" / name)
    before = _state(outside)
    result = judge_session(sess, client=_model(), fetch="off")
    assert result.receipt.wroteJudge
    assert _state(outside) == before
    assert (sess / ".judge" / name).stat().st_nlink == 1  # its own file now


def test_a_hard_linked_judge_json_is_neither_read_nor_copied(sess: Path, outside: Path) -> None:
    os.link(outside / "precious.txt", sess / "judge.json")
    before = _state(outside)
    model = _model()
    result = judge_session(sess, client=model, fetch="off", cite=False)
    assert result.receipt.wroteJudge
    assert not (sess / ".judge" / "previous-judge.json").exists()
    assert "CANARY-ARTIFACTS" not in json.dumps(model.requests)
    assert "CANARY-ARTIFACTS" not in (sess / ".judge" / "run.json").read_text()
    assert _state(outside) == before
    assert (sess / "judge.json").stat().st_nlink == 1


def test_copy_from_session_copies_only_an_own_regular_file(sess: Path, outside: Path) -> None:
    with ArtifactDir(sess) as artifacts:
        (sess / "judge.json").write_text("{}")
        assert artifacts.copy_from_session("judge.json", "previous-judge.json")
        (sess / "judge.json").unlink()
        (sess / "judge.json").symlink_to(outside / "precious.txt")
        assert not artifacts.copy_from_session("judge.json", "copy-of-link.json")
        (sess / "judge.json").unlink()
        os.link(outside / "precious.txt", sess / "judge.json")
        assert not artifacts.copy_from_session("judge.json", "copy-of-hardlink.json")
    assert sorted(os.listdir(sess / ".judge")) == ["previous-judge.json"]


@pytest.mark.parametrize("grows", [0, 100_000, 17 * 1024 * 1024])
def test_the_copy_asks_for_what_the_file_holds_not_the_cap(
    sess: Path, monkeypatch: pytest.MonkeyPatch, grows: int
) -> None:
    """os.read allocates all it is asked for: the copy of judge.json kept aside asks for
    the size it had when opened and a byte more, then 64 KiB at a time (it asked for the
    16 MiB cap, twice per copy: a batch of judged sessions peaked higher in memory). A file
    that grows while copied is copied whole, or not at all past the cap."""
    import harness.fs.artifacts as artifacts_module

    asked: list[int] = []
    real = os.read
    judge = sess / "judge.json"
    judge.write_bytes(b"x" * 5000)

    def reading(fd: int, n: int) -> bytes:
        asked.append(n)
        chunk = real(fd, n)
        if len(asked) == 1 and grows:  # the pipeline appends as it is copied
            with judge.open("ab") as handle:
                handle.write(b"y" * grows)
        return chunk

    monkeypatch.setattr(artifacts_module.os, "read", reading)
    with ArtifactDir(sess) as artifacts:
        copied = artifacts.copy_from_session("judge.json", "previous-judge.json")
    assert asked[0] == 5001
    assert max(asked[1:]) <= 1 << 16
    kept = sess / ".judge" / "previous-judge.json"
    if grows > artifacts_module.COPY_CAP:
        assert not copied and not kept.exists()
    else:
        assert copied and kept.read_bytes() == b"x" * 5000 + b"y" * grows


# -- one mode rule -----------------------------------------------------------------------


@pytest.fixture
def umask() -> Iterator[Any]:
    old = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_every_file_the_run_writes_gets_0666_less_the_umask(
    sess: Path, umask: Any, mask: int
) -> None:
    (sess / "judge.json").write_text("{not valid")  # so previous-judge.json is made too
    umask(mask)
    judge_session(sess, client=_model(), fetch="off")
    umask(0o022)
    made = [sess / "judge.json"] + [
        sess / ".judge" / n for n in ("run.json", "citations.json", "previous-judge.json", "lock")
    ]
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in made}
    assert modes == dict.fromkeys(modes, 0o666 & ~mask)
