"""One answer to "what text does source X say": loader, Read, WebFetch and audit agree.

The same session is read by all four: a cp1252 snapshot, an HTML snapshot whose quote runs
across list items (with hidden text beside it), a NUL-bearing text snapshot, a PDF, and an
encrypted PDF that cannot become text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.agent.fetch import StoredFetcher
from harness.agent.read import read_tool
from harness.audit import audit_session
from harness.audit.agreement import expectation
from harness.errors import ToolError
from harness.session.loader import load_session
from tests.support.blocks import body_of
from tests.support.pdfs import make_pdf

QUOTES = {
    "s1": "Café prices rose 5% – “a record”",
    "s2": "Sea level rose 3.4 mm a year",
    "s3": "revenue grew strongly",
    "s4": "The report appeared in print",
    "s5": "locked words",
}
FABRICATED = ("s3", "revenue fell sharply")  # against the NUL-bearing snapshot


def plant(folder: Path) -> Path:
    src = folder / "sources"
    src.mkdir(parents=True)
    (folder / "findings").mkdir()
    (src / "s1.txt").write_bytes(
        "Intro.\nCafé prices rose 5% – “a record” in 2023.\n".encode("cp1252")
    )
    (src / "s2.html").write_text(
        "<html><head><title>Tides</title><script>var leak = 'SCRIPTED';</script></head><body>"
        "<p hidden>HIDDEN banner</p><h1>Findings</h1>"
        "<ul><li>Sea level rose</li><li>3.4 mm a year</li></ul></body></html>",
        encoding="utf-8",
    )
    (src / "s3.txt").write_bytes(b"slide one\x00\x00\x00 revenue grew strongly\x00 in Q3\n")
    (src / "s4.pdf").write_bytes(make_pdf(["Cover page.", "The report appeared in print."]))
    (src / "s5.pdf").write_bytes(make_pdf(["locked words"], user_password="pw"))
    claims = [
        {"id": f"c-{sid}", "text": f"Claim from {sid}.", "sourceIds": [sid],
         "quotes": [{"sourceId": sid, "text": text}]}
        for sid, text in [*QUOTES.items(), FABRICATED]
    ]  # fmt: skip
    claims[-1]["id"] = "c-fabricated"
    finding = {"id": "sq1", "subQuestion": "What happened?", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = [{"id": sid, "url": f"https://example.org/{sid}"} for sid in QUOTES]
    (folder / "sources.json").write_text(json.dumps({"sources": sources}))
    return folder


def body(out: str) -> str:
    return body_of(out)


def test_loader_read_webfetch_and_audit_agree(tmp_path: Path) -> None:
    folder = plant(tmp_path / "sess")
    session = load_session(folder)

    # The loader: every snapshot counted, the one that cannot become text a visible problem.
    assert sorted(session.snapshots) == ["s1", "s2", "s3", "s4", "s5"]
    unreadable = [(p.file, p.code) for p in session.problems]
    assert unreadable == [("sources/s5.pdf", "snapshot_unreadable")]
    assert "encrypted" in session.problems[0].reason

    # Read: the cp1252 and NUL-bearing files are text, not "binary".
    read_s1 = read_tool(folder, "sources/s1.txt")
    assert "Café prices rose 5% – “a record”" in body(read_s1)
    assert "binary" not in read_s1 and "\ufffd" not in read_s1
    assert "revenue grew strongly" in body(read_tool(folder, "sources/s3.txt"))

    # Stored WebFetch: the same text (marked), no U+FFFD, no hidden or script text.
    fetch = StoredFetcher(folder, session.source_urls(), max_uses=10, store=session.texts)
    page = {sid: body(fetch.fetch(f"https://example.org/{sid}")) for sid in QUOTES if sid != "s5"}
    assert "Café prices rose 5% – “a record” in 2023." in page["s1"]
    assert "\ufffd" not in page["s1"]
    assert page["s2"] == "Title: Tides\n\n# Findings\n\n- Sea level rose\n- 3.4 mm a year"
    assert "revenue grew strongly" in page["s3"]
    assert "The report appeared in print." in page["s4"]
    own = StoredFetcher(folder, session.source_urls(), max_uses=10)  # a store of its own
    assert body(own.fetch("https://example.org/s1")) == page["s1"]

    # The audit: every real quote found, the fabricated one caught, the locked PDF said.
    report = audit_session(session, offline=True)
    problems = {c.claimId: [p.check for p in c.problems] for c in report.claims}
    assert problems == {
        "c-s1": [], "c-s2": [], "c-s3": [], "c-s4": [],
        "c-s5": ["source_unreadable"],
        "c-fabricated": ["quote_not_in_source"],
    }  # fmt: skip
    assert report.totals.checks.source_unreadable == 1
    # The unreadable claim gets half credit, the fabricated none: (4 + 0.5 + 0) / 6.
    expected = expectation(report)
    assert expected is not None and expected.rate == round(4.5 / 6, 3)


def test_a_symlinked_source_is_refused_alike_by_loader_read_webfetch_and_audit(
    tmp_path: Path,
) -> None:
    """The same source planted as a link to an outside file: no reader shows its text."""
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-CANARY the linked quote\n")
    folder = plant(tmp_path / "sess")
    (folder / "sources" / "s6.txt").symlink_to(outside)
    finding = json.loads((folder / "findings" / "sq1.json").read_text())
    finding["claims"].append(
        {
            "id": "c-s6",
            "text": "Claim from s6.",
            "sourceIds": ["s6"],
            "quotes": [{"sourceId": "s6", "text": "the linked quote"}],
        }
    )
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = json.loads((folder / "sources.json").read_text())
    sources["sources"].append({"id": "s6", "url": "https://example.org/s6"})
    (folder / "sources.json").write_text(json.dumps(sources))
    session = load_session(folder)

    # The loader: not a snapshot, and said so.
    assert "s6" not in session.snapshots
    assert ("sources/s6.txt", "outside_session") in [(p.file, p.code) for p in session.problems]
    # Read: refused, nothing of the outside file.
    with pytest.raises(ToolError) as refused:
        read_tool(folder, "sources/s6.txt")
    assert "refused" in refused.value.message and "OUTSIDE-CANARY" not in refused.value.message
    # Stored WebFetch: no snapshot to serve.
    fetch = StoredFetcher(folder, session.source_urls(), max_uses=10, store=session.texts)
    with pytest.raises(ToolError) as unserved:  # a refusal is an error result for the model
        fetch.fetch("https://example.org/s6")
    assert "OUTSIDE-CANARY" not in unserved.value.message
    # The audit: the quote is not checked against the outside text, and nothing leaks.
    report = audit_session(session, offline=True)
    assert "OUTSIDE-CANARY" not in report.to_json()
    claim = next(c for c in report.claims if c.claimId == "c-s6")
    assert "quote_not_in_source" not in [p.check for p in claim.problems]  # no text to hold
