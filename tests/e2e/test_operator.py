"""The operator's mistakes, tried as a new user would, each with its outcome.

- a replayed run never touches the network unless `--fetch live` is asked for;
- a replay recorded for another session, brief or model is a loud exit 1 naming both
  (`--replay-any` overrides), and so is a replay without metadata;
- `judge run` on a folder that is not a session is refused (exit 2), nothing written;
- one `--record` captures the judge and the citation audit, and `--replay` of it
  reproduces the run, audit included, with no API at all.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness.net.fetch as fetch_module
from harness.cli import cli
from harness.run import session_digest
from tests.support.apiserver import Reply, judge_responder, serve_with_env
from tests.support.fakes import message, text
from tests.support.paths import FIXTURES

REPLAYS = FIXTURES / "replays"
KEY = "sk-ant-operator-" + "3" * 24
NO_API = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), env=NO_API if env is None else env)


# -- a replay never fetches live by default ---------------------------------------------


@pytest.fixture
def live_fetchers(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every live Fetcher built during the test (none may be, unless asked for). One that
    is built resolves no name: the test never touches the network."""
    built: list[Any] = []
    real = fetch_module.Fetcher.__init__

    def no_dns(host: str, port: int, *args: Any) -> Any:
        raise socket.gaierror(f"the test resolves no names ({host})")

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        real(self, *args, **{**kwargs, "resolver": no_dns})

    monkeypatch.setattr(fetch_module.Fetcher, "__init__", spy)
    return built


def test_a_replay_fetches_stored_snapshots_by_default(fixture_copy, live_fetchers) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    result = invoke("run", str(folder), "--replay", str(REPLAYS / "clean.jsonl"))
    assert result.exit_code == 0, result.stderr
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["options"]["fetch"] == "stored"
    assert live_fetchers == []  # no live WebFetch was even built
    fetches = [c for c in record["toolCalls"] if c["name"] == "WebFetch"]
    assert fetches and all(c["ok"] for c in fetches)


def test_a_replay_fetches_live_only_when_asked(fixture_copy, live_fetchers) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    replay = str(REPLAYS / "clean.jsonl")
    result = invoke("run", str(folder), "--replay", replay, "--fetch", "live", "--no-cite")
    assert result.exit_code == 0, result.stderr
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["options"]["fetch"] == "live" and len(live_fetchers) == 1
    fetches = [c for c in record["toolCalls"] if c["name"] == "WebFetch"]
    assert fetches and not any(c["ok"] for c in fetches)  # tried live; no name resolved


# -- replays are bound to what they were recorded for -----------------------------------


def test_a_replay_of_another_session_is_a_loud_error_naming_both(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("with-trace")
    result = invoke("run", str(folder), "--replay", str(REPLAYS / "clean.jsonl"))
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["wroteJudge"] is False
    ours = session_digest(folder)
    theirs = session_digest(FIXTURES / "clean")
    assert f"sessionDigest: this run has {ours}, the replay was recorded for {theirs}" in (
        result.stderr
    )
    assert "--replay-any" in result.stderr
    assert not (folder / "judge.json").exists()


def test_a_replay_for_another_model_is_a_loud_error(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    replay = str(REPLAYS / "clean.jsonl")
    result = invoke("run", str(folder), "--replay", replay, "--model", "claude-other-1")
    assert result.exit_code == 1
    assert (
        "model: this run has claude-other-1, the replay was recorded for claude-sonnet-5-5"
        in result.stderr
    )
    assert "sessionDigest" not in result.stderr  # only what differs is named
    forced = invoke(
        "run", str(folder), "--replay", replay, "--model", "claude-other-1", "--replay-any"
    )
    assert forced.exit_code == 0, forced.stderr
    assert json.loads(forced.stdout)["wroteJudge"] is True


def test_a_replay_without_metadata_needs_replay_any(fixture_copy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    old = tmp_path / "old.jsonl"
    old.write_text("".join((REPLAYS / "clean.jsonl").read_text().splitlines(True)[1:]))
    result = invoke("run", str(folder), "--replay", str(old), "--no-cite")
    assert result.exit_code == 1
    assert "has no metadata line" in result.stderr and "--replay-any" in result.stderr
    forced = invoke("run", str(folder), "--replay", str(old), "--no-cite", "--replay-any")
    assert forced.exit_code == 0, forced.stderr


def test_every_fixture_replay_carries_its_metadata() -> None:
    for path in sorted(REPLAYS.glob("*.jsonl")):
        first = json.loads(path.read_text().splitlines()[0])
        name = path.name.removesuffix(".cite.jsonl").removesuffix(".jsonl")
        assert first["sessionDigest"] == session_digest(FIXTURES / name), path.name
        assert first.get("judgeReplay" if ".cite." not in path.name else "citeReplay") == 1


# -- not a session --------------------------------------------------------------------


def test_a_folder_that_is_not_a_session_is_refused_and_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "Downloads"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes\n")
    result = invoke("run", str(folder))
    assert result.exit_code == 2
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["wroteJudge"] is False
    assert "is not a research session" in result.stderr
    assert "findings/, sources.json, answer.md or trace.jsonl" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]  # no .judge/, no judge.json


# -- one --record captures both; --replay reproduces both ----------------------------------


def _cite_answers(request: dict[str, Any]) -> dict[str, Any]:
    """Answer a citation request from its answer schema: every claim well supported."""
    properties = request["output_config"]["format"]["schema"]["properties"]
    answers: dict[str, Any] = {}
    for name, schema in properties.items():
        if schema["type"] == "object":
            answers[name] = {"value": schema["properties"]["value"]["enum"][0], "confidence": 0.9}
        else:
            answers[name] = 0.9
    return message(text(json.dumps(answers)), model="claude-haiku-5-5")


def _both(request: dict[str, Any]) -> dict[str, Any]:
    if "output_config" in request:
        return _cite_answers(request)
    return judge_responder(request)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def test_one_record_captures_the_judge_and_the_audit_and_replays_both(
    api: Any, small_session: Path, tmp_path: Path
) -> None:
    twin = tmp_path / "twin" / small_session.name
    shutil.copytree(small_session, twin)
    server = api(default=Reply(_both))
    recording = tmp_path / "rec" / "run.jsonl"
    live = CliRunner().invoke(
        cli, ["run", str(small_session), "--fetch", "off", "--record", str(recording)]
    )
    assert live.exit_code == 0, live.stderr
    asked = len(server.requests)
    cite_recording = tmp_path / "rec" / "run.cite.jsonl"
    assert cite_recording.exists()
    meta = json.loads(recording.read_text().splitlines()[0])
    assert meta["judgeReplay"] == 1 and meta["sessionDigest"] == session_digest(small_session)
    assert json.loads(cite_recording.read_text().splitlines()[0])["citeReplay"] == 1
    recorded = json.loads((small_session / ".judge" / "citations.json").read_text())
    assert recorded["offline"] is False and recorded["totals"]["requests"] > 0

    replayed = invoke("run", str(twin), "--fetch", "off", "--replay", str(recording))
    assert replayed.exit_code == 0, replayed.stderr
    assert len(server.requests) == asked  # the replay asked the API nothing
    again = json.loads((twin / ".judge" / "citations.json").read_text())
    assert again["offline"] is False
    assert again["totals"] == recorded["totals"]
    assert [c["verdict"] for c in again["claims"]] == [c["verdict"] for c in recorded["claims"]]
    assert (twin / "judge.json").read_text() == (small_session / "judge.json").read_text()
