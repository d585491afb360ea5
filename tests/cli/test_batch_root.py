"""`judge batch` given a session folder, or a root holding no session, is a usage error
with the way out (it was exit 0, "0/0 sessions done"); without a key it names batch's own
--replay-dir, not `judge run`'s --replay FILE."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.sessions import write_small_session


def batch(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["batch", *args, "-q"])
    return result.exit_code, result.stdout, result.stderr


def test_a_session_folder_is_not_a_root(tmp_path: Path) -> None:
    session = write_small_session(tmp_path / "s1")
    code, out, err = batch(str(session), "--replay-dir", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "is a session folder, not a folder of sessions" in err
    assert f"judge run {session}" in err and f"({tmp_path})" in err
    assert not (session / "judge.json").exists()


@pytest.mark.parametrize("layout", ["empty", "hidden session", "plain folders", "files only"])
def test_a_root_without_sessions(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    if layout == "hidden session":
        write_small_session(root / ".s1")
    elif layout == "plain folders":
        (root / "a" / "b").mkdir(parents=True)
    elif layout == "files only":
        (root / "notes.txt").write_text("x")
    code, out, err = batch(str(root), "--replay-dir", str(tmp_path))
    assert code == 2
    assert out == ""
    assert "holds no session folder" in err and "findings" in err


def test_no_key_names_replay_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    write_small_session(tmp_path / "root" / "s1")
    code, out, err = batch(str(tmp_path / "root"))
    assert code == 2
    assert out == ""
    assert "no API key" in err
    assert "--replay-dir DIR" in err
    assert "--replay FILE" not in err
    assert "judge doctor" in err


def test_a_root_with_sessions_still_runs(tmp_path: Path) -> None:
    (tmp_path / "replays").mkdir()
    root = tmp_path / "root"
    (root / "s1").mkdir(parents=True)
    (root / "s1" / "answer.md").write_text("no findings: judged without a model\n")
    code, out, err = batch(str(root), "--replay-dir", str(tmp_path / "replays"))
    assert code == 0, err
    assert '"session": "s1"' in out
