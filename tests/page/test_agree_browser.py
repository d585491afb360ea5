"""The agreement section (`judge report ROOT --labels`) in a real browser: its pictures are
drawn, its counts are the report's, and hostile names in the labels run nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from tests.support.page_builders import MARKER

from .test_browser import assert_inert, browser, open_page

__all__ = ["browser"]  # the module's Chromium, shared with the report's own browser tests

LABELLED = Path(__file__).resolve().parents[2] / "sessions_fixture" / "labelled"
HOSTILE = f'<img src=x onerror="{MARKER}">'


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("agree-browser") / "sessions"
    shutil.copytree(LABELLED / "sessions", root)
    runner = CliRunner()
    done = runner.invoke(cli, ["batch", str(root), "--replay-dir", str(LABELLED / "replays"), "-q"])
    assert done.exit_code == 0, done.output
    labels = root.parent / "labels.jsonl"
    extra = {"version": "labels-v1", "kind": "claim", "session": HOSTILE, "claimId": HOSTILE}
    extra |= {"support": "partial", "rater": HOSTILE}
    text = (LABELLED / "labels.jsonl").read_text(encoding="utf-8")
    labels.write_text(text + json.dumps(extra) + "\n", encoding="utf-8")
    made = runner.invoke(cli, ["report", str(root), "--labels", str(labels)])
    assert made.exit_code == 0, made.output
    report = runner.invoke(cli, ["agree", str(labels), "--root", str(root), "--json"])
    return root / "report.html", json.loads(report.stdout)


def test_pictures_are_drawn_with_the_reports_counts(
    browser: Any, index: tuple[Path, dict[str, Any]]
) -> None:
    path, report = index
    opened = open_page(browser, path)
    page = opened.page
    figures = page.eval_on_selector_all(
        "#agreement figure svg",
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height] })",
    )
    assert len(figures) == 2 + len(report["scores"])
    assert all(w > 100 and h > 100 for w, h in figures)
    counts = page.eval_on_selector_all(
        "#agree-confusion text.count", "els => els.map(e => Number(e.textContent))"
    )
    assert counts == [n for row in report["claims"]["confusion"] for n in row]
    dots = page.eval_on_selector_all("#agree-reliability circle.dot", "els => els.length")
    assert dots == sum(1 for b in report["claims"]["calibration"] if b["n"])
    missing = page.inner_text("#agreement")
    assert HOSTILE in missing  # the hostile name is shown, as text
    assert_inert(opened, path)


def test_agreement_reads_on_a_phone(browser: Any, index: tuple[Path, dict[str, Any]]) -> None:
    path, _ = index
    opened = open_page(browser, path, viewport={"width": 390, "height": 800})
    width = opened.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1  # nothing forces a sideways scroll
    frames = opened.page.eval_on_selector_all(
        "#agreement .table-wrap", "els => els.map(e => [e.scrollWidth, e.clientWidth])"
    )
    assert frames and all(inner <= shown + 1 for inner, shown in frames), frames  # nor inside
    assert_inert(opened, path)


# Each chart's text as drawn: its font size times the SVG's scale, in CSS pixels.
DRAWN = """els => els.map(t => {
  const m = t.getScreenCTM();
  return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b)];
})"""


@pytest.mark.parametrize("width", [390, 1280])
def test_chart_labels_are_legible_and_the_mean_stays_on_one_line(
    browser: Any, index: tuple[Path, dict[str, Any]], width: int
) -> None:
    path, _ = index
    opened = open_page(browser, path, viewport={"width": width, "height": 900})
    page = opened.page
    for where in ("#distribution", "#agreement"):
        drawn = page.eval_on_selector_all(f"{where} svg text", DRAWN)
        assert drawn, where
        small = [(text, round(px, 1)) for text, px in drawn if px < 11]
        assert not small, (where, width, small)  # tick labels of 7-8 px were hard to read
    means = page.eval_on_selector_all(
        "#distribution .mean", "els => els.map(e => [e.textContent, e.getClientRects().length])"
    )
    assert len(means) == 5
    assert all(lines == 1 for _, lines in means), means  # "mean 3.29", never "mean / 3.29"
    assert_inert(opened, path)
