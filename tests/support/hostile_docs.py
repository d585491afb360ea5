"""Hostile documents for the tests: bombs for the native parsers, built from parameters.

- :func:`self_drawing_pdf`: a PDF whose page draws a form XObject that draws itself
  ``times`` times (raw PDF bytes, under 1 KB): PDFium allocates until the process aborts
  (SIGABRT under a 2 GiB limit, measured) — the attack of issue 22 §2;
- :func:`page_tree_cycle_pdf`: a page tree whose ``/Kids`` contains itself;
- :func:`nested_html`: ``depth`` nested elements (lexbor's tree building is superlinear:
  80,000 nested ``<div>`` take 8-9 s of CPU, measured);
- :func:`misnested_html`: runs of formatting elements closed out of order, which the
  HTML5 adoption agency re-opens (1.9 MB take about 20 s of CPU, measured).
"""

from __future__ import annotations


def raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF of numbered objects (1 is the catalog) with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(dictionary: bytes, content: bytes) -> bytes:
    return (
        b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    )


def self_drawing_pdf(times: int = 2, text: bytes = b"hello") -> bytes:
    """One page that draws form /X0, which shows ``text`` and draws itself ``times`` times."""
    resources = b"/Resources << /XObject << /X0 5 0 R >> /Font << /F1 6 0 R >> >>"
    form = b"BT /F1 12 Tf 10 10 Td (" + text + b") Tj ET" + b" /X0 Do" * times
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] "
            + resources
            + b" /Contents 4 0 R >>",
            _stream(b"", b"/X0 Do"),
            _stream(b"/Type /XObject /Subtype /Form /BBox [0 0 200 200] " + resources, form),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def page_tree_cycle_pdf() -> bytes:
    """A page tree node that is its own kid (and a real page beside it)."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            _stream(b"", b"BT /F1 12 Tf 10 10 Td (cycle) Tj ET"),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def nested_html(depth: int, tag: str = "div", text: str = "deep") -> bytes:
    return (f"<html><body>{f'<{tag}>' * depth}{text}").encode()


def misnested_html(runs: int, text: str = "x") -> bytes:
    """``runs`` groups of eight formatting elements closed by the first one (``</a>``)."""
    return ("<html><body>" + f"<a><b><i><u><s><em><strong><code>{text}</a>" * runs).encode()
