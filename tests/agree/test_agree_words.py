"""What `make agree` and the agreement page say of themselves (#33): the stand-ins are named,
the page is titled for what it measures and says which command wrote it, and the per-problem
rows are not called deterministic (`source_does_not_support` is a model's reading)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from harness.cli import cli
from tests.support.paths import FIXTURES, REPO

LABELLED = FIXTURES / "labelled"


def test_make_agree_says_its_replies_are_stand_ins() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^agree: .*\n((?:\t.+\n)+)", makefile, re.M)
    assert recipe is not None
    first = recipe[1].splitlines()[0]
    assert first.startswith("\t@echo") and "stand-ins" in first  # said before any figure


def test_the_agreement_page_names_itself_and_its_writer(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    shutil.copytree(LABELLED / "sessions", root)
    batch = CliRunner().invoke(
        cli, ["batch", str(root), "--replay-dir", str(LABELLED / "replays"), "-q"]
    )
    assert batch.exit_code == 0, batch.stderr
    page = tmp_path / "agree.html"
    labels = str(LABELLED / "labels.jsonl")
    ran = CliRunner().invoke(cli, ["agree", labels, "--root", str(root), "--html", str(page)])
    assert ran.exit_code == 0, ran.stderr
    html = page.read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", html, re.S)
    assert title is not None and labels not in title[1]
    assert "against human labels" in title[1]
    assert "Written by <code>judge agree</code>" in html
    assert "Written by <code>judge report</code>" not in html
    assert "deterministic problem" not in html
    assert "<th>problem kind</th>" in html
