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
