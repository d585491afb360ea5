"""`judge cite` through CliRunner: streams, exit codes, replays, recording, a loopback API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from jsonschema import Draft202012Validator

from harness.cli.main import cli
from harness.session.loader import ENV_ROOT
from tests.support.apiserver import Error, FakeAPI, Reply, cite_answer
from tests.support.paths import FIXTURES

REPLAYS = FIXTURES / "replays"
SCHEMA = json.loads((FIXTURES.parent / "schemas" / "citations.schema.json").read_text())


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (ENV_ROOT, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, ["cite", *args])
    assert "Traceback" not in result.stderr + result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_offline_table_goes_to_stderr() -> None:
    result = invoke(str(FIXTURES / "quote-not-in-source"), "--offline")
    assert result.exit_code == 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("citations: session quote-not-in-source: offline")
    row = next(line for line in lines if line.split()[:1] == ["sq1-c2"])
    assert row.split()[1:3] == ["sq1", "unchecked"] and "number_mismatch: 7.5" in row
    assert any(line.split()[:3] == ["sq1-c1", "sq1", "unsupported"] for line in lines)
    assert "claims with problems: quote_not_in_source 3, number_mismatch 1, no_quote 1" in (
        result.stderr
    )


def test_offline_json_is_one_valid_document_on_stdout() -> None:
    result = invoke("clean", "--root", str(FIXTURES), "--offline", "--json")
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    Draft202012Validator(SCHEMA).validate(report)
    assert report["offline"] is True and report["offlineReason"].startswith("--offline")
    assert {c["verdict"] for c in report["claims"]} == {"unchecked"}
    assert set(report["claims"][0]) >= {"claimId", "findingId", "verdict", "problems", "quotes"}


def test_replay_answers_every_claim() -> None:
    name = "quote-not-in-source"
    result = invoke(str(FIXTURES / name), "--replay", str(REPLAYS / f"{name}.cite.jsonl"), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    Draft202012Validator(SCHEMA).validate(report)
    verdicts = {c["claimId"]: c["verdict"] for c in report["claims"]}
    assert verdicts["sq1-c1"] == "unsupported"  # no quote
    assert verdicts["sq1-c4"] == "unsupported"  # fabricated
    assert verdicts["sq2-c2"] == "supported"
    assert report["models"] == ["claude-haiku-5-5"] and report["usage"]["input_tokens"] > 0


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ([], 2, "no API key"),  # no key, no replay, not offline
        (["--offline", "--replay", "x.jsonl"], 2, "--offline asks no model"),
        (["--replay", "a.jsonl", "--record", "b.jsonl"], 2, "cannot be used together"),
        (["--concurrency", "0"], 2, "--concurrency"),
        (["--replay", str(REPLAYS / "clean.cite.jsonl")], 1, "replay has no recording"),
        (["--replay", "/nonexistent/replay.jsonl"], 1, "cannot read replay"),
    ],
)
def test_exit_codes(args: list[str], code: int, words: str) -> None:
    result = invoke(str(FIXTURES / "quote-not-in-source"), *args)
    assert result.exit_code == code
    assert words in result.stderr
    assert result.stdout == ""


def test_no_key_error_is_one_line_naming_the_fixes() -> None:
    result = invoke(str(FIXTURES / "clean"))
    (line,) = result.stderr.splitlines()
    assert "ANTHROPIC_API_KEY" in line and "--replay" in line and "--offline" in line


def test_malformed_replay_is_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"state": 1}\n')
    result = invoke(str(FIXTURES / "clean"), "--replay", str(bad))
    assert result.exit_code == 1 and "malformed replay" in result.stderr


def test_missing_session_is_a_usage_error() -> None:
    result = invoke("no-such-session", "--root", str(FIXTURES), "--offline")
    assert result.exit_code == 2 and "no session" in result.stderr


# -- live, against a loopback Messages API ------------------------------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    servers: list[FakeAPI] = []

    def start(**kwargs: Any) -> FakeAPI:
        server = FakeAPI(**kwargs).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-cite-0001")
        return server

    yield start
    for server in servers:
        server.close()


def test_live_model_and_record_then_replay(api: Any, tmp_path: Path) -> None:
    server = api(default=Reply(cite_answer))
    recording = tmp_path / "rec.cite.jsonl"
    session = str(FIXTURES / "clean")
    result = invoke(session, "--model", "claude-haiku-4-5", "--record", str(recording), "--json")
    assert result.exit_code == 0, result.stderr
    live = json.loads(result.stdout)
    assert {c["verdict"] for c in live["claims"]} == {"supported"}
    assert live["model"] == "claude-haiku-4-5" and live["models"] == ["claude-haiku-4-5"]
    assert len(server.requests) == live["totals"]["requests"] == 18
    for received in server.requests:  # the key travels in a header (the SDK's choice of which)
        sent = received.headers.get("x-api-key", "") + received.headers.get("authorization", "")
        assert "sk-ant-test-cite-0001" in sent
    assert "sk-ant-test" not in recording.read_text()  # bodies only, never the key

    replayed = invoke(session, "--replay", str(recording), "--json")
    assert replayed.exit_code == 0, replayed.stderr
    assert json.loads(replayed.stdout)["claims"] == live["claims"]


def test_an_api_that_stays_down_ends_in_error_verdicts_not_a_failure(api: Any) -> None:
    server = api(default=Error(503, "overloaded_error", "down"))
    result = invoke(str(FIXTURES / "clean"), "--json")
    assert result.exit_code == 0, result.stderr  # the report was produced
    report = json.loads(result.stdout)
    assert report["totals"]["verdicts"]["error"] == 9
    assert len(server.requests) <= 3 * 16  # the guard stopped asking; retries are the SDK's


def test_a_refused_key_is_a_configuration_error_with_the_reason(api: Any) -> None:
    """Like a missing key (exit 2): every later request would be refused the same way."""
    api(default=Error(401, "authentication_error", "invalid x-api-key"))
    result = invoke(str(FIXTURES / "clean"))
    assert result.exit_code == 2
    assert "refused the credentials of the citation audit" in result.stderr
    assert "invalid x-api-key" in result.stderr and "ANTHROPIC_API_KEY" in result.stderr


# `judge cite` spells the audit's options as `judge run` and `judge batch` do; the old
# spellings still work, hidden, each with a one-line warning naming the new flag.
RENAMED = [
    ("--model", "--cite-model", "claude-haiku-5-5"),
    ("--concurrency", "--cite-concurrency", "3"),
    ("--against", "--cite-against", "quotes"),
    ("--passage-chars", "--cite-passage-chars", "900"),
    ("--fetch", "--audit-fetch", "off"),
    ("--max-fetches", "--audit-max-fetches", "2"),
]


def _report(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.mark.parametrize(("old", "new", "value"), RENAMED, ids=[r[1] for r in RENAMED])
def test_cite_takes_the_run_spelling_and_the_old_one_warns(old: str, new: str, value: str) -> None:
    session = str(FIXTURES / "quote-not-in-source")
    current = invoke(session, "--offline", "--json", new, value)
    assert "deprecated" not in current.stderr
    before = invoke(session, "--offline", "--json", old, value)
    warnings = [line for line in before.stderr.splitlines() if "deprecated" in line]
    assert warnings == [f"judge: warning: {old} is deprecated; use {new}"]
    assert _report(before) == _report(current)  # the same options, whichever spelling
    shown = CliRunner().invoke(cli, ["cite", "--help"]).output
    assert new in shown and f"{old} " not in shown.replace(new, "")


def test_both_spellings_reach_the_audit() -> None:
    session = str(FIXTURES / "quote-not-in-source")
    for args in (
        ["--cite-against", "quotes", "--cite-concurrency", "3"],
        ["--against", "quotes", "--concurrency", "3"],
    ):
        report = _report(invoke(session, "--offline", "--json", *args))
        assert report["against"] == "quotes" and report["concurrency"] == 3


def test_an_old_spelling_keeps_its_range() -> None:
    result = invoke(str(FIXTURES / "quote-not-in-source"), "--offline", "--passage-chars", "100")
    assert result.exit_code == 2
    assert "--passage-chars" in result.output and "450" in result.output


def test_old_spellings_are_rewritten_up_to_the_double_dash() -> None:
    from harness.cli.main import CITE_RENAMED
    from harness.cli.options import renamed_args

    args = ["s", "--against=quotes", "--model", "m", "--", "--fetch"]
    assert renamed_args(args, CITE_RENAMED) == (
        ["s", "--cite-against=quotes", "--cite-model", "m", "--", "--fetch"],
        ["--against", "--model"],
    )


def test_an_old_spelling_with_equals_warns_once() -> None:
    session = str(FIXTURES / "quote-not-in-source")
    result = invoke(session, "--offline", "--json", "--against=quotes", "--against", "quotes")
    assert _report(result)["against"] == "quotes"
    assert result.stderr.count("--against is deprecated; use --cite-against") == 1
