"""PDFs written by fpdf2 for the tests: real text layers, several pages, encrypted."""

from __future__ import annotations

from fpdf import FPDF


def make_pdf(pages: list[str], *, user_password: str | None = None) -> bytes:
    """A PDF with one page per string (lines split on newlines), Helvetica, A4."""
    pdf = FPDF()
    pdf.set_compression(True)
    for text in pages:
        pdf.add_page()
        pdf.set_font("helvetica", size=11)
        pdf.multi_cell(0, 6, text)
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    return bytes(pdf.output())
