"""The Write tool's round-trip line says what `judge show --json` says of judge.json.

The tool checks judge.json alone (not loading the session again); these hold its
sessionId, valid, errors and exit code to `show_document(*show_session(...))`, for a
clean session, a session with broken files, an invalid judge.json and a judge.json
swapped for a link, reached through an unresolved path.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import harness.agent.tools as tools_module
from harness.agent.fetch import StoredFetcher
from harness.agent.tools import ToolBox
from harness.session.show import show_document, show_session
from tests.support.fakes import GOOD_JUDGE
from tests.support.sessions import write_small_session

LINE = re.compile(r"Round-trip `judge show (?P<sid>\S+) --json` exited (?P<code>\d): (?P<doc>.*)$")


def _write(folder: Path, session_id: str, content: str) -> tuple[str, bool]:
    box = ToolBox(folder, session_id, StoredFetcher(folder, {}))
    return box.run("Write", {"file_path": "judge.json", "content": content})


def _as_show(text: str, folder: Path, session_id: str) -> dict[str, Any]:
    match = LINE.search(text)
    assert match is not None, text
    shown = show_document(*show_session(folder, session_id))
    expected = {k: shown[k] for k in ("sessionId", "valid", "errors")}
    assert json.loads(match["doc"]) == expected
    assert match["doc"] == json.dumps(expected)  # byte for byte, in show's key order
    assert int(match["code"]) == (0 if shown["valid"] else 1)
    return expected


def test_clean_session_through_an_unresolved_path(tmp_path: Path) -> None:
    write_small_session(tmp_path / "sess")
    (tmp_path / "other").mkdir()
    folder = tmp_path / "other" / ".." / "sess"
    text, is_error = _write(folder, "sess", json.dumps(GOOD_JUDGE, indent=2))
    assert not is_error
    outcome = _as_show(text, folder, "sess")
    assert outcome == {"sessionId": "sess", "valid": True, "errors": []}


def test_session_with_broken_files(tmp_path: Path) -> None:
    folder = write_small_session(tmp_path / "broken")
    (folder / "findings" / "sq2.json").write_text("{not json")
    (folder / "sources.json").write_text("[]")
    assert show_session(folder)[0].problems  # the session's problems are not the tool's
    text, is_error = _write(folder, "broken", json.dumps(GOOD_JUDGE))
    assert not is_error
    assert _as_show(text, folder, "broken")["valid"] is True


def test_judge_json_swapped_for_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_small_session(tmp_path / "sess")
    (tmp_path / "other").mkdir()
    folder = tmp_path / "other" / ".." / "sess"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(GOOD_JUDGE))

    def planted(path: Path, text: str, **_: Any) -> None:
        os.symlink(elsewhere, path)  # what a racing writer might leave at judge.json

    monkeypatch.setattr(tools_module, "write_judgment_atomic", planted)
    text, is_error = _write(folder, "sess", json.dumps(GOOD_JUDGE))
    assert not is_error
    outcome = _as_show(text, folder, "sess")
    assert outcome["valid"] is False
    assert str(tmp_path.resolve() / "sess") in json.dumps(outcome["errors"])  # resolved path


def test_judge_json_that_the_write_check_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_small_session(tmp_path / "sess")

    def other_bytes(path: Path, text: str, **_: Any) -> None:
        path.write_text('{"scores": {}}\n')  # not what was checked: the round-trip says so

    monkeypatch.setattr(tools_module, "write_judgment_atomic", other_bytes)
    text, _ = _write(folder, "sess", json.dumps(GOOD_JUDGE))
    outcome = _as_show(text, folder, "sess")
    assert outcome["valid"] is False and outcome["errors"]
