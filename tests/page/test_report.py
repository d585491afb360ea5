"""`judge report` on sessions and folders: what is read, what is written, exit codes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness
from bench.synth import make_session
from harness.agent.calls import ToolCallRecord
from harness.cli import cli
from harness.page import load_page, render_session, run_view
from tests.support.fakes import ScriptedModel, api_status_error
from tests.support.page_builders import hostile_session, judged_fixture, parse
from tests.support.sealed import reseal
from tests.support.sessions import write_small_session


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["report", *args])
    return result.exit_code, result.stderr


def test_session_page_is_written_in_the_artifact_folder(tmp_path: Path) -> None:
    folder = judged_fixture("prompt-injection", tmp_path)
    code, err = invoke(str(folder))
    assert code == 0, err
    page = folder / ".judge" / "report.html"
    assert f"wrote {page}" in err
    html = page.read_text(encoding="utf-8")
    assert oct(page.stat().st_mode & 0o777) == "0o644"
    record = json.loads((folder / ".judge" / "run.json").read_text())
    text = "".join(parse(html).text)
    assert record["receipt"]["note"] in text  # the receipt's note, in the header
    assert "What is the impact of domestic violence on children?" in text  # the question
    assert "judge 2 vs 4 expected" in text  # the disagreement, with its reason
    assert all(c["target"] for c in record["toolCalls"])  # run.json names each target
    assert record["toolCalls"][0]["target"] in text
    assert not list((folder / ".judge").glob(".report.html.*.tmp"))  # no temp file left


def test_output_option_and_session_id_under_root(tmp_path: Path) -> None:
    write_small_session(tmp_path / "sessions" / "s1")
    out = tmp_path / "elsewhere.html"
    code, err = invoke("s1", "--root", str(tmp_path / "sessions"), "-o", str(out))
    assert code == 0, err
    assert '<h1 class="u">s1</h1>' in out.read_text(encoding="utf-8")
    assert not (tmp_path / "sessions" / "s1" / ".judge").exists()  # -o: nothing else written


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    code, err = invoke(str(tmp_path / "missing"))
    assert code == 2 and "no session" in err
    (tmp_path / "empty").mkdir()
    code, err = invoke(str(tmp_path / "empty"))
    assert code == 2 and "neither a session" in err
    code, _ = invoke("--no-such-option", str(tmp_path))
    assert code == 2


def test_unwritable_target_exits_1_naming_the_fix(tmp_path: Path) -> None:
    folder = write_small_session(tmp_path / "s")
    (folder / ".judge").symlink_to(tmp_path)
    code, err = invoke(str(folder))
    assert code == 1 and "symbolic link" in err and "-o FILE" in err
    assert not (tmp_path / "report.html").exists()


def test_index_renders_every_page_and_never_keeps_a_planted_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    a = hostile_session(root / "a", "plain a")
    b = hostile_session(root / "b", "plain b")
    (root / "not-a-session").mkdir()
    code, err = invoke(str(root))
    assert code == 0, err
    assert "2 session pages written" in err
    index = (root / "report.html").read_text(encoding="utf-8")
    hrefs = [x["href"] for t, x in parse(index).tags if t == "a"]
    assert hrefs == ["./a/.judge/report.html", "./b/.judge/report.html"]
    assert "not-a-session" not in index
    assert index.count('class="disagree"') == 2  # both rows flag their disagreement

    # A session that ships its own page (mtime in 2100, a script in it): the index
    # renders the page anew and links only that.
    planted = b / ".judge" / "report.html"
    planted.write_text("<script>window.__pwned=1</script>", encoding="utf-8")
    later = time.time() + 75 * 365 * 86400
    os.utime(planted, (later, later))
    code, err = invoke(str(root))
    assert code == 0 and "2 session pages written" in err
    assert "__pwned" not in planted.read_text(encoding="utf-8")
    assert a.exists()


def test_the_index_holds_exactly_the_sessions_a_batch_judges(tmp_path: Path) -> None:
    # One rule for "a session under ROOT" (harness.session.discover): a session not judged
    # yet is in the index, and a folder `judge batch ROOT` never judges is not.
    from harness.session.discover import discover

    root = tmp_path / "root"
    write_small_session(root / "full")
    (root / "answer-only").mkdir(parents=True)
    (root / "answer-only" / "answer.md").write_text("# An answer\n", encoding="utf-8")
    (root / "trace-only").mkdir()
    (root / "trace-only" / "trace.jsonl").write_text("", encoding="utf-8")
    (root / "leftover" / ".judge").mkdir(parents=True)  # artifacts, no session files
    (root / "judged-only").mkdir()
    (root / "judged-only" / "judge.json").write_text("{}", encoding="utf-8")
    write_small_session(root / ".hidden")
    (root / "link").symlink_to(root / "full")
    code, err = invoke(str(root))
    assert code == 0, err
    index = (root / "report.html").read_text(encoding="utf-8")
    hrefs = [x["href"] for t, x in parse(index).tags if t == "a"]
    batch = [f"./{p.name}/.judge/report.html" for p in discover(root)]
    assert (
        hrefs
        == batch
        == [
            "./answer-only/.judge/report.html",
            "./full/.judge/report.html",
            "./trace-only/.judge/report.html",
        ]
    )
    text = " ".join(parse(index).text)
    assert text.count("not-judged") == 3  # named as --merge-results names them
    for never in ("leftover", "judged-only", ".hidden"):  # (link: the page of full)
        assert not (root / never / ".judge" / "report.html").exists(), never
    # A link to a session, given as SESSION, is that session's page.
    code, err = invoke(str(root / "link"))
    assert code == 0 and "report.html" in err, err


def test_run_view_tolerates_missing_and_wrong_fields() -> None:
    assert run_view([]).present is False
    empty = run_view({})
    assert empty.present and empty.turns is None and empty.tool_calls == [] and empty.usage == {}
    odd = run_view(
        {
            "turns": "3",
            "usage": {"input_tokens": 5, "output_tokens": "x"},
            "toolCalls": [
                # run.json's own record of a call, and its fields missing or mistyped
                ToolCallRecord(name="Read", target="a.txt", ok=True).model_dump(mode="json"),
                "junk",
                {"name": "Write", "ok": False, "detail": "refused: too big"},
                {"name": 7, "target": ["b.txt"], "ok": "yes"},
                # fields no run record has are not read
                {"tool": "WebFetch", "input": {"url": "https://example.org/"}, "ok": True},
            ],
            "outcome": {"kind": "fallback", "reason": "the API was down"},
            "citations": {"offlineReason": "no key", "agreement": {"disagrees": True}},
            "started": "2026-12-01T10:09:25.228384+00:00",
            "unknownReasons": {"toolEfficiency": "no trace", "bad": 3},
        }
    )
    assert odd.turns is None and odd.usage == {"input_tokens": 5}
    assert [(c.name, c.target, c.ok, c.detail) for c in odd.tool_calls] == [
        ("Read", "a.txt", True, ""),
        ("Write", "", False, "refused: too big"),
        ("?", "", False, ""),
        ("?", "", True, ""),
    ]
    assert odd.fallbacks == [
        "judgment: fallback — the API was down",
        "citation audit offline — no key",
    ]
    assert odd.started == "2026-12-01 10:09:25 UTC"
    assert odd.unknown_reasons == {"toolEfficiency": "no trace"}


def test_passages_are_shown_in_their_source_text(tmp_path: Path) -> None:
    folder = hostile_session(tmp_path / "s", "THE PASSAGE")
    page = load_page(folder)
    passage = page.findings[0].claims[0].passages[0]
    assert passage.located and passage.text == "THE PASSAGE"
    assert passage.before.endswith("Before the passage. ") and passage.after.startswith(" After")
    html = render_session(page)
    assert "Before the passage. <mark>THE PASSAGE</mark> After the passage." in html


def test_page_without_artifacts_says_what_is_missing(tmp_path: Path) -> None:
    folder = write_small_session(tmp_path / "s")
    text = "".join(parse(render_session(load_page(folder))).text)
    assert "No valid judge.json." in text
    assert ".judge/citations.json is absent; run `judge run` on the session to audit its " in text
    assert "(`judge cite` only prints)" in text  # it does not save an audit for the page
    assert ".judge/run.json is absent; run `judge run` on it" in text
    assert "Aspirin reduces fever." in text and "not audited" in text


def test_unknown_reasons_come_from_the_inputs(tmp_path: Path) -> None:
    folder = judged_fixture("quote-not-in-source", tmp_path)  # no trace.jsonl
    page = load_page(folder)
    assert page.judge.scores["toolEfficiency"] == "Unknown"
    assert "no trace.jsonl" in page.unknown_reasons["toolEfficiency"]


@pytest.mark.parametrize("claims", [2000])
def test_synthetic_session_page_stays_small_and_closed(tmp_path: Path, claims: int) -> None:
    folder = tmp_path / "synth"
    make_session(folder, claims)
    html = render_session(load_page(folder))
    structure = parse(html)
    assert sum(1 for t, _ in structure.tags if t == "article") == claims  # all there
    assert not any("open" in a for t, a in structure.tags if t == "details")  # closed
    assert "open a finding to see its claims" in html
    assert len(html.encode()) < 4_000_000


def test_without_run_record_judgment_and_audit_are_not_compared(tmp_path: Path) -> None:
    folder = hostile_session(tmp_path / "s", "plain")
    assert load_page(folder).agreement is not None  # one run's set: compared
    (folder / ".judge" / "run.json").unlink()
    # No record says which run wrote judge.json: it is never paired with the audit.
    page = load_page(folder)
    assert page.agreement is None
    assert "judge.json: no run record of this installation says which run wrote it" in (
        page.provenance
    )
    assert any("not compared with the audit" in line for line in page.provenance)
    # A judge.json no record vouches for is not shown as a judgment (issue 31 §1); the
    # advisory fallback a run of this installation writes over it is, with its reasons.
    assert page.judge.valid is False
    down = ScriptedModel([api_status_error(500, "api_error")])
    result = harness.judge_session(folder, client=down, cite=False, fetch="off", force=True)
    assert result.outcome == "fallback"
    page = load_page(folder)
    assert page.agreement is None
    reasons = set(page.unknown_reasons.values())
    assert len(reasons) == 1 and next(iter(reasons)).startswith("advisory fallback by the harness")
    assert "the model was unavailable" in next(iter(reasons))  # its run record says why


def test_index_elsewhere_links_back_and_names_unwritable_pages(tmp_path: Path) -> None:
    root = tmp_path / "root"
    hostile_session(root / "good", "plain")
    bad = hostile_session(root / "bad", "plain")
    (bad / ".judge" / "run.json").unlink()
    (bad / ".judge" / "citations.json").unlink()
    (bad / ".judge").rmdir()
    (bad / ".judge").symlink_to(tmp_path)
    out = tmp_path / "out" / "index.html"
    out.parent.mkdir()
    code, err = invoke(str(root), "-o", str(out))
    assert code == 0, err
    assert "warning" in err and "symbolic link" in err
    structure = parse(out.read_text(encoding="utf-8"))
    hrefs = [a["href"] for t, a in structure.tags if t == "a"]
    assert hrefs == ["./../root/good/.judge/report.html"]
    assert (out.parent / str(hrefs[0])).resolve() == (root / "good" / ".judge" / "report.html")
    assert "symbolic link" in "".join(structure.text)  # the row says why it has no page
    assert not (tmp_path / "report.html").exists()  # nothing written through the link


def test_artifact_folder_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = hostile_session(tmp_path / "elsewhere", "SECRET OUTSIDE")
    folder = write_small_session(tmp_path / "s")
    (folder / ".judge").symlink_to(elsewhere / ".judge")
    page = load_page(folder)
    assert not page.run.present and not page.audit.present
    assert "goes through .judge, a symbolic link; links are not followed" in (
        page.run.problem or ""
    )
    assert "SECRET OUTSIDE" not in render_session(page)


def test_index_chart_counts_each_score_unknown_and_missing() -> None:
    from harness.page.render import IndexRow, chart

    def row(score: int | str | None) -> IndexRow:
        scores = {} if score is None else {"completeness": score}
        return IndexRow("s", None, scores, "", 0, {}, 0, False, False, "")

    drawn = chart("completeness", [row(4), row(4), row(0), row("Unknown"), row(None)])
    counts = {b.label: b.count for b in drawn.bars}
    assert counts == {"0": 1, "1": 0, "2": 0, "3": 0, "4": 2, "5": 0, "?": 1, "—": 1}
    tallest = max(drawn.bars, key=lambda b: b.h)
    assert tallest.label == "4" and all(b.h == 0 for b in drawn.bars if not b.count)
    assert drawn.mean == pytest.approx(8 / 3)


def test_hints_are_shown_as_hints_not_problems(tmp_path: Path) -> None:
    folder = hostile_session(tmp_path / "s", "plain")
    path = folder / ".judge" / "citations.json"
    report = json.loads(path.read_text())
    hint = {"check": "number_mismatch", "detail": "1986 is in no quote", "numbers": ["1986"]}
    report["claims"][0]["hints"] = [hint]
    report["totals"]["hints"]["number_mismatch"] = 1
    path.write_text(json.dumps(report))
    reseal(folder)  # edited by the test as if by a run of this installation
    page = load_page(folder)
    first = page.findings[0].claims[0]
    assert [h.check for h in first.hints] == ["number_mismatch"]
    assert "number_mismatch" not in first.checks  # a hint is not a problem
    html = render_session(page)
    assert "number_mismatch (hint)" in html and "1986 is in no quote" in html


def test_a_passage_marks_where_the_quote_is_not_the_whole_passage(tmp_path: Path) -> None:
    folder = judged_fixture("showcase", tmp_path)
    page = load_page(folder)
    claims = [c for f in page.findings for c in f.claims]
    seen = 0
    for claim in claims:
        for passage in claim.supporting:
            quotes = [q.text for q in claim.quotes if q.source_id == passage.source_id]
            assert "".join(p for p, _ in passage.pieces) == passage.text  # nothing lost
            marked = [p for p, hit in passage.pieces if hit]
            if not quotes:  # judged on the sources: the passage is what was read
                assert passage.quoted is None and marked == [passage.text]
                continue
            assert passage.quoted == bool(marked)
            for piece in marked:  # every mark is words of the claim's quotes
                assert any(piece.casefold() in q.casefold() for q in quotes), piece
            seen += bool(marked) and len("".join(marked)) < len(passage.text)
    assert seen  # at least one passage marks a part of itself, not all of it
    html = render_session(page)
    # The altered quote ("were" for the source's "are"): the changed word is left unmarked.
    assert "<mark>Remaining trade barriers in industrial countries</mark> are <mark>" in html
    assert "<mark>Recent decades" not in html  # the passage's start is not the quote's


def test_a_weak_nearest_match_gets_no_word_diff(tmp_path: Path) -> None:
    folder = judged_fixture("showcase", tmp_path)
    page = load_page(folder)
    near = [
        (p, p.extra)
        for f in page.findings
        for c in f.claims
        for p in c.problems
        if p.check == "quote_not_in_source"
    ]
    weak = [(p, dict(extra)) for p, extra in near if "no close match in the source" in dict(extra)]
    close = [(p, dict(extra)) for p, extra in near if "nearest passage matches" in dict(extra)]
    assert weak and close  # the showcase has both: 5.3% and 96.9%
    for problem, extra in weak:
        assert problem.diff == [] and "nearest passage" not in extra
        assert "a word diff is shown from 50%" in extra["no close match in the source"]
    for problem, _ in close:
        assert problem.diff  # a near miss keeps its word diff
    text = "".join(parse(render_session(page)).text)
    assert text.count("no close match in the source") == len(weak)


@pytest.mark.parametrize(
    ("quote", "passage", "diff"),
    [
        # The nearest passage shown was cut short: the quote's tail is past its end.
        ("a b c d e f", "a b c d…", [("same", "a b c"), ("beyond", "d e f")]),
        # Whole: the tail is really missing from the source.
        ("a b c d e f", "a b c", [("same", "a b c"), ("quote", "d e f")]),
        (
            "a b x d e",
            "a b y d e…",
            [("same", "a b"), ("quote", "x"), ("source", "y"), ("same", "d"), ("beyond", "e")],
        ),
    ],
)
def test_a_word_diff_never_calls_words_past_a_cut_passage_missing(
    quote: str, passage: str, diff: list[tuple[str, str]]
) -> None:
    from harness.page.inputs import word_diff

    assert word_diff(quote, passage) == diff


def test_the_marked_span_and_the_word_diff_fold_words_alike() -> None:
    """Case, punctuation and underscores aside, in both: a quote that differs from its
    passage only so is marked whole and diffs as the same words."""
    from harness.page.inputs import quote_spans, word_diff

    passage = "The Rate fell, to 4.5% in_2020."
    quote = "the rate FELL to 45 in2020"
    assert quote_spans(passage, quote) == [(0, len(passage))]
    assert word_diff(quote, passage) == [("same", quote)]
    # A changed word is no fold: it splits the span and shows in the diff.
    assert quote_spans(passage, "the rate rose to 45 in2020") == []
    assert ("quote", "rose") in word_diff("the rate rose to 45 in2020", passage)


def test_the_showcase_near_miss_is_not_said_to_lose_its_tail(tmp_path: Path) -> None:
    page = load_page(judged_fixture("showcase", tmp_path))
    (diff,) = [p.diff for f in page.findings for c in f.claims for p in c.problems if p.diff]
    # Its nearest passage is cut at "in which d…": one word differs ("were" for "are"),
    # and the quote's last words are past the cut, not missing from the source.
    assert [kind for kind, _ in diff] == ["same", "quote", "source", "same", "beyond"]
    assert diff[-1] == ("beyond", "developing countries have a comparative advantage.")
    assert "past the end of the nearest passage shown" in render_session(page)
