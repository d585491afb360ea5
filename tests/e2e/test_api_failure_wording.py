"""What `judge run` says when the API refuses the key, stays down or never answers (#33):
the progress names the failure instead of counting judgments as done, the summary says
why the claims are unchecked (not "offline": nobody asked for that), and the receipt
points at `judge doctor`. Through the real SDK against the loopback API."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from tests.support.apiserver import Error, Reply, Slow, judge_responder, serve_with_env
from tests.support.paths import FIXTURES

KEY = "sk-ant-canary-wording-0001"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / "clean", tmp_path / "clean"))


def audit_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("judge: citation audit: ")]


def test_a_refused_key_is_said_in_the_progress_and_the_receipt_names_doctor(
    api: Any, clean: Path
) -> None:
    api(default=Error(401, "authentication_error", "invalid x-api-key"))
    result = CliRunner().invoke(cli, ["run", str(clean), "--fetch", "stored"])
    assert result.exit_code == 2, result.output
    progress = audit_lines(result.stderr)
    assert progress[-1].startswith(
        "judge: citation audit: 9/9 judgments ended, no request answered: the API refused the key"
    ), progress
    assert not any("judgments done" in line for line in progress), progress
    receipt = json.loads(result.stdout)
    assert receipt["wroteJudge"] is False and receipt["upToDate"] is False
    assert "HTTP 401" in receipt["note"]
    assert receipt["note"].endswith("; `judge doctor` says which check fails"), receipt
    assert receipt["note"] in " ".join(result.stderr.split())  # the error line says the same


def test_an_api_down_for_the_audit_is_unchecked_not_offline(api: Any, clean: Path) -> None:
    server = api(default=Error(529, "overloaded_error", "Overloaded"))
    args = ["run", str(clean), "--fetch", "stored", "--max-retries", "0"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert server.requests, "the audit asked the API"
    progress = audit_lines(result.stderr)
    assert progress[-1].startswith(
        "judge: citation audit: 9/9 judgments ended, no request answered: the API was unavailable"
    ), progress
    citations = [line for line in result.stderr.splitlines() if "citations:" in line]
    assert citations[0].startswith(
        "  citations: 9 claims (no support judged: the audit's model requests failed): 9 unchecked;"
    ), citations
    assert citations[1].startswith("  citations: unchecked because the audit failed ("), citations
    assert not any("offline" in line for line in citations), citations
    receipt = json.loads(result.stdout)
    assert receipt["wroteJudge"] is True and "the model was unavailable" in receipt["note"]
    assert "`judge doctor` says which check fails" in receipt["note"], receipt
    # `judge show` reads the saved audit the same way: failed, not offline.
    shown = CliRunner().invoke(cli, ["show", str(clean)])
    lines = [line for line in shown.stderr.splitlines() if "citations:" in line]
    assert lines[0].startswith(
        "  citations: 9 claims (no support judged: the audit's model requests failed): 9 unchecked"
    ), lines
    assert not any("offline" in line for line in lines), lines
    assert json.loads(CliRunner().invoke(cli, ["show", str(clean), "--json"]).stdout)["citations"][
        "failed"
    ]


def test_some_failed_requests_are_counted_beside_the_judgments_done(api: Any, clean: Path) -> None:
    """One refusal among answered requests: the judgments are done, one request failed."""
    api([Error(529, "overloaded_error", "Overloaded")], default=Reply(judge_responder))
    args = ["run", str(clean), "--fetch", "stored", "--max-retries", "0", "--cite-concurrency", "1"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    last = audit_lines(result.stderr)[-1]
    assert last.startswith(
        "judge: citation audit: 9/9 judgments done, 1 request(s) failed: the API was unavailable"
    ), last


def test_an_api_that_never_answers_is_said_with_the_bound_of_the_wait(
    api: Any, clean: Path
) -> None:
    """The wait for an API that accepts the request and never answers is said at once,
    with the options that bound it; the test's own bound is --timeout 1."""
    api(default=Slow(10, Reply(judge_responder)))  # past --timeout 1
    args = ["run", str(clean), "--fetch", "stored", "--timeout", "1", "--max-retries", "0"]
    result = CliRunner().invoke(cli, [*args, "--max-seconds", "8"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    waiting = [line for line in lines if "waiting for the API" in line]
    assert len(waiting) == 2, lines  # the audit's, then the judge's
    audit, judge = waiting
    assert audit.startswith("judge: citation audit: 9 claims to judge in 9 judgments; "), audit
    assert "each request at most 1 s (--timeout)" in audit, audit
    assert "the audit at most " in audit and "(its share of --max-seconds)" in audit, audit
    assert judge.startswith("judge: the judge starts"), judge
    assert "each request at most 1 s (--timeout)" in judge, judge
    assert "the judge at most " in judge and "(the rest of --max-seconds)" in judge, judge
    assert "no request answered" in audit_lines(result.stderr)[-1]  # why: timeout or deadline
