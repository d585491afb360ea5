"""No view shows 0 for what it did not compute (#33): a session the audit has not run on
gets the deterministic checks run by its page, labelled offline; the index shows no support
count it does not have, and says "not audited" when nothing ran; the index row names the
session's file problems."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.page import inputs, load_page
from tests.support.page_builders import judged_fixture
from tests.support.paths import FIXTURES


def _root(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "root"
    for name in names:
        shutil.copytree(FIXTURES / name, root / name)
    return root


def _rows(html: str) -> dict[str, str]:
    rows = re.findall(r'<tr class="[^"]*" data-session="\d+">(.*?)</tr>', html, re.S)
    return {re.findall(r'<td data-sort="([^"]*)"', row)[0]: row for row in rows}


def test_an_unaudited_session_page_carries_the_offline_checks(tmp_path: Path) -> None:
    folder = _root(tmp_path, "quote-not-in-source") / "quote-not-in-source"
    page = load_page(folder)
    assert not page.audit.present  # no saved audit
    assert page.audit.shown and page.audit.offline and page.audit.here
    assert page.checks["quote_not_in_source"] == 3  # computed, not a 0 for "never ran"
    assert page.checks["number_mismatch"] == 1 and page.checks["no_quote"] == 1
    assert page.agreement is None  # checks run by the page are never paired with a judgment
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 0, result.stderr
    html = (folder / ".judge" / "report.html").read_text(encoding="utf-8")
    assert "Offline checks, run by this page." in html
    assert "quote_not_in_source (3)" in html
    # No model judged support: no 0 for the verdicts only a model gives.
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert "supported (—)" in text and "uncertain (—)" in text and "unsupported (—)" in text
    assert "supported (0)" not in text and "uncertain (0)" not in text
    assert "not audited (10)" in text  # no model judged any claim's support
    assert {c.verdict for f in page.findings for c in f.claims} == {"not audited"}
    assert "(offline: deterministic checks only, run by this page)" in html
    assert not (folder / ".judge" / "citations.json").exists()  # the page saves no audit


def test_the_index_shows_no_support_count_it_did_not_compute(tmp_path: Path) -> None:
    root = _root(tmp_path, "quote-not-in-source", "malformed-finding")
    judged = judged_fixture("clean", root.parent / "judged")
    shutil.move(judged, root / "clean")
    result = CliRunner().invoke(cli, ["report", str(root)])
    assert result.exit_code == 0, result.stderr
    rows = _rows((root / "report.html").read_text(encoding="utf-8"))
    offline = rows["quote-not-in-source"]
    assert (
        "offline" in offline and 'title="found by the deterministic checks, offline">4<' in offline
    )
    assert ">0<" not in offline  # neither sup. 0 nor uns. 0 for what no model judged
    files = rows["malformed-finding"]
    assert "1 problem in the session&#39;s files: findings/sq2.json" in files
    audited = rows["clean"]  # a saved audit that judged support: its counts
    assert "offline" not in audited and "not audited" not in audited


def test_not_audited_when_even_the_checks_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _root(tmp_path, "quote-not-in-source")
    monkeypatch.setattr(inputs, "offline_checks", lambda session: None)
    result = CliRunner().invoke(cli, ["report", str(root)])
    assert result.exit_code == 0, result.stderr
    index = (root / "report.html").read_text(encoding="utf-8")
    row = _rows(index)["quote-not-in-source"]
    assert "not audited" in row and ">0<" not in row
    page = (root / "quote-not-in-source" / ".judge" / "report.html").read_text(encoding="utf-8")
    assert "quote_not_in_source (not audited)" in page
    assert "quote_not_in_source (0)" not in page


# -- counts and banners agree (#33) ------------------------------------------------------


def _said(html: str, pattern: str) -> str:
    found = re.search(pattern, html, re.S)
    assert found is not None, pattern
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(0)).split()).replace("&#39;", "'")


def test_supported_claims_with_a_citation_problem_are_counted_as_the_rate_counts_them(
    tmp_path: Path,
) -> None:
    folder = judged_fixture("dangling-citations", tmp_path)
    page = load_page(folder)
    assert page.verdicts == {"supported": 6}
    assert page.flawed_supported == {"dangling_source": 2}
    assert page.agreement is not None and page.agreement.rate is not None
    # The rate the banner quotes is the supported claims without a citation problem.
    assert round((6 - page.flawed) / 6, 3) == round(page.agreement.rate, 3)
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 0, result.stderr
    html = (folder / ".judge" / "report.html").read_text(encoding="utf-8")
    summary = _said(html, r'<p id="verdict-summary">.*?</p>')
    assert "supported 6" in summary
    assert "2 of the supported claims have a citation problem (dangling_source 2)" in summary
    banner = _said(html, r'<div id="agreement".*?</div>\s*<div class="small muted">.*?</div>')
    assert "support rate 67%" in banner
    assert "counts the 2 supported claims with a citation problem as unsupported" in banner


def test_an_agreeing_judge_with_unsupported_claims_reads_as_one_story(tmp_path: Path) -> None:
    folder = judged_fixture("quote-not-in-source", tmp_path)
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 0, result.stderr
    html = (folder / ".judge" / "report.html").read_text(encoding="utf-8")
    banner = _said(html, r'<div id="agreement".*?</strong>.*?</span>')
    assert "The judge agrees with the citation audit" in banner
    assert "yet" not in banner  # agreeing and finding claims unsupported do not contradict
    assert "4 of 10 claims are unsupported" in banner
    assert "the judge's 2 and the audit's 3 both take them in" in banner


def test_the_empty_findings_page_says_its_reason_once_and_offers_no_filter(
    tmp_path: Path,
) -> None:
    folder = _root(tmp_path, "empty-findings") / "empty-findings"
    ran = CliRunner().invoke(cli, ["run", str(folder), "-q"], env={"ANTHROPIC_API_KEY": ""})
    assert ran.exit_code == 0, ran.stderr
    page = load_page(folder)
    assert page.shared_unknown_reason is not None and page.reason_in_note
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 0, result.stderr
    html = (folder / ".judge" / "report.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    scores = html[html.index('<section id="scores"') : html.index('<section id="audit"')]
    # The note says it; the five Unknown cards do not repeat it.
    assert scores.count("no findings to score") == 1
    assert 'id="filters"' not in html  # no filter for 0 claims
    assert "The session has no claims: there is nothing to audit." in text
    assert "run `judge run` on the session to audit" not in text


def test_the_empty_findings_page_says_the_outcome_reason_twice_at_most(tmp_path: Path) -> None:
    folder = _root(tmp_path, "empty-findings") / "empty-findings"
    ran = CliRunner().invoke(cli, ["run", str(folder), "-q"], env={"ANTHROPIC_API_KEY": ""})
    assert ran.exit_code == 0, ran.stderr
    page = load_page(folder)
    reason = page.run.outcome_reason
    assert len(reason) > 40 and reason in page.run.receipt_note
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 0, result.stderr
    html = (folder / ".judge" / "report.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", html).replace("&#39;", "'").split())
    # On the Outcome line, and in judge.json's own note; the receipt's note and the run's
    # fallbacks point to it.
    assert text.count(reason) == 2
    assert "advisory all-Unknown judge.json written: the outcome's reason, above" in text
    assert "judgment: fallback — the outcome's reason, above" in text
    # Nothing speaks of claims, filters or "the rest" for a session without one.
    assert "Needs attention" not in text and "0 claims in 0 findings" not in text
    assert "ran on the rest" not in text
    assert "no claim was left for the judge or the audit to read" in text
    assert "findings/: findings/" not in text  # the file is named once
    assert "findings/: holds no *.json file" in text
    # "nothing to audit" once, with no counts of nothing and no offline checks "below"
    assert "0 claims, 0 quotes" not in text and "No deterministic problem found" not in text
    assert "the checks below are offline" not in text
    assert "the session has no claims to audit" in text
