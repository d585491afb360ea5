"""One rule for a folder that is not a research session: every command taking SESSION
refuses it with exit 2 and the same message, and writes nothing into it (#33)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.session.discover import not_a_session
from tests.support.paths import FIXTURES

COMMANDS = [
    ["show"],
    ["show", "--json"],
    ["render"],
    ["cite"],
    ["cite", "--offline"],
    ["cite", "--offline", "--json"],
    ["report"],
    ["run"],
    ["run", "--replay", str(FIXTURES / "replays" / "clean.jsonl")],
]


def invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args, env={"ANTHROPIC_API_KEY": ""})
    return result.exit_code, result.stdout, result.stderr


def _folders(tmp_path: Path) -> dict[str, Path]:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a session\n", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    for name in ("clean", "no-answer"):
        shutil.copytree(FIXTURES / name, root / name)
    return {"no session files": empty, "a folder of sessions": root}


# A folder of sessions is what `judge report ROOT` takes (it writes the index): the one case
# left out, and checked below.
CASES = [
    (kind, command)
    for kind in ("no session files", "a folder of sessions")
    for command in COMMANDS
    if not (kind == "a folder of sessions" and command == ["report"])
]


@pytest.mark.parametrize(
    ("kind", "command"), CASES, ids=lambda c: c if isinstance(c, str) else " ".join(c[:3])[:30]
)
def test_every_session_command_refuses_a_non_session_alike(
    kind: str, command: list[str], tmp_path: Path
) -> None:
    folder = _folders(tmp_path)[kind]
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    code, out, err = invoke([command[0], str(folder), *command[1:]])
    message = not_a_session(folder.resolve())
    assert message is not None
    assert code == 2, (out, err)
    assert message in " ".join(err.split()) or message in out, (out, err)
    assert "problems: none" not in out + err
    if "--json" in command:
        assert json.loads(out)["error"]["message"].startswith(message)
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before  # nothing written


def test_the_message_names_the_sessions_a_root_holds(tmp_path: Path) -> None:
    root = _folders(tmp_path)["a folder of sessions"]
    message = not_a_session(root) or ""
    assert "it holds 2 session folders (clean, no-answer)" in message
    assert "judge batch" in message


def test_a_session_is_not_refused() -> None:
    assert not_a_session(FIXTURES / "clean") is None
    assert not_a_session(FIXTURES / "no-findings-dir") is None  # sources.json makes it one


def test_report_takes_a_folder_of_sessions(tmp_path: Path) -> None:
    root = _folders(tmp_path)["a folder of sessions"]
    code, out, err = invoke(["report", str(root)])
    assert code == 0, err
    assert Path(out.strip()) == (root / "report.html").absolute()
