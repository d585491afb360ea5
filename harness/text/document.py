"""One document's text, in the two renderings every reader needs, from any bytes.

:func:`to_document` is the single entry point: it chooses what the bytes are (content
type, then file extension, then sniffing: leading ``%PDF-`` is a PDF, ``<!doctype html``/``<html``
is HTML; a ``%PDF-`` signature wins over a wrong content type), decodes them by
:mod:`harness.text.decode`, reduces HTML (:mod:`harness.text.html`) or a PDF
(:mod:`harness.text.pdf`) to blocks, and returns a :class:`Document`:

* ``plain``: the text quotes are matched against: no structure markers, one block per
  line, whitespace inside a block folded to single spaces. A table row is its cells
  joined by spaces, so a quote that runs across list items or cells is found once the
  matcher folds line breaks;
* ``marked``: what the model reads: ``Title:``, headings as ``#``, list items as ``- ``,
  table cells joined by `` | ``, PDF pages marked ``[page N]``; text, Markdown and JSON
  are shown as they are;
* ``blocks``: (start, end) character offsets of each block in ``plain``, so a passage can
  carry offsets into the plain text (``plain[start:end]`` is the block);
* ``cuts``: what was left out and why (the byte cap, the page cap, the time cap), never
  silent; ``problem``: why the bytes cannot become text (binary, a PDF without a text
  layer, an encrypted PDF, a page with no visible text), else None.

It never raises on any input (a property test feeds it arbitrary bytes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from harness import config
from harness.clock import Deadline
from harness.text.decode import binary_kind, clean_controls, decode
from harness.text.html import Block, html_blocks
from harness.text.pdf import pdf_text

__all__ = ["DEFAULT_LIMITS", "KINDS", "Document", "Kind", "Limits", "to_document"]

Kind = Literal["text", "markdown", "json", "html", "pdf"]
KINDS: tuple[Kind, ...] = ("text", "markdown", "json", "html", "pdf")


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on one document: bytes read, PDF pages read, seconds spent on a PDF."""

    max_bytes: int = config.DOCUMENT_BYTES
    max_pages: int = config.DOCUMENT_PDF_PAGES
    max_seconds: float = config.DOCUMENT_PDF_SECONDS


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Document:
    """A document as text (see the module docstring for each field)."""

    name: str
    kind: Kind
    plain: str = ""
    marked: str = ""
    encoding: str | None = None
    title: str | None = None
    blocks: tuple[tuple[int, int], ...] = ()
    cuts: tuple[str, ...] = ()
    problem: str | None = None
    size: int = 0  # bytes given (after any cap the caller applied)

    @property
    def readable(self) -> bool:
        return self.problem is None


_MIME_KIND: dict[str, Kind] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "application/json": "json",
    "text/json": "json",
    "application/ld+json": "json",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
}
_EXT_KIND: dict[str, Kind] = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
}
_HTML_START = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")


def parse_content_type(header: str | None) -> tuple[str, str | None]:
    """(lower-case media type, charset parameter or None) of a Content-Type header."""
    if not header:
        return "", None
    mime, *params = str(header).split(";")
    charset = None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return mime.strip().lower(), charset


def _extension(name: str) -> str:
    path = name
    if "://" in name:
        try:
            path = urlsplit(name).path
        except ValueError:
            path = name
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return ""
    return path[dot:].lower()


_LEADING = b"\xef\xbb\xbf \t\r\n\x00"


def choose_kind(data: bytes, name: str, mime: str) -> Kind:
    """What the bytes are: a PDF signature first, then content type, extension, sniffing.

    The signature counts only as the file's leading bytes (after a BOM or blank space): an
    HTML page whose text says ``%PDF-1.7`` is still HTML.
    """
    if data[:1024].lstrip(_LEADING).startswith(b"%PDF-"):
        return "pdf"
    if mime in _MIME_KIND:
        return _MIME_KIND[mime]
    ext = _extension(name)
    if ext in _EXT_KIND:
        return _EXT_KIND[ext]
    start = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith(_HTML_START) and b"<html" in data[:4096].lower():
        return "html"
    return "text"


# -- building the renderings -----------------------------------------------------------


def _squash(text: str) -> str:
    return " ".join(text.split())


def _plain(texts: list[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    spans: list[tuple[int, int]] = []
    at = 0
    kept: list[str] = []
    for text in texts:
        if not text:
            continue
        kept.append(text)
        spans.append((at, at + len(text)))
        at += len(text) + 1
    return "\n".join(kept), tuple(spans)


_MD_MARK = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+(?:\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)")
_MD_RULE = re.compile(
    r"^\s{0,3}(?:[-*_]\s*){3,}$|^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$"
)


_BLANK_LINES = re.compile(r"\n[ \t\f\v]*\n")


def _paragraphs(text: str, markdown: bool) -> list[str]:
    """Blocks of a text: runs of non-blank lines, each folded to one line."""
    if not markdown:
        return [p for p in (" ".join(chunk.split()) for chunk in _BLANK_LINES.split(text)) if p]
    out: list[str] = []
    lines: list[str] = []
    for line in text.split("\n"):
        if markdown:
            if _MD_RULE.match(line):
                line = ""
            else:
                starts_block = _MD_MARK.match(line) is not None or line.lstrip().startswith("|")
                line = _MD_MARK.sub("", line, count=1)
                if "|" in line and line.lstrip().startswith("|"):
                    line = " ".join(c.strip() for c in line.strip().strip("|").split("|"))
                if starts_block and lines:  # a heading, list item or row is its own block
                    out.append(_squash(" ".join(lines)))
                    lines = []
        if line.strip():
            lines.append(line)
        elif lines:
            out.append(_squash(" ".join(lines)))
            lines = []
    if lines:
        out.append(_squash(" ".join(lines)))
    return out


def _marked_html(title: str | None, blocks: list[Block]) -> str:
    parts: list[str] = []
    previous = ""
    for block in blocks:
        if block.kind == "heading":
            line = "#" * block.level + " " + block.text
        elif block.kind == "item":
            line = "- " + block.text
        elif block.kind == "row":
            line = " | ".join(block.cells)
        else:
            line = block.text
        tight = block.kind == previous and block.kind in ("item", "row", "pre")
        if parts:
            parts.append("\n" if tight else "\n\n")
        parts.append(line)
        previous = block.kind
    body = "".join(parts)
    if title:
        return f"Title: {title}\n\n{body}" if body else f"Title: {title}"
    return body


def _pdf_paragraphs(page: str) -> list[str]:
    out: list[str] = []
    current = ""
    for raw in page.split("\n"):
        line = raw.strip()
        if not line:
            if current:
                out.append(_squash(current))
                current = ""
            continue
        if current.endswith(("\ufffe", "\x02", "\u00ad")):  # a soft hyphen broke a word
            current = current[:-1] + line
        else:
            current = f"{current} {line}" if current else line
    if current:
        out.append(_squash(current))
    return [clean_controls(p).replace("\ufffe", "").strip() for p in out if p]


def _from_pdf(data: bytes, name: str, limits: Limits, truncated: bool, cuts: list[str]) -> Document:
    read = pdf_text(
        data, max_pages=limits.max_pages, max_seconds=limits.max_seconds, truncated=truncated
    )
    cuts.extend(read.cuts)
    texts: list[str] = []
    marked: list[str] = []
    for number, page in enumerate(read.pages, start=1):
        paragraphs = [_squash(p) for p in _pdf_paragraphs(page)]
        texts.extend(paragraphs)
        if paragraphs:
            marked.append(f"[page {number}]\n\n" + "\n\n".join(paragraphs))
    plain, spans = _plain(texts)
    return Document(
        name=name,
        kind="pdf",
        plain=plain,
        marked="\n\n".join(marked),
        blocks=spans,
        cuts=tuple(cuts),
        problem=read.problem,
        size=len(data),
    )


def to_document(
    data: bytes,
    *,
    name: str,
    content_type: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    truncated: bool = False,
    deadline: Deadline | None = None,
    isolated: bool = True,
) -> Document:
    """The text of ``data`` (a file called, or a page fetched from, ``name``).

    ``truncated`` says the caller already cut ``data`` at a byte cap (it is then said in
    ``cuts``); data longer than ``limits.max_bytes`` is cut here. A PDF or HTML page is
    converted in a worker process (:mod:`harness.text.isolate`) unless ``isolated`` is
    False, and never past ``deadline`` (the run's, harness.clock). Never raises
    (but a signal's :class:`~harness.interrupt.Interrupted`).
    """
    try:
        return _to_document(data, name, content_type, limits, truncated, deadline, isolated)
    except Exception as exc:  # a bug must not take a reader down: say it instead
        return Document(
            name=name,
            kind="text",
            problem=f"could not be turned into text ({type(exc).__name__}: {str(exc)[:200]})",
            size=len(data),
        )


def _to_document(
    data: bytes,
    name: str,
    content_type: str | None,
    limits: Limits,
    truncated: bool,
    deadline: Deadline | None,
    isolated: bool,
) -> Document:
    data = bytes(data)
    cuts: list[str] = []
    if len(data) > limits.max_bytes:
        cuts.append(f"bytes cap: only the first {limits.max_bytes:,} of {len(data):,} bytes read")
        data = data[: limits.max_bytes]
        truncated = True
    elif truncated:
        cuts.append(f"bytes cap: only the first {len(data):,} bytes read")
    mime, charset = parse_content_type(content_type)
    kind = choose_kind(data, name, mime)
    if isolated and kind in ("pdf", "html"):
        return _isolated(data, name, kind, charset, limits, truncated, deadline, cuts)
    return _convert(data, name, kind, charset, limits, truncated, cuts)


def _isolated(
    data: bytes,
    name: str,
    kind: Kind,
    charset: str | None,
    limits: Limits,
    truncated: bool,
    deadline: Deadline | None,
    cuts: list[str],
) -> Document:
    from harness.text import isolate  # only a PDF or HTML page pays for the worker

    request = isolate.Request(
        kind, charset, limits.max_bytes, limits.max_pages, limits.max_seconds, truncated
    )
    reply = isolate.convert(request, data, deadline)
    if isinstance(reply, isolate.Failure):
        return Document(
            name=name, kind=kind, cuts=tuple(cuts), problem=reply.reason, size=len(data)
        )
    return _from_reply(reply, name, kind, cuts, len(data))


def _from_reply(
    reply: dict[str, object], name: str, kind: Kind, cuts: list[str], size: int
) -> Document:
    """A worker's reply as a Document (a field of the wrong type is a broken reply)."""

    def text(key: str) -> str:
        value = reply.get(key)
        return value if isinstance(value, str) else ""

    def maybe(key: str) -> str | None:
        value = reply.get(key)
        return value if isinstance(value, str) else None

    raw_blocks = reply.get("blocks")
    blocks: list[tuple[int, int]] = []
    if isinstance(raw_blocks, list):
        for pair in raw_blocks:
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int) for v in pair):
                blocks.append((pair[0], pair[1]))
    raw_cuts = reply.get("cuts")
    more = [c for c in raw_cuts if isinstance(c, str)] if isinstance(raw_cuts, list) else []
    return Document(
        name=name,
        kind=kind,
        plain=text("plain"),
        marked=text("marked"),
        encoding=maybe("encoding"),
        title=maybe("title"),
        blocks=tuple(blocks),
        cuts=(*cuts, *more),
        problem=maybe("problem"),
        size=size,
    )


def preload() -> None:
    """Import the native parsers (the worker does it once, before its first document)."""
    import pypdfium2  # type: ignore[import-untyped]  # noqa: F401
    import selectolax.lexbor  # noqa: F401


def convert_here(data: bytes, header: dict[str, object]) -> dict[str, object]:
    """The worker's side: convert ``data`` in this process, as the header asks."""
    kind = header.get("kind")
    if kind not in KINDS:
        return {"problem": f"the converter was asked for an unknown kind ({kind!r})"}
    charset = header.get("charset")

    def number(key: str) -> float:
        value = header.get(key)
        return float(value) if isinstance(value, int | float) else 0.0

    limits = Limits(int(number("max_bytes")), int(number("max_pages")), number("max_seconds"))
    doc = _convert(
        data,
        "",
        kind,  # checked against KINDS above
        charset if isinstance(charset, str) else None,
        limits,
        header.get("truncated") is True,
        [],
    )
    return {
        "plain": doc.plain,
        "marked": doc.marked,
        "encoding": doc.encoding,
        "title": doc.title,
        "blocks": [list(b) for b in doc.blocks],
        "cuts": list(doc.cuts),
        "problem": doc.problem,
    }


def _convert(
    data: bytes,
    name: str,
    kind: Kind,
    charset: str | None,
    limits: Limits,
    truncated: bool,
    cuts: list[str],
) -> Document:
    if kind == "pdf":
        return _from_pdf(data, name, limits, truncated, cuts)
    what = binary_kind(data)
    if what is not None:
        return Document(
            name=name,
            kind=kind,
            cuts=tuple(cuts),
            problem=f"is {what}, not text",
            size=len(data),
        )
    decoded = decode(data, content_type_charset=charset, html=kind == "html", final=not truncated)
    text = decoded.text.replace("\r\n", "\n").replace("\r", "\n")
    title: str | None = None
    problem: str | None = None
    if kind == "html":
        title, blocks = html_blocks(text, cuts)
        plain, spans = _plain([b.text for b in blocks])
        marked = _marked_html(title, blocks)
        if not plain and text.strip():
            problem = (
                "the HTML page has no visible text (its content may be drawn by scripts, "
                "or all of it is hidden)"
            )
    else:
        plain, spans = _plain(_paragraphs(text, markdown=kind == "markdown"))
        marked = "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))
        if text.startswith("\ufeff"):
            marked = marked.lstrip("\ufeff")
    return Document(
        name=name,
        kind=kind,
        plain=plain,
        marked=marked,
        encoding=decoded.encoding,
        title=title,
        blocks=spans,
        cuts=tuple(cuts),
        problem=problem,
        size=len(data),
    )
