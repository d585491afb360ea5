"""PDF text layer: pages, caps, encrypted and broken files (PDFs written by fpdf2)."""

from __future__ import annotations

import pytest

from harness.text.document import Limits, to_document
from harness.text.pdf import pdf_text
from tests.support.pdfs import make_pdf


def test_text_layer_of_every_page() -> None:
    data = make_pdf(["Sea level rose 3.4 mm a year.", "Second page\nwith two lines."])
    d = to_document(data, name="report.pdf")
    assert (d.kind, d.problem, d.cuts) == ("pdf", None, ())
    assert d.plain == "Sea level rose 3.4 mm a year.\nSecond page with two lines."
    assert d.marked == (
        "[page 1]\n\nSea level rose 3.4 mm a year.\n\n[page 2]\n\nSecond page with two lines."
    )


def test_pages_beyond_the_cap_are_cut_and_said() -> None:
    data = make_pdf([f"Page number {n} text." for n in range(1, 8)])
    d = to_document(data, name="long.pdf", limits=Limits(max_pages=3))
    assert d.problem is None
    assert d.plain.splitlines() == [
        "Page number 1 text.",
        "Page number 2 text.",
        "Page number 3 text.",
    ]
    assert d.cuts == ("pages cap: read the first 3 of 7 pages",)


def test_the_time_cap_stops_between_pages_and_is_said() -> None:
    read = pdf_text(make_pdf(["one", "two"]), max_pages=10, max_seconds=-1.0)
    assert read.cuts and read.cuts[0].startswith("time cap: stopped after 0 of 2 pages")


def test_a_pdf_cut_by_the_byte_cap_says_why_it_cannot_be_read() -> None:
    data = make_pdf(["x " * 2000] * 3)
    d = to_document(data, name="cut.pdf", limits=Limits(max_bytes=len(data) // 2))
    assert d.problem is not None and "byte cap" in d.problem
    assert d.cuts and d.cuts[0].startswith("bytes cap")


def test_an_encrypted_pdf_that_needs_a_password_is_a_clear_problem() -> None:
    d = to_document(make_pdf(["secret words"], user_password="pw"), name="locked.pdf")
    assert d.problem == "the PDF is encrypted and needs a password to open"
    assert d.plain == ""


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"%PDF-1.7\n\x00\x01 not really a pdf", "damaged or not a PDF"),
        (b"%PDF-1.4\n%%EOF", "damaged or not a PDF"),
        (b"", "damaged or not a PDF"),
    ],
)
def test_broken_pdfs_are_problems_not_exceptions(data: bytes, why: str) -> None:
    d = to_document(data, name="broken.pdf")
    assert d.kind == "pdf" and d.problem is not None and why in d.problem


def test_a_pdf_without_a_text_layer_is_a_problem() -> None:
    d = to_document(make_pdf([""]), name="scan.pdf")
    assert d.problem is not None and "no text layer" in d.problem


def test_a_pdf_signature_wins_over_a_wrong_content_type_and_name() -> None:
    d = to_document(make_pdf(["real pdf"]), name="page.html", content_type="text/html")
    assert (d.kind, d.plain) == ("pdf", "real pdf")
