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

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli.main import cli
from harness.run import judge_session
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.sessions import write_small_session
from tests.support.tried import count

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


# -- property: any valid judgment planted in a judged session, through every reader ----------

SCORE = st.one_of(st.integers(min_value=0, max_value=5), st.just("Unknown"))


@st.composite
def judgments(draw: st.DrawFn) -> dict[str, object]:
    scores = {d: draw(SCORE) for d in GOOD_JUDGE["scores"]}
    return {
        "scores": scores,
        "unknowns": [d for d, v in scores.items() if v == "Unknown"],
        "note": draw(st.text(min_size=1, max_size=40).filter(lambda t: t.strip())),
        "rubricVersion": GOOD_JUDGE["rubricVersion"],
    }


@settings(
    max_examples=12,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(planted_judgment=judgments(), where=st.sampled_from(["judged", "never-judged"]))
def test_a_planted_judgment_is_counted_by_no_reader(
    tmp_path_factory: pytest.TempPathFactory, planted_judgment: dict[str, object], where: str
) -> None:
    """Whatever valid judgment is planted (over one a run wrote, or in a session never judged
    here): the page shows it as not judged, agree counts it unjudged, the merge carries none
    of its scores, and a run whose model is down replaces it with the advisory fallback."""
    from harness.contract.judgment import check_judge_text
    from tests.support.fakes import api_status_error

    text = json.dumps(planted_judgment)
    if not check_judge_text(text).valid:
        return  # only valid judgments are a risk: an invalid one is never counted anyway
    count("planted judgment through every reader")
    root = tmp_path_factory.mktemp("planted") / "root"
    session = judged(root / "s1") if where == "judged" else write_small_session(root / "s1")
    (session / "judge.json").write_text(text, encoding="utf-8")

    from harness.page import load_page

    assert load_page(session).judge.valid is False
    labels = root.parent / "labels.jsonl"
    rating = {"kind": "rating", "session": "s1", "rater": "r", "scores": {"completeness": 3}}
    labels.write_text(json.dumps(rating) + "\n", encoding="utf-8")
    agreed = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(root), "--json"])
    assert json.loads(agreed.stdout)["coverage"]["unjudged"] == ["s1"]
    out = root.parent / "merged.csv"
    CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(out)])
    (row,) = list(csv.DictReader(out.open(encoding="utf-8")))
    assert all(row[d] in ("", None) for d in GOOD_JUDGE["scores"]), row
    down = ScriptedModel([api_status_error(500, "api_error")])
    result = judge_session(session, client=down, cite=False, fetch="off", force=True)
    assert result.outcome == "fallback"
    assert json.loads((session / ".judge" / "previous-judge.json").read_text()) == planted_judgment
