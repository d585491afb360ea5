"""`judge compare --html` in a real browser (Chromium, as the report's pages are checked):
its pictures are drawn with the result's figures, a hostile session name runs nothing, and
the page reads on a phone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from tests.page.test_browser import assert_inert, browser, open_page
from tests.support.compare_roots import LABELLED, edit_run, set_scores
from tests.support.page_builders import MARKER

__all__ = ["browser"]  # the report tests' module Chromium

HOSTILE = f'<img src=x onerror="{MARKER}">'


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    base = tmp_path_factory.mktemp("compare-browser")
    roots = []
    for label in ("A", "B"):
        root = base / label
        root.mkdir()
        for name in ("eqa-01", "eqa-06", "eqa-07"):
            shutil.copytree(LABELLED / "sessions" / name, root / name)
        shutil.copytree(LABELLED / "sessions" / "eqa-09", root / HOSTILE)
        replays = base / f"replays-{label}"
        shutil.copytree(LABELLED / "replays", replays)
        for suffix in (".jsonl", ".cite.jsonl"):
            shutil.copyfile(
                LABELLED / "replays" / f"eqa-09{suffix}", replays / f"{HOSTILE}{suffix}"
            )
        done = CliRunner().invoke(cli, ["batch", str(root), "--replay-dir", str(replays), "-q"])
        assert done.exit_code == 0, done.stderr
        roots.append(root)
    a, b = roots
    set_scores(b / "eqa-06", factualAccuracy=1, citationAccuracy=5)
    set_scores(b / HOSTILE, factualAccuracy=5)
    edit_run(b / "eqa-07", model="claude-other-model")
    out = base / "out" / "compare.html"
    out.parent.mkdir()
    made = CliRunner().invoke(cli, ["compare", str(a), str(b), "--html", str(out), "--json"])
    assert made.exit_code == 0, made.stderr
    return out, json.loads(made.stdout)


def test_the_pictures_carry_the_results_figures(
    browser: Any, page: tuple[Path, dict[str, Any]]
) -> None:
    path, result = page
    opened = open_page(browser, path)
    p = opened.page
    slopes = p.eval_on_selector_all(
        "svg.slope",
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height] })",
    )
    assert len(slopes) == 5 and all(w > 100 and h > 80 for w, h in slopes)
    lines = p.eval_on_selector_all(
        "figure[data-dimension='factualAccuracy'] svg.slope line:not(.axis)", "els => els.length"
    )
    pairs = {
        (x["scoresA"]["factualAccuracy"], x["scoresB"]["factualAccuracy"]) for x in result["pairs"]
    }
    assert lines == len(pairs)  # one line per distinct pair of scores
    text = p.inner_text("body")
    assert text.index("Warning: the sides were judged with different judge models") < text.index(
        "Scores, B"
    )
    assert HOSTILE in text  # the hostile name is shown, as text
    links = p.eval_on_selector_all("#movers a", "els => els.map(a => a.getAttribute('href'))")
    assert links and all(h.endswith("/.judge/report.html") for h in links)
    assert_inert(opened, path)


def test_the_page_reads_on_a_phone(browser: Any, page: tuple[Path, dict[str, Any]]) -> None:
    path, _ = page
    opened = open_page(browser, path, viewport={"width": 390, "height": 800})
    width = opened.page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1  # nothing forces a sideways scroll
    assert_inert(opened, path)
