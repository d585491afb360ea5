"""The report pages in a real browser (Debian's Chromium, headless, via Playwright).

Never skipped: `.ci/run` installs chromium when it is missing. Checks, on the pages of the
`prompt-injection` and `large` fixtures (judged from their replays) and of a hostile
session: the scores and every claim id and verdict are in the rendered DOM, no injected
script ran, no request but the page itself was attempted, and the filters work.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from harness.page import build
from scripts.browser import launch
from tests.support.page_builders import MARKER, hostile_session, judged_fixture

FIXTURE_PAGES = ["prompt-injection", "large"]
HOSTILE = {
    "script": f"<script>{MARKER}</script>",
    "img": f'<img src=x onerror="{MARKER}">',
    "svg": f"<svg onload={MARKER}>",
    "breakout": f"</style></textarea>--><script>{MARKER}</script>",
    "attribute": f'" onmouseover="{MARKER}" autofocus onfocus="{MARKER}',
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-browser")
    out: dict[str, Path] = {}
    for name in FIXTURE_PAGES:
        out[name] = judged_fixture(name, root)
    for name, payload in HOSTILE.items():
        out[f"hostile-{name}"] = hostile_session(root / f"hostile-{name}", payload)
    build(root)  # the index, which writes every session's page
    out["index"] = root
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


class Opened:
    def __init__(self, page: Page, requests: list[str], console: list[str]) -> None:
        self.page, self.requests, self.console = page, requests, console


def open_page(browser: Any, path: Path, **context: Any) -> Opened:
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    requests: list[str] = []
    console: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.goto(path.as_uri())
    if context.get("java_script_enabled", True):
        page.wait_for_selector("html[data-ready='1']", state="attached")
    return Opened(page, requests, console)


def page_of(folder: Path) -> Path:
    return folder / ".judge" / "report.html"


def rendered_claims(page: Page) -> list[tuple[str, str]]:
    pairs = page.eval_on_selector_all(
        "article.claim",
        "els => els.map(e => [e.querySelector('.cid').textContent, e.dataset.verdict])",
    )
    return sorted((a, b) for a, b in pairs)


def assert_inert(opened: Opened, path: Path) -> None:
    page = opened.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.requests == [path.as_uri()]  # nothing but the page itself
    assert opened.console == []  # no CSP violation, no script error


@pytest.mark.parametrize("name", FIXTURE_PAGES)
def test_fixture_page_shows_scores_and_every_claim(
    browser: Any, pages: dict[str, Path], name: str
) -> None:
    folder = pages[name]
    path = page_of(folder)
    opened = open_page(browser, path)
    page = opened.page
    judge = json.loads((folder / "judge.json").read_text())
    for dim, score in judge["scores"].items():
        shown = page.text_content(f".score[data-dimension={dim}] .value")
        assert shown == str(score)
    citations = json.loads((folder / ".judge" / "citations.json").read_text())
    expected = sorted((c["claimId"], c["verdict"]) for c in citations["claims"])
    assert len(expected) == citations["totals"]["claims"] > 0
    assert rendered_claims(page) == expected
    assert page.is_visible("#agreement")
    assert page.text_content("#h-run") == "The run"
    calls = json.loads((folder / ".judge" / "run.json").read_text())["toolCalls"]
    assert page.eval_on_selector_all("#tool-calls tbody tr", "rs => rs.length") == len(calls)
    assert_inert(opened, path)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_content_runs_nothing(browser: Any, pages: dict[str, Path], name: str) -> None:
    path = page_of(pages[f"hostile-{name}"])
    opened = open_page(browser, path)
    page = opened.page
    page.hover("article.claim .text")
    page.keyboard.press("Tab")
    assert_inert(opened, path)
    assert HOSTILE[name] in (page.text_content("#judge-note") or "")  # shown, as text
    assert page.eval_on_selector_all("img, iframe, object, embed", "els => els.length") == 0


def test_filters_hide_and_show_claims(browser: Any, pages: dict[str, Path]) -> None:
    folder = pages["large"]
    opened = open_page(browser, page_of(folder))
    page = opened.page
    citations = json.loads((folder / ".judge" / "citations.json").read_text())["claims"]
    total = len(citations)
    visible = "els => els.filter(e => e.offsetParent !== null).length"
    assert page.is_visible("#filters")
    assert page.eval_on_selector_all("article.claim", visible) == total

    supported = sum(1 for c in citations if c["verdict"] == "supported")
    assert 0 < supported < total
    page.uncheck("input[name=verdict][value=supported]")
    assert page.eval_on_selector_all("article.claim", visible) == total - supported
    assert page.eval_on_selector_all("article.claim[data-verdict=supported]", visible) == 0
    assert page.text_content("#shown") == str(total - supported)
    page.check("input[name=verdict][value=supported]")

    no_quote = sum(1 for c in citations if any(p["check"] == "no_quote" for p in c["problems"]))
    assert no_quote > 0
    page.select_option("#problem", "no_quote")
    assert page.eval_on_selector_all("article.claim", visible) == no_quote
    page.select_option("#problem", "")

    target = citations[17]["claimId"]
    page.fill("#q", target)
    shown = page.eval_on_selector_all(
        "article.claim",
        "els => els.filter(e => e.offsetParent !== null)"
        ".map(e => e.querySelector('.cid').textContent)",
    )
    assert target in shown and len(shown) < total
    page.fill("#q", "")
    assert page.eval_on_selector_all("article.claim", visible) == total


def test_readable_without_scripts(browser: Any, pages: dict[str, Path]) -> None:
    folder = pages["prompt-injection"]
    opened = open_page(browser, page_of(folder), java_script_enabled=False)
    page = opened.page
    assert not page.is_visible("#filters")  # the controls need the script: hidden without
    citations = json.loads((folder / ".judge" / "citations.json").read_text())["claims"]
    visible = "els => els.filter(e => e.offsetParent !== null).length"
    assert page.eval_on_selector_all("article.claim", visible) == len(citations)


def test_usable_on_a_phone(browser: Any, pages: dict[str, Path]) -> None:
    opened = open_page(browser, page_of(pages["large"]), viewport={"width": 390, "height": 844})
    width = opened.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # nothing forces sideways scrolling


def test_index_sorts_and_links(browser: Any, pages: dict[str, Path]) -> None:
    root = pages["index"]
    path = root / "report.html"
    opened = open_page(browser, path)
    page = opened.page
    assert_inert(opened, path)
    names = page.eval_on_selector_all(
        "#index tbody tr td:first-child", "t => t.map(c => c.textContent.trim())"
    )
    assert sorted(names) == sorted(p.name for p in pages.values() if p != root)
    assert page.eval_on_selector_all(".chart svg rect", "r => r.length") == 5 * 8
    hrefs = page.eval_on_selector_all("#index a", "a => a.map(x => x.href)")
    assert len(hrefs) == len(names)
    for href in hrefs:
        assert href.startswith("file://") and Path(href.removeprefix("file://")).is_file()

    column = 1 + 1  # citationAccuracy

    def scores() -> list[str]:
        return page.eval_on_selector_all(
            f"#index tbody tr td:nth-child({column})", "t => t.map(c => c.dataset.sort)"
        )

    page.click(f"#index thead th:nth-child({column}) button")
    ascending = [s for s in scores() if s]
    assert ascending == sorted(ascending, key=int)
    page.click(f"#index thead th:nth-child({column}) button")
    descending = [s for s in scores() if s]
    assert descending == sorted(descending, key=int, reverse=True)
    assert page.get_attribute(f"#index thead th:nth-child({column})", "aria-sort") == "descending"
