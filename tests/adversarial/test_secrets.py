"""The API key never lands in anything a run writes or prints.

Runs through the real SDK against the loopback API with a canary key, with --record
and --transcript, plain and streamed, with the SDK's debug logging on, and with an
API (or proxy) that echoes the key back in its error messages. Every file under the
test's folder, stdout and stderr are searched for the key.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from tests.support.apiserver import Error, FakeAPI, Reply, judge_responder, serve_with_env
from tests.support.fakes import message, text, tool_use

KEY = "sk-ant-canary-" + "5ecret" * 6


def everything_under(root: Path) -> Iterator[tuple[Path, bytes]]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            yield path, path.read_bytes()


def assert_no_key(root: Path, *streams: str | bytes) -> int:
    """No file under root and no stream holds the key (or its tail). Returns files seen."""
    needles = [KEY.encode(), KEY[-16:].encode()]
    seen = 0
    for path, data in everything_under(root):
        seen += 1
        for needle in needles:
            assert needle not in data, f"the key is in {path}"
    for stream in streams:
        blob = stream.encode() if isinstance(stream, str) else stream
        for needle in needles:
            assert needle not in blob
    return seen


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start FakeAPIs on demand, with the SDK's env vars pointing at the latest."""
    yield from serve_with_env(monkeypatch, KEY)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_key_is_in_no_artifact_of_a_recorded_run(
    api: Any, small_session: Path, tmp_path: Path, stream: bool
) -> None:
    server = api()
    args = ["run", str(small_session), "--fetch", "stored", "--no-cite", "--timeout", "5"]
    args += ["--record", str(tmp_path / "rec" / "replay.jsonl")]
    args += ["--transcript", str(tmp_path / "logs" / "transcript.jsonl")]
    if stream:
        args += ["--max-output-tokens", "32000"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    # The key did go out, in a header, to the API: the test is not vacuous.
    assert all(KEY in json.dumps(r.headers) for r in server.requests)
    files = assert_no_key(tmp_path, result.stdout, result.stderr)
    assert files >= 6  # judge.json, run.json, lock, replay, transcript, session files
    assert (tmp_path / "rec" / "replay.jsonl").read_text().count('"type": "message"') == 3


def test_key_echoed_by_the_api_is_redacted(api: Any, small_session: Path, tmp_path: Path) -> None:
    """A proxy that quotes the key in its errors: the fallback's reason must not carry it."""
    echo = f"upstream overloaded for x-api-key: {KEY}"
    api([Error(529, "overloaded_error", echo)], default=None)
    args = ["run", str(small_session), "--fetch", "stored", "--no-cite", "--timeout", "5"]
    args += ["--max-retries", "0"]
    args += ["--record", str(tmp_path / "rec" / "replay.jsonl")]
    args += ["--transcript", str(tmp_path / "logs" / "transcript.jsonl")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    receipt = json.loads(result.stdout)
    assert "HTTP 529 overloaded_error" in receipt["note"]
    assert "[redacted]" in receipt["note"]
    assert_no_key(tmp_path, result.stdout, result.stderr)


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "authentication_error"), (403, "permission_error")]
)
@pytest.mark.parametrize("who", ["judge", "audit"])
def test_a_refused_key_is_a_configuration_error(
    api: Any, small_session: Path, tmp_path: Path, status: int, kind: str, who: str
) -> None:
    """A wrong key is exit 2 with a one-line receipt saying so, like a missing key; never
    exit 0 with an all-Unknown judgment that looks like success in a loop."""
    server = api([Error(status, kind, f"invalid x-api-key: {KEY}")], default=None)
    args = ["run", str(small_session), "--fetch", "off", "--timeout", "5"]
    if who == "judge":
        args.append("--no-cite")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    (line,) = result.stdout.splitlines()
    receipt = json.loads(line)
    assert receipt["wroteJudge"] is False
    target = "the judge" if who == "judge" else "the citation audit"
    assert f"refused the credentials of {target}" in receipt["note"]
    assert f"HTTP {status}" in receipt["note"] and "ANTHROPIC_API_KEY" in receipt["note"]
    assert "judge: error:" in result.stderr
    assert not (small_session / "judge.json").exists()
    assert len(server.requests) == 1  # nothing asked after the refusal
    if who == "audit":
        assert "output_config" in server.requests[0].body  # it was the audit's request
    assert_no_key(tmp_path, result.stdout, result.stderr)


def _reads_the_audit_then_judges(request: dict[str, Any]) -> dict[str, Any]:
    """A judge that Reads the audit's report first (so whatever it holds is sent back to
    the API in the next request), then behaves as the obedient judge."""
    if "output_config" in request:  # a citation request: the engine's reply is not JSON
        return message(text("not json"))
    if len(request["messages"]) == 1:
        return message(tool_use("Read", {"file_path": ".judge/citations.json"}))
    return judge_responder(request)


def test_key_quoted_to_the_citation_audit_reaches_nothing(
    api: Any, small_session: Path, tmp_path: Path
) -> None:
    """The API quotes the key in an error to the citation audit: the claim's error, the
    offline reason, citations.json, the judge's requests (first message and the Read of
    citations.json), judge.json, run.json, the receipt, the stderr summary and the
    recordings all pass the one choke point."""
    echo = f"overloaded; your key {KEY} was logged"
    server = api(
        [Error(529, "overloaded_error", echo), Error(529, "overloaded_error", echo)],
        default=Reply(_reads_the_audit_then_judges),
    )
    args = ["run", str(small_session), "--fetch", "off", "--timeout", "5", "--max-retries", "0"]
    args += ["--transcript", str(tmp_path / "logs" / "transcript.jsonl")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    citations = (small_session / ".judge" / "citations.json").read_text()
    assert "[redacted]" in citations  # the quoted error did arrive, redacted
    bodies = json.dumps([r.body for r in server.requests])
    assert "[redacted]" in bodies  # and was sent on to the judge, redacted
    assert KEY not in bodies and KEY[-16:] not in bodies
    assert any(KEY in json.dumps(r.headers) for r in server.requests)  # not vacuous
    assert_no_key(tmp_path, result.stdout, result.stderr)


def test_key_is_not_in_debug_logs_of_a_real_process(small_session: Path, tmp_path: Path) -> None:
    with FakeAPI([Error(529, "overloaded_error"), Reply(judge_responder)]) as server:
        env = server.child_env(KEY, ANTHROPIC_LOG="debug", JUDGE_DEBUG="1")
        command = [sys.executable, "-m", "harness", "run", str(small_session)]
        command += ["--fetch", "stored", "--no-cite", "--timeout", "5", "--max-retries", "1"]
        command += ["--transcript", str(tmp_path / "logs" / "t.jsonl")]
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"HTTP Request" in done.stderr or b"Request options" in done.stderr  # logs are on
    assert_no_key(tmp_path, done.stdout, done.stderr)
