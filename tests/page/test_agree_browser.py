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
    assert_inert(opened, path)
