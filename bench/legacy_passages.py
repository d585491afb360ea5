"""`harness/audit/passages.py` as it was on main before per-claim budgets (baseline).

Kept verbatim (main at 810c100) only so `bench/bench_retrieval.py` can measure the new
retrieval side by side with the old one in one run. Nothing in the package imports it; it
needs `rank-bm25` (the `test` extra).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_CHARS = 700  # about 175 tokens: ten to a window
MIN_CHARS = 160

# A line break ends a paragraph: the text pipeline's plain rendering puts one block (a
# paragraph, a list item, a table row) on each line, wrapped lines already joined.
_PARAGRAPH = re.compile(r"\n\s*")
# A sentence ends at . ! ? … (or a CJK full stop), possibly closed by quotes or brackets,
# followed by white space.
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+")
_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage of a source: `text == plain[start:end]` of the text it was cut from."""

    source_id: str
    index: int  # 1-based order in the whole document
    start: int
    end: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.source_id}:p{self.index}"


def _spans(text: str, pattern: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    """Non-blank pieces of `text[start:end]` between matches of `pattern`, stripped."""
    out: list[tuple[int, int]] = []
    at = start
    for m in pattern.finditer(text, start, end):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, end))
    stripped: list[tuple[int, int]] = []
    for a, b in out:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            stripped.append((a, b))
    return stripped


def _cut(text: str, a: int, b: int, max_chars: int) -> list[tuple[int, int]]:
    """A span longer than `max_chars` cut at the last space before each bound."""
    out: list[tuple[int, int]] = []
    while b - a > max_chars:
        space = text.rfind(" ", a + max_chars // 2, a + max_chars + 1)
        stop = space if space > a else a + max_chars
        out.append((a, stop))
        a = stop
        while a < b and text[a].isspace():
            a += 1
    if a < b:
        out.append((a, b))
    return out


def split(
    source_id: str, text: str, *, max_chars: int = MAX_CHARS, min_chars: int = MIN_CHARS
) -> list[Passage]:
    """The passages of `text`, in order (none for blank text)."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    spans: list[tuple[int, int]] = []  # passage spans being packed
    for pa, pb in _spans(text, _PARAGRAPH, 0, len(text)):
        units: list[tuple[int, int]] = []
        for sa, sb in _spans(text, _SENTENCE_END, pa, pb):
            units.extend(_cut(text, sa, sb, max_chars))
        first = True
        for ua, ub in units:
            if spans:
                a, b = spans[-1]
                fits = ub - a <= max_chars
                # Within a paragraph, sentences pack up to the bound; across one, only
                # while the passage so far is short.
                if fits and (not first or b - a < min_chars):
                    spans[-1] = (a, ub)
                    first = False
                    continue
            spans.append((ua, ub))
            first = False
    return [Passage(source_id, i, a, b, text[a:b]) for i, (a, b) in enumerate(spans, 1)]


def tokens(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


def narrow(passages: Sequence[Passage], queries: Sequence[str], limit: int) -> list[Passage]:
    """At most `limit` passages, the most relevant to `queries` taken in turn, in order."""
    if limit < 1:
        raise ValueError("the passage limit must be at least 1")
    if len(passages) <= limit:
        return list(passages)
    from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]  # loaded when narrowing

    corpus = [tokens(p.text) or ["\x00"] for p in passages]  # BM25 divides by length
    ranker = BM25Okapi(corpus)
    rankings: list[list[int]] = []
    for query in queries:
        words = tokens(query)
        if not words:
            continue
        scores = ranker.get_scores(words)
        # Best first; ties to the earlier passage.
        rankings.append(sorted(range(len(passages)), key=lambda i: (-float(scores[i]), i)))
    chosen: dict[int, None] = {}
    depth = 0
    while len(chosen) < limit and rankings and depth < len(passages):
        for ranking in rankings:
            chosen.setdefault(ranking[depth])
            if len(chosen) == limit:
                break
        depth += 1
    if len(chosen) < limit:  # no usable query: the document's first passages
        for i in range(len(passages)):
            if len(chosen) == limit:
                break
            chosen.setdefault(i)
    return [passages[i] for i in sorted(chosen)]
