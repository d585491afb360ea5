"""Progress on stderr for `judge run` and `judge cite`: one line per turn, audit counts."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from harness.cli import cli
from harness.cli.progress import ProgressLines
from tests.support.paths import FIXTURES

REPLAYS = FIXTURES / "replays"


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def test_judge_run_prints_one_line_per_turn_and_the_audit(tmp_path: Path) -> None:
    session = _copy(tmp_path, "clean")
    args = [
        "run",
        str(session),
        "--replay",
        str(REPLAYS / "clean.jsonl"),
        "--cite-replay",
        str(REPLAYS / "clean.cite.jsonl"),
        "--fetch",
        "stored",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    record = json.loads((session / ".judge" / "run.json").read_text())
    turns = [x for x in result.stderr.splitlines() if x.startswith("judge: turn ")]
    assert len(turns) == record["turns"] >= 2
    assert turns[0].startswith("judge: turn 1: tool_use (")
    assert turns[-1].startswith(f"judge: turn {record['turns']}: end_turn")
    claims = record["citations"]["claims"]
    start = [x for x in result.stderr.splitlines() if "claims to judge in" in x]
    assert start and start[0].startswith(f"judge: citation audit: {claims} claims to judge in ")
    total = int(start[0].rsplit(" in ", 1)[1].split()[0])
    audit = [x for x in result.stderr.splitlines() if "judgments done" in x]
    assert audit and audit[-1].startswith(f"judge: citation audit: {total}/{total} judgments done")
    assert json.loads(result.stdout)["wroteJudge"] is True  # stdout is still only the receipt

    quiet = CliRunner().invoke(cli, [*args, "--force", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_judge_cite_prints_audit_progress(tmp_path: Path) -> None:
    session = _copy(tmp_path, "quote-not-in-source")
    args = ["cite", str(session), "--replay", str(REPLAYS / "quote-not-in-source.cite.jsonl")]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # A claim goes to the model against its sources, or against its quotes when it has some.
    asked = sum(
        1
        for c in report["claims"]
        if c.get("against") == "sources" or c["requests"] or c.get("error")
    )
    lines = [x for x in result.stderr.splitlines() if x.startswith("judge: citation audit")]
    assert lines[0].startswith(f"judge: citation audit: {asked} claims to judge in ")
    # One judgment per quoted claim, one per cited source with the claims citing it.
    total = int(lines[0].rsplit(" in ", 1)[1].split()[0])
    assert 1 <= total <= asked
    assert lines[-1].startswith(f"judge: citation audit: {total}/{total} judgments done")
    quiet = CliRunner().invoke(cli, [*args, "--json", "-q"])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_audit_lines_are_throttled_but_the_last_is_always_shown() -> None:
    out = io.StringIO()
    lines = ProgressLines(out, interval=3600)
    for done in range(1, 101):
        lines({"event": "audit-claim", "done": done, "total": 100})
    text = out.getvalue().splitlines()
    assert len(text) == 2  # the first, then nothing for an hour but the last
    assert "1/100" in text[0] and "100/100" in text[1]


def test_what_the_model_names_is_printed_with_its_escapes_shown() -> None:
    out = io.StringIO()
    ProgressLines(out)({"event": "turn", "turn": 1, "stop": "tool_use", "tools": ["R\x1b]0;x\x07"]})
    assert "\x1b" not in out.getvalue() and "R\\x1b]0;x\\x07" in out.getvalue()


def test_failed_audit_requests_are_said_not_counted_as_done() -> None:
    """#33: an audit whose requests were refused never reads as 'judgments done'."""
    out = io.StringIO()
    lines = ProgressLines(out, interval=0)
    lines({"event": "audit-failed", "why": "the API refused the key"})
    lines({"event": "audit-claim", "done": 9, "total": 9})
    lines({"event": "audit-request", "tokens": 10})
    lines({"event": "audit-failed", "why": "the API could not be reached"})
    lines({"event": "audit-claim", "done": 9, "total": 9})
    first, second = out.getvalue().splitlines()
    assert first.startswith(
        "judge: citation audit: 9/9 judgments ended, no request answered: the API refused the key"
    ), first
    assert second.startswith(
        "judge: citation audit: 9/9 judgments done, 2 request(s) failed: "
        "the API could not be reached"
    ), second
    clean = io.StringIO()
    ProgressLines(clean)({"event": "audit-claim", "done": 3, "total": 3})
    assert clean.getvalue().startswith("judge: citation audit: 3/3 judgments done [")


def test_the_wait_for_the_api_is_said_with_its_bounds() -> None:
    out = io.StringIO()
    lines = ProgressLines(out, request="at most 30 s (--timeout)")
    lines({"event": "audit-start", "claims": 4, "judgments": 2, "seconds": 12.25})
    lines({"event": "phase", "phase": "judge", "inputs": "sha256:x", "seconds": 40})
    lines({"event": "phase", "phase": "audit"})  # its wait is said by audit-start
    audit, judge, start = out.getvalue().splitlines()
    assert audit == (
        "judge: citation audit: 4 claims to judge in 2 judgments; waiting for the API: "
        "each request at most 30 s (--timeout), the audit at most 12.2 s "
        "(its share of --max-seconds)"
    )
    assert judge.startswith("judge: the judge starts [") and judge.endswith(
        "; waiting for the API: each request at most 30 s (--timeout), "
        "the judge at most 40.0 s (the rest of --max-seconds)"
    )
    assert "waiting" not in start
    # A caller that passes no request bound, and an audit with no deadline: nothing to say.
    bare = io.StringIO()
    ProgressLines(bare)({"event": "audit-start", "claims": 1, "judgments": 1, "seconds": None})
    assert bare.getvalue() == "judge: citation audit: 1 claims to judge in 1 judgments\n"


def test_judge_cite_says_the_default_bounds_it_waits_under(tmp_path: Path) -> None:
    """`judge cite` has no --timeout: its line names the defaults its client is built with."""
    session = _copy(tmp_path, "clean")
    replay = REPLAYS / "clean.cite.jsonl"
    result = CliRunner().invoke(cli, ["cite", str(session), "--replay", str(replay)])
    assert result.exit_code == 0, result.output
    start = [x for x in result.stderr.splitlines() if "claims to judge in" in x]
    assert start and start[0].endswith(
        "; waiting for the API: each request at most 120 s, retried at most 2 times"
    ), start
