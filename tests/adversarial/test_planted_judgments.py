"""Issue 31 §1: a judgment is trusted only if this installation wrote it.

A valid judge.json that arrives with a session (no sealed run record of this installation
vouches for its bytes) is never kept in place of the advisory fallback, never counted by
`judge agree`, never shown as scores on the report's index, and a replaced judge.json's
scores never enter the merged results. A folder planted where a run keeps the previous
judgment is moved aside, not a crash.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from harness.cli.main import cli
from harness.run import judge_session
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.sessions import write_small_session

ALL_FIVE = {**GOOD_JUDGE, "scores": dict.fromkeys(GOOD_JUDGE["scores"], 5), "unknowns": []}


def planted(folder: Path) -> Path:
    session = write_small_session(folder)
    (session / "judge.json").write_text(json.dumps(ALL_FIVE), encoding="utf-8")
    return session


def judged(folder: Path) -> Path:
    session = write_small_session(folder)
    model = ScriptedModel([message(write_judge()), message(text("done"))])
    result = judge_session(session, client=model, cite=False, fetch="off")
    assert result.outcome == "model-written"
    return session


def test_a_planted_judgment_is_replaced_when_the_api_is_down(tmp_path: Path) -> None:
    from tests.support.fakes import api_status_error

    session = planted(tmp_path / "s1")
    model = ScriptedModel([api_status_error(500, "api_error")])
    result = judge_session(session, client=model, cite=False, fetch="off")
    assert result.outcome == "fallback" and result.exit_code == 0
    now = json.loads((session / "judge.json").read_text(encoding="utf-8"))
    assert set(now["scores"].values()) == {"Unknown"}
    kept = json.loads((session / ".judge" / "previous-judge.json").read_text(encoding="utf-8"))
    assert kept == ALL_FIVE  # nothing lost: the planted file is kept aside


def test_agree_names_a_planted_judgment_and_counts_none_of_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    judged(root / "ours")
    planted(root / "theirs")
    labels = tmp_path / "labels.jsonl"
    lines = [
        {"kind": "rating", "session": s, "rater": "r1", "scores": {"citationAccuracy": 5}}
        for s in ("ours", "theirs")
    ]
    labels.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    result = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(root), "--json"])
    document = json.loads(result.stdout)
    assert "theirs" in document["coverage"]["unjudged"], document["coverage"]
    assert any(
        "theirs" in p and "no run of this installation" in p
        for p in document["coverage"]["problems"]
    )
    # Only the session this installation judged is paired: one rating row.
    (dimension,) = [d for d in document["scores"] if d["dimension"] == "citationAccuracy"]
    assert dimension["rows"] == 1


def test_the_index_shows_a_planted_judgment_as_not_judged(tmp_path: Path) -> None:
    root = tmp_path / "root"
    planted(root / "theirs")
    result = CliRunner().invoke(cli, ["report", str(root)])
    assert result.exit_code == 0, result.output
    page = (root / "theirs" / ".judge" / "report.html").read_text(encoding="utf-8")
    assert "no run of this installation wrote it" in page
    index = (root / "report.html").read_text(encoding="utf-8")
    assert ">5<" not in index.split("theirs", 1)[1].split("</tr>", 1)[0]


def test_a_replaced_judgment_enters_no_merged_row_or_mean(tmp_path: Path) -> None:
    root = tmp_path / "root"
    session = judged(root / "s1")
    (session / "judge.json").write_text(json.dumps(ALL_FIVE), encoding="utf-8")
    out = tmp_path / "merged.csv"
    result = CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(out)])
    assert result.exit_code == 1
    (row,) = list(csv.DictReader(out.open(encoding="utf-8")))
    assert row["outcome"] == "stale"
    assert all(row[d] in ("", None) for d in GOOD_JUDGE["scores"])


def test_a_folder_planted_as_the_previous_judgment_is_moved_aside(tmp_path: Path) -> None:
    session = judged(tmp_path / "s1")
    (session / ".judge" / "previous-judge.json").mkdir()
    model = ScriptedModel([message(write_judge()), message(text("done"))])
    result = judge_session(session, client=model, cite=False, fetch="off", force=True)
    assert result.outcome == "model-written" and result.exit_code == 0
    assert (session / ".judge" / "previous-judge.json").is_file()
    assert any(
        p.name.startswith("previous-judge.json.not-ours-") for p in (session / ".judge").iterdir()
    )
