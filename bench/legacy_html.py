"""The hand-written HTML extractor the harness used before `harness.text.html` (baseline).

Kept verbatim (from `harness/agent/fetch.py`) only so `bench/bench_text.py` can compare the
new pipeline's throughput and correctness against it. Nothing in the package imports it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


_VOID = _tags("area base br col embed hr img input link meta param source track wbr")
_ALWAYS_SKIP = _tags(
    "script style noscript template svg math canvas iframe object embed select button"
)
_NOISE = _tags("nav footer aside dialog")
_BLOCK = _tags(
    "address article blockquote dd details div dl dt fieldset figcaption figure form "
    "header hr main ol p pre section summary table tbody thead tfoot tr ul"
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


class _TextExtractor(HTMLParser):
    def __init__(self, drop_noise: bool) -> None:
        super().__init__(convert_charrefs=True)
        self._drop_noise = drop_noise
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._pre = 0
        self._cells = 0
        self._in_title = False
        self.title: list[str] = []
        self.out: list[str] = []

    def _skips(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag in _ALWAYS_SKIP:
            return True
        if not self._drop_noise:
            return False
        if tag in _NOISE:
            return True
        values = {k: (v or "").lower() for k, v in attrs}
        style = values.get("style", "").replace(" ", "")
        return (
            "hidden" in values
            or values.get("aria-hidden") == "true"
            or values.get("role") == "navigation"
            or "display:none" in style
        )

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if tag not in _VOID and self._skips(tag, attrs):
            self._skip_tag, self._skip_depth = tag, 1
            return
        if tag in _HEADINGS:
            self.out.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "br":
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" | " if self._cells else "")
            self._cells += 1
        elif tag in _BLOCK:
            self.out.append("\n\n")
        if tag == "pre":
            self._pre += 1
        elif tag == "tr":
            self._cells = 0

    def handle_endtag(self, tag: str) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth == 0:
                    self._skip_tag = None
            return
        if tag == "title":
            self._in_title = False
        elif tag in _HEADINGS or tag in _BLOCK:
            self.out.append("\n\n")
        if tag == "pre" and self._pre:
            self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._skip_tag is not None:
            return
        if self._in_title:
            self.title.append(data)
        elif self._pre:
            self.out.append(data.replace("\n", "\x00"))  # protected from whitespace folding
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def _tidy(text: str) -> str:
    lines = [line.strip(" ") for line in text.split("\n")]
    text = "\n".join(lines).replace("\x00", "\n")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _extract(markup: str, drop_noise: bool) -> tuple[str, str]:
    parser = _TextExtractor(drop_noise)
    parser.feed(markup)
    parser.close()
    title = re.sub(r"\s+", " ", "".join(parser.title)).strip()
    return title, _tidy("".join(parser.out))


def html_to_text(markup: str) -> str:
    """Readable text of an HTML page: title, headings as ``#``, paragraphs, list items.

    Scripts, styles, hidden elements and navigation/footer/aside chrome are dropped.
    If dropping chrome leaves almost nothing (an unclosed ``<nav>`` can swallow a
    page), the text is taken again with only scripts and styles dropped.
    """
    title, body = _extract(markup, drop_noise=True)
    if len(body) < 500:
        _, loose = _extract(markup, drop_noise=False)
        if len(loose) > 4 * max(len(body), 1):
            body = loose
    return f"Title: {title}\n\n{body}" if title else body
