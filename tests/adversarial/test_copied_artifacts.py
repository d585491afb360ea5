"""A sealed artifact copied from another session is named and never used (#30, #31 §1).

This installation's seal says who wrote an artifact, not for which session: a session
folder copied whole (its `.judge/` and judge.json with it) carries run.json and
citations.json sealed here for the session it was copied from. Each reader of them —
`judge show`, the report page, `judge agree`, the merge of a batch's results and the
up-to-date rule — names such an artifact as another session's and does not use it. Each
test copies a judged session (identical files, so nothing but the folder tells them
apart) and runs the real CLI on the copy.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.paths import FIXTURES

FIXTURE = "quote-not-in-source"
REPLAYS = FIXTURES / "replays"
ANOTHER_RUN = "ignored a run record written for another session"
ANOTHER_REPORT = "ignored a citation report written for another session"


def _run(folder: Path, *more: str) -> tuple[int, dict[str, Any]]:
    args = ["run", str(folder), "--replay", str(REPLAYS / f"{FIXTURE}.jsonl")]
    args += ["--cite-replay", str(REPLAYS / f"{FIXTURE}.cite.jsonl"), "--fetch", "stored"]
    result = CliRunner().invoke(cli, [*args, *more])
    return result.exit_code, json.loads(result.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root holding one judged session, `a` (audited: citations.json beside run.json)."""
    root = tmp_path_factory.mktemp("copied") / "root"
    shutil.copytree(FIXTURES / FIXTURE, root / "a", symlinks=True)
    code, receipt = _run(root / "a")
    assert code == 0 and receipt["wroteJudge"], receipt
    assert (root / "a" / ".judge" / "citations.json").is_file()
    return root


@pytest.fixture
def root(judged: Path, tmp_path: Path) -> Path:
    """A copy of the root with `b`, a copy of the judged `a` (its artifacts with it)."""
    root = tmp_path / "root"
    shutil.copytree(judged, root, symlinks=True)
    shutil.copytree(root / "a", root / "b", symlinks=True)
    return root


def _show(folder: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["show", str(folder), "--json"])
    return dict(json.loads(result.stdout))


def test_show_names_a_copied_citation_report_and_does_not_show_it(root: Path) -> None:
    own = _show(root / "a")["citations"]
    assert "problem" not in own and own["claims"] > 0 and own["pairedWithJudge"]
    copied = _show(root / "b")["citations"]
    assert ANOTHER_REPORT in copied["problem"] and "'a'" in copied["problem"], copied
    assert "verdicts" not in copied and "claims" not in copied


def test_the_page_names_copied_artifacts_and_shows_neither(root: Path) -> None:
    result = CliRunner().invoke(cli, ["report", str(root / "b"), "-o", str(root / "b.html")])
    assert result.exit_code == 0, result.output
    page = (root / "b.html").read_text(encoding="utf-8")
    assert ANOTHER_REPORT in page and ANOTHER_RUN in page
    assert "judge.json and citations.json" not in page  # nothing paired, nothing compared
    own = CliRunner().invoke(cli, ["report", str(root / "a"), "-o", str(root / "a.html")])
    assert own.exit_code == 0, own.output
    assert ANOTHER_REPORT not in (root / "a.html").read_text(encoding="utf-8")


def test_agree_names_a_copied_citation_report_and_pairs_no_label_with_it(root: Path) -> None:
    report = json.loads((root / "a" / ".judge" / "citations.json").read_text())
    claim = report["claims"][0]["claimId"]
    labels = root.parent / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {
                    "version": "labels-v1",
                    "kind": "claim",
                    "session": name,
                    "claimId": claim,
                    "support": "supported",
                    "rater": "r",
                }
            )
            + "\n"
            for name in ("a", "b")
        )
    )
    result = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(root), "--json"])
    coverage = json.loads(result.stdout)["coverage"]
    assert coverage["unaudited"] == ["b"], coverage
    said = [p for p in coverage["problems"] if p.startswith("b:")]
    # The copied report is named; so is b's judge.json, which no record of b vouches for.
    assert len([p for p in said if ANOTHER_REPORT in p]) == 1, coverage["problems"]
    assert all(ANOTHER_REPORT in p or "no run of this installation" in p for p in said)


def test_the_merge_names_a_copied_run_record_and_takes_no_result_from_it(root: Path) -> None:
    target = root.parent / "merged.csv"
    result = CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(target)])
    rows = {r["session"]: r for r in csv.DictReader(target.open())}
    assert rows["a"]["outcome"] == "model-written", rows["a"]
    assert rows["b"]["outcome"] == "error" and rows["b"]["factualAccuracy"] == "", rows["b"]
    notes = {json.loads(x)["session"]: json.loads(x)["note"] for x in result.stdout.splitlines()}
    assert ANOTHER_RUN in notes["b"], notes["b"]


def test_a_copied_run_record_never_makes_a_session_up_to_date(root: Path) -> None:
    code, receipt = _run(root / "a")
    assert code == 0 and receipt["note"].startswith("up to date"), receipt  # its own: reused
    code, receipt = _run(root / "b")
    assert code == 0 and not receipt["note"].startswith("up to date"), receipt
    assert receipt["wroteJudge"] and receipt["note"].count(ANOTHER_RUN) == 1, receipt
    record = json.loads((root / "b" / ".judge" / "run.json").read_text())
    assert record["sessionDir"] == str((root / "b").resolve())  # b's own record now
