"""A PDF's text layer, on PDFium (pypdfium2), bounded in pages and time.

Chosen by measurement (``bench/bench_text.py``): PDFium, the engine of Chrome's viewer,
reads the text layer many times faster than the pure-Python pypdf and is robust on
damaged files. Only the text layer is read: a scanned PDF without one gives no text
(said as a problem, not as an empty success). PDFium is not thread-safe, so every call
holds one lock.

Bounds: at most ``max_pages`` pages are read, and the clock is checked between pages
against ``max_seconds`` (one page is never interrupted); what was left out is said in
``cuts``. An encrypted PDF that needs a password, or one PDFium cannot open, gives a
clear ``problem``; no exception escapes :func:`pdf_text`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

__all__ = ["PdfText", "pdf_text"]

_LOCK = threading.Lock()


@dataclass(slots=True)
class PdfText:
    """The text of each page read, the page count, and what was cut or went wrong."""

    pages: list[str] = field(default_factory=list)
    page_count: int = 0
    cuts: list[str] = field(default_factory=list)
    problem: str | None = None


def _why(exc: BaseException) -> str:
    message = str(exc)
    if "password" in message.lower():
        return "the PDF is encrypted and needs a password to open"
    if "format" in message.lower():
        return "the PDF is damaged or not a PDF (PDFium: data format error)"
    return f"PDFium cannot open the PDF ({message[:200]})"


def pdf_text(
    data: bytes, *, max_pages: int, max_seconds: float, truncated: bool = False
) -> PdfText:
    """Read the text layer of the PDF in ``data``; never raises.

    ``truncated`` says ``data`` was cut by a byte cap (so a failure to open is
    explained by the cut).
    """
    out = PdfText()
    try:
        import pypdfium2 as pdfium  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - a dependency of the package
        out.problem = "PDF text cannot be read: pypdfium2 is not installed"
        return out
    deadline = time.monotonic() + max_seconds
    with _LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except Exception as exc:
            out.problem = _why(exc)
            if truncated:
                out.problem += " — it was cut by the byte cap, which a PDF does not survive"
            return out
        try:
            out.page_count = len(document)
            wanted = min(out.page_count, max_pages)
            for index in range(wanted):
                if time.monotonic() > deadline:
                    out.cuts.append(
                        f"time cap: stopped after {index} of {out.page_count} pages "
                        f"({max_seconds:g} s)"
                    )
                    break
                try:
                    page = document[index]
                    textpage = page.get_textpage()
                    try:
                        text = textpage.get_text_bounded()
                    finally:
                        textpage.close()
                        page.close()
                except Exception as exc:
                    out.cuts.append(f"page {index + 1} could not be read ({str(exc)[:120]})")
                    text = ""
                out.pages.append(text.replace("\r\n", "\n").replace("\r", "\n"))
            else:
                if out.page_count > max_pages:
                    out.cuts.append(
                        f"pages cap: read the first {max_pages} of {out.page_count} pages"
                    )
        except Exception as exc:  # defensive: PDFium on a hostile file
            out.problem = f"PDFium failed reading the PDF ({str(exc)[:200]})"
        finally:
            document.close()
    if out.problem is None and out.page_count == 0:
        out.problem = "the PDF has no pages"
    elif out.problem is None and not any(p.strip() for p in out.pages):
        out.problem = "the PDF has no text layer (a scan or images only); its text cannot be read"
    return out
