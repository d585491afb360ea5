"""HTML to blocks of visible text, on the lexbor HTML5 parser (selectolax).

Chosen by measurement (``bench/bench_text.py``, figures in the README): lexbor parses
like a browser (unclosed tags, stray ``</p>``, entities) and is the fastest of the
parsers compared; the walk over its tree is ours, so what counts as visible and where
blocks end is written down here rather than left to a library's defaults.

Visible text only. Dropped with everything inside: ``script style template noscript
noembed noframes head svg math canvas iframe object embed select button textarea`` (not
page text, or not text at all), comments, elements with the ``hidden`` attribute,
``aria-hidden="true"``, ``<input type=hidden>``, and what CSS hides — ``display:none``,
``content-visibility:hidden``, ``visibility:hidden|collapse`` (inherited; a descendant may
be ``visible`` again) — in an inline style or a ``<style>`` rule on a tag, class or id,
read with a real CSS tokenizer (:mod:`harness.text.css` says which selectors are
supported). A closed ``<details>`` shows its ``<summary>`` only, as a browser renders it (a
reader can open it, but a quote that only an opened one shows is not on the page as read).
Page chrome is left out too: ``nav``, ``footer``, ``aside``, ``dialog`` and
``role="navigation"``, unless that leaves almost nothing (under 500 characters, and a
quarter or less of the text with chrome), as when an unclosed ``<nav>`` swallows a page:
then the chrome is kept.

The result is a list of :class:`Block` (a heading, a list item, a table row of cells,
a paragraph, a line of preformatted text) from which :mod:`harness.text.document`
builds the two renderings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from harness.text.css import Sheet, Style

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["Block", "html_blocks"]

BlockKind = Literal["heading", "item", "row", "para", "pre"]


@dataclass(frozen=True, slots=True)
class Block:
    """One block of visible text. ``cells`` only for a table row; ``level`` for a heading."""

    kind: BlockKind
    text: str
    level: int = 0
    cells: tuple[str, ...] = ()


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


_SKIP = _tags(
    "script style template noscript noembed noframes head svg math canvas iframe object embed "
    "select button textarea title head"
)
_BLOCK = _tags(
    "address article aside blockquote body caption center dd details dialog div dl dt "
    "fieldset figcaption figure footer form header hgroup hr html legend main menu nav ol "
    "p section summary table tbody tfoot thead ul"
)
_CHROME = _tags("nav footer aside dialog")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_NO_SHEET = Sheet()
_SHOWN = Style()


def _chrome_or_hidden(tag: str, attrs: dict[str, str | None], chrome: bool) -> bool:
    if chrome and tag in _CHROME:
        return True
    if not attrs:
        return False
    if chrome and (attrs.get("role") or "").strip().lower() == "navigation":
        return True
    if "hidden" in attrs:
        return True
    if (attrs.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return tag == "input" and (attrs.get("type") or "").strip().lower() == "hidden"


def _style(tag: str, attrs: dict[str, str | None], chrome: bool, sheet: Sheet) -> Style | None:
    """The element's own visibility, or None when it is dropped with everything in it."""
    if _chrome_or_hidden(tag, attrs, chrome):
        return None
    if sheet.empty and not (attrs and attrs.get("style")):
        return _SHOWN
    style = sheet.style(tag, attrs or {})
    return None if style.gone else style


def _squash(text: str) -> str:
    return " ".join(text.split())


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.inline: list[str] = []
        self.kind: BlockKind = "para"
        self.level = 0
        self.cells: list[str] | None = None  # inside a table row
        self.cell: list[str] | None = None  # inside a cell
        self.pre = 0

    def text(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.inline.append(data)

    def flush(self) -> None:
        """End the current block (a cell's inner blocks just run on, with a space)."""
        if self.cell is not None:
            self.cell.append(" ")
            return
        if not self.inline:
            return
        raw = "".join(self.inline)
        self.inline = []
        if self.pre:
            for line in raw.split("\n"):
                if line.strip():
                    self.blocks.append(Block("pre", line.rstrip()))
            return
        text = _squash(raw)
        if text:
            self.blocks.append(Block(self.kind, text, self.level))
            if self.kind == "item":
                self.kind = "para"  # a list item's later paragraphs are plain

    def start_row(self) -> None:
        self.flush()
        self.cells = []

    def end_row(self) -> None:
        self.end_cell()
        cells = tuple(c for c in self.cells or [] if c)
        self.cells = None
        if cells:
            self.blocks.append(Block("row", " ".join(cells), cells=cells))

    def start_cell(self) -> None:
        if self.cells is None:  # a cell outside a row: a row of its own
            self.start_row()
        self.end_cell()
        self.cell = []

    def end_cell(self) -> None:
        if self.cell is not None and self.cells is not None:
            self.cells.append(_squash("".join(self.cell)))
        self.cell = None


def _enter(b: _Builder, tag: str) -> None:
    if tag in _HEADINGS:
        b.flush()
        b.kind, b.level = "heading", _HEADINGS[tag]
    elif tag == "li":
        b.flush()
        b.kind, b.level = "item", 0
    elif tag == "tr":
        b.start_row() if b.cell is None else b.flush()
    elif tag in ("td", "th"):
        b.start_cell() if b.cell is None or b.cells is not None else b.flush()
    elif tag == "br":
        if b.cell is not None:
            b.cell.append(" ")
        elif b.pre:
            b.inline.append("\n")
        else:
            b.flush()
    elif tag == "pre":
        b.flush()
        b.pre += 1
    elif tag in _BLOCK:
        b.flush()


def _leave(b: _Builder, tag: str) -> None:
    if tag in _HEADINGS:
        b.flush()
        b.kind, b.level = "para", 0
    elif tag == "li":
        b.flush()
        b.kind = "para"
    elif tag in ("td", "th"):
        if b.cells is not None:
            b.end_cell()
    elif tag == "tr":
        if b.cells is not None:
            b.end_row()
    elif tag == "table":
        if b.cells is not None:
            b.end_row()
        b.flush()
    elif tag == "pre":
        b.flush()
        b.pre = max(0, b.pre - 1)
    elif tag in _BLOCK:
        b.flush()


def html_blocks(markup: str, cuts: list[str] | None = None) -> tuple[str | None, list[Block]]:
    """The page's title (None without one) and its visible text as blocks (what was cut
    while reading the page's style sheets is added to ``cuts``)."""
    from selectolax.lexbor import LexborHTMLParser  # imported on first use: start-up stays fast

    tree = LexborHTMLParser(markup)
    title = None
    if tree.head is not None:
        node = tree.head.css_first("title")
        title = _squash(node.text()) if node is not None else None
    root = tree.root
    if root is None:
        return title or None, []
    sheets = [(node.text(deep=True), node.attributes.get("media")) for node in tree.css("style")]
    sheet = Sheet.of(sheets) if sheets else _NO_SHEET
    if cuts is not None:
        cuts.extend(sheet.cuts)
    _close_details(tree)
    blocks = _walk(root, drop_chrome=True, sheet=sheet)
    short = sum(len(b.text) for b in blocks) < 500
    if short and root.css_first("nav, footer, aside, dialog, [role]") is not None:
        loose = _walk(root, drop_chrome=False, sheet=sheet)
        if sum(len(b.text) for b in loose) > 4 * max(sum(len(b.text) for b in blocks), 1):
            blocks = loose
    return title or None, blocks


def _close_details(tree: LexborHTMLParser) -> None:
    """A closed ``<details>`` shows its first ``<summary>`` only, as a browser renders it:
    the rest is dropped before the walk (a quote hidden there is not text a reader sees)."""
    for details in tree.css("details"):
        if "open" in details.attributes:
            continue
        summary_kept = False
        for child in list(details.iter(include_text=True)):
            if child.tag == "summary" and not summary_kept:
                summary_kept = True
                continue
            child.decompose()


def _walk(root: LexborNode, drop_chrome: bool, sheet: Sheet) -> list[Block]:
    b = _Builder()
    # An iterative walk (child / next / parent): no recursion limit on deep nesting.
    # `shown` is the inherited visibility of each open element (visibility:hidden hides
    # the text, not the element: a descendant may be visible again).
    stop = root.mem_id
    node = root
    shown: list[bool] = [True]
    walking = True
    while walking:
        tag = node.tag or ""
        if node.is_text_node:
            if shown[-1]:
                b.text(node.text_content or "")
        elif node.is_element_node and tag not in _SKIP:
            style = _style(tag, node.attributes, drop_chrome, sheet)
            if style is not None:
                _enter(b, tag)
                child = node.child
                if child is not None:
                    shown.append(shown[-1] if style.visible is None else style.visible)
                    node = child
                    continue
                _leave(b, tag)
        # On to the next sibling, leaving every element climbed out of on the way.
        while True:
            if node.mem_id == stop:
                walking = False
                break
            sibling = node.next
            if sibling is not None:
                node = sibling
                break
            parent = node.parent
            if parent is None:
                walking = False
                break
            node = parent
            if len(shown) > 1:
                shown.pop()
            _leave(b, node.tag or "")
    b.flush()
    if b.cells is not None:
        b.end_row()
    return b.blocks
