"""The report page triages (issue: the operator's day): in Chromium, what needs a look comes
first, the rest is folded, the summary's badges filter, session problems lead, every problem
kind has plain words, a near-miss quote shows its words against the passage, and the index
reads on a phone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.audit.report import CHECKS, VERDICTS
from harness.page import build, inputs
from tests.support.page_builders import judged_fixture

from .test_browser import assert_inert, browser, open_page, page_of

__all__ = ["browser"]

SESSIONS = ["quote-not-in-source", "large", "malformed-finding", "clean", "showcase"]
SHOWN = "els => els.filter(e => e.checkVisibility()).length"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("triage")
    out = {name: judged_fixture(name, root) for name in SESSIONS}
    build(root)
    out["index"] = root
    return out


def _claims(folder: Path) -> list[dict[str, Any]]:
    report = json.loads((folder / ".judge" / "citations.json").read_text(encoding="utf-8"))
    return list(report["claims"])


def _needs_look(c: dict[str, Any]) -> bool:
    return c["verdict"] != "supported" or bool(c["problems"])


def test_attention_first_the_rest_folded(browser: Any, pages: dict[str, Path]) -> None:
    folder = pages["quote-not-in-source"]
    opened = open_page(browser, page_of(folder))
    page = opened.page
    claims = _claims(folder)
    attention = page.eval_on_selector_all(
        "details[data-group=attention] article.claim",
        "els => els.map(e => [e.querySelector('.cid').textContent, e.dataset.verdict])",
    )
    assert sorted(a for a, _ in attention) == sorted(c["claimId"] for c in claims if _needs_look(c))
    rank = {"unsupported": 0, "error": 1, "uncertain": 2}
    for finding in page.query_selector_all("details[data-group=attention]"):
        shown = finding.eval_on_selector_all(
            "article.claim", "els => els.map(e => e.dataset.verdict)"
        )
        order = [rank.get(v, 3) for v in shown]
        assert order == sorted(order)  # the worst first
    assert page.get_attribute("#settled", "open") is None  # folded
    settled = [c for c in claims if not _needs_look(c)]
    assert page.eval_on_selector_all("#settled article.claim", "els => els.length") == len(settled)
    assert page.eval_on_selector_all("#settled article.claim", SHOWN) == 0
    page.click("#settled > summary")
    assert page.eval_on_selector_all("#settled article.claim", SHOWN) == len(settled)
    assert_inert(opened, page_of(folder))


def test_summary_badges_filter(browser: Any, pages: dict[str, Path]) -> None:
    folder = pages["large"]
    opened = open_page(browser, page_of(folder))
    page = opened.page
    claims = _claims(folder)
    for verdict in ("unsupported", "supported"):
        want = sum(1 for c in claims if c["verdict"] == verdict)
        page.click(f"#verdict-summary button[data-verdict={verdict}]")
        assert page.eval_on_selector_all("article.claim", SHOWN) == want
        assert page.eval_on_selector_all(f"article.claim:not([data-verdict={verdict}])", SHOWN) == 0
        assert page.text_content("#shown") == str(want)
    page.click("#problem-summary button[data-problem=no_quote]")
    want = sum(1 for c in claims if any(p["check"] == "no_quote" for p in c["problems"]))
    assert page.eval_on_selector_all("article.claim", SHOWN) == want > 0
    assert page.input_value("#problem") == "no_quote"
    assert_inert(opened, page_of(folder))


def test_session_problems_lead_and_the_legend_speaks_plainly(
    browser: Any, pages: dict[str, Path]
) -> None:
    folder = pages["malformed-finding"]
    opened = open_page(browser, page_of(folder))
    page = opened.page
    assert page.is_visible("#session-problems")
    before = page.evaluate(
        "document.getElementById('session-problems').compareDocumentPosition("
        "document.getElementById('scores')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert before  # above the scores, not at the very bottom
    assert "sq2.json" in (page.text_content("#session-problems") or "")
    page.click("#legend > summary")
    names = page.eval_on_selector_all("#legend dt", "els => els.map(e => e.textContent.trim())")
    assert set(names) == set(CHECKS) | (set(VERDICTS))
    words = page.eval_on_selector_all("#legend dd", "els => els.map(e => e.textContent)")
    assert all(len(w) > 20 for w in words)
    assert_inert(opened, page_of(folder))


def test_near_miss_quotes_votes_and_passages(browser: Any, pages: dict[str, Path]) -> None:
    folder = pages["quote-not-in-source"]
    opened = open_page(browser, page_of(folder))
    page = opened.page
    page.click("#settled > summary")
    claims = {c["claimId"]: c for c in _claims(folder)}
    votes: dict[str, list[str]] = {}
    for path in (folder / "findings").glob("*.json"):
        for c in json.loads(path.read_text(encoding="utf-8"))["claims"]:
            cast = (c.get("verification") or {}).get("votes") or []
            votes[c["id"]] = [v.get("verdict") for v in cast]
    altered = [
        cid
        for cid, c in claims.items()
        # a near miss: a passage that shares at least half the quote's words (below that,
        # "no close match in the source" and no diff: tests/page/test_report.py)
        if any(
            p["check"] == "quote_not_in_source"
            and p.get("nearest")
            and p["similarity"] >= inputs.DIFF_MIN_SIMILARITY
            for p in c["problems"]
        )
    ]
    assert altered
    for cid in altered:
        article = page.query_selector(f"article.claim:has(.cid:text-is('{cid}'))")
        assert article is not None
        assert article.query_selector(".diff del") or article.query_selector(".diff ins")
    for article in page.query_selector_all("article.claim"):
        cid = (article.query_selector(".cid").text_content() or "").strip()  # type: ignore[union-attr]
        claim = claims[cid]
        quote_badges = article.eval_on_selector_all(
            "li.quote .badge", "els => els.map(e => e.textContent)"
        )
        if claim.get("against") == "sources":
            assert "not judged" not in quote_badges
            assert "unchecked" not in quote_badges
        supporting = article.eval_on_selector_all(
            ".passage:not(.p-dropped) .badge", "els => els.map(e => e.textContent)"
        )
        assert "dropped" not in supporting
        dropped = sum(1 for p in claim.get("passages", []) if p["verdict"] == "dropped")
        assert len(article.query_selector_all("details.dropped .passage")) == dropped
        flagged = article.query_selector(".votes-flag") is not None
        assert flagged == (claim["verdict"] == "unsupported" and "supported" in votes[cid]), cid
    assert page.query_selector(".votes-flag") is not None
    assert_inert(opened, page_of(folder))


def test_index_on_a_phone_and_its_counts(browser: Any, pages: dict[str, Path]) -> None:
    root = pages["index"]
    path = root / "report.html"
    opened = open_page(browser, path, viewport={"width": 390, "height": 844})
    page = opened.page
    top = "id => document.getElementById(id).getBoundingClientRect().top"
    assert page.evaluate(top, "sessions") < page.evaluate(top, "distribution")
    assert page.is_visible("#bar-legend")
    legend = page.text_content("#bar-legend") or ""
    assert "Unknown" in legend and "no valid judge.json" in legend
    for name in SESSIONS:
        unsupported = sum(1 for c in _claims(pages[name]) if c["verdict"] == "unsupported")
        row = page.query_selector(f"#index tbody tr:has(a:text-is('{name}'))")
        assert row is not None
        cell = row.query_selector("td:last-child")
        assert cell is not None
        text = cell.inner_text()
        if text.split()[:1] == ["agrees"] and unsupported:  # not "disagrees"
            assert f"{unsupported} unsupported" in text
    assert_inert(opened, path)


CELLS = """(tr) => [...tr.children].map(td => {
  const r = td.getBoundingClientRect();
  return [td.className.split(' ').filter(c => c.startsWith('c-')), r.left, r.right, r.top];
})"""


@pytest.mark.parametrize("width", [390, 1280])
def test_index_rows_say_what_is_wrong_first_on_a_phone(
    browser: Any, pages: dict[str, Path], width: int
) -> None:
    path = pages["index"] / "report.html"
    opened = open_page(browser, path, viewport={"width": width, "height": 844})
    page = opened.page
    rows = page.query_selector_all("#index tbody tr")
    assert len(rows) == len(SESSIONS)
    for row in rows:
        cells = [(set(k), (left, right, top)) for k, left, right, top in row.evaluate(CELLS)]
        scores = [v for k, v in cells if "c-score" in k]
        said = {"c-outcome", "c-vs", "c-unsupported", "c-problems", "c-span4"}
        wrong = [v for k, v in cells if k & said]
        assert len(scores) == 5 and len(wrong) >= 3, cells
        if width == 390:
            # Each row is a card: the outcome, judge vs audit and the counts of what is
            # wrong are on the screen, above the five scores; nothing off to the right.
            assert all(left >= 0 and right <= width for left, right, _ in wrong), cells
            assert max(top for *_, top in wrong) < min(top for *_, top in scores), cells
        else:  # the table as it was: one line per session, the scores before the outcome
            assert len({round(top) for _, (*_, top) in cells}) == 1, cells
            outcome = next(v for k, v in cells if "c-outcome" in k)
            assert max(right for _, right, _ in scores) <= outcome[0]
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    # Nothing of the table is hidden to the right of its frame (a scroll bar for one cell).
    wrap = "(e => e.scrollWidth - e.clientWidth)(document.querySelector('.table-wrap'))"
    assert page.evaluate(wrap) <= 1
    assert_inert(opened, path)
