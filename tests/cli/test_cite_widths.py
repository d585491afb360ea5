"""`judge cite`'s table at a terminal's width: no line wider, problems folded, ids cut."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from harness.audit import audit_folder
from harness.audit.report import CitationReport
from harness.cli import cli
from harness.cli.cite_table import table_lines
from tests.support.paths import FIXTURES
from tests.support.tried import count

WIDTHS = [40, 60, 80, 120, 200]


def _report(tmp_path: Path, name: str = "quote-not-in-source") -> CitationReport:
    shutil.copytree(FIXTURES / name, tmp_path / name)
    return audit_folder(tmp_path / name, offline=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_line_is_wider_and_each_claim_starts_one_line(tmp_path: Path, width: int) -> None:
    report = _report(tmp_path)
    lines = table_lines(report, width)
    assert all(cell_len(line) <= width for line in lines), [x for x in lines if len(x) > width]
    for claim in report.claims:
        assert sum(line.startswith(f"  {claim.claimId} ") for line in lines) == 1
    # Nothing of the problems is lost up to the wide table's own 160 characters: the
    # folded words, joined, are the wide line's.
    wide = table_lines(report)
    words = " ".join(" ".join(lines).split())
    for claim in report.claims:
        row = next(x for x in wide if x.startswith(f"  {claim.claimId} "))
        problems = row.split(claim.verdict, 1)[1].strip()
        assert " ".join(problems.split()) in words
    assert any("matches 96.9% of its words" in " ".join(x.split()) for x in [words])


def test_without_a_width_the_table_is_wide_as_before(tmp_path: Path) -> None:
    report = _report(tmp_path)
    lines = table_lines(report)
    rows = [x for x in lines if x.startswith("  sq")]
    assert len(rows) == len(report.claims)  # one line per claim, however long
    assert max(len(x) for x in rows) > 100


@pytest.mark.parametrize("width", WIDTHS)
def test_long_and_wide_ids_are_cut_to_their_share(tmp_path: Path, width: int) -> None:
    report = _report(tmp_path, "dangling-citations")
    report.claims[0].claimId = "漢字-" * 30 + "end"
    report.claims[0].findingId = "f" * 50
    lines = table_lines(report, width)
    assert all(cell_len(line) <= width for line in lines)
    assert any(line.startswith("  漢字-") and "…" in line for line in lines)


@pytest.mark.parametrize(("columns", "widest"), [("60", 60), ("80", 80)])
def test_cite_follows_columns_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: str, widest: int
) -> None:
    shutil.copytree(FIXTURES / "quote-not-in-source", tmp_path / "s")
    monkeypatch.setenv("COLUMNS", columns)
    result = CliRunner().invoke(cli, ["cite", str(tmp_path / "s"), "--offline", "-q"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert "claim" in lines[2] or "claim" in lines[1]
    assert max(cell_len(x) for x in lines) <= widest


def test_cite_into_a_log_file_stays_wide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURES / "quote-not-in-source", tmp_path / "s")
    monkeypatch.delenv("COLUMNS", raising=False)
    result = CliRunner().invoke(cli, ["cite", str(tmp_path / "s"), "--offline", "-q"])
    assert result.exit_code == 0
    assert max(len(x) for x in result.stderr.splitlines()) > 100  # not folded to 80


_ID = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=70)


@given(ids=st.lists(_ID, min_size=1, max_size=3), width=st.integers(40, 200))
def test_any_ids_fit_any_width(hostile: CitationReport, ids: list[str], width: int) -> None:
    count("cite widths: hostile ids")
    report = hostile.model_copy(deep=True)
    for claim, claim_id in zip(report.claims, ids, strict=False):
        claim.claimId = claim_id
        claim.findingId = claim_id[::-1]
    lines = table_lines(report, width)
    assert all(cell_len(line) <= width for line in lines), (width, lines)
    assert "\x1b" not in "".join(lines)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> CitationReport:
    return _report(tmp_path_factory.mktemp("hostile"))
