"""The vendored evidence set (``bench/data/evidence/``), rendered, and recall measured on it.

Shared by ``bench/bench_retrieval.py`` and ``tests/audit/test_retrieval_recall.py``. See
``bench/data/evidence/README.md`` for what the set is and what its labels mean.

A document is rendered as plain text the way the text pipeline renders a page (one block on
each line), in one of two shapes:

- ``long``: each stored passage is one paragraph (one line);
- ``short``: every sentence of every passage is a paragraph of its own (the shape of many
  HTML pages), sentences cut by `sentences` below (not by the code under test).

Recall. A claim's marked evidence is one stored passage of its document. Its *sentences*
(by `sentences`) each occupy a span of the rendered text. A sentence is *covered* when every
one of its non-space characters lies inside some passage sent for that claim. **Full
recall** of a claim: all its evidence sentences are covered. **Partial recall**: the share
of its evidence sentences covered. The passages sent for a claim are what the retrieval
under test gives that claim: its own set when it gives one (today's code), otherwise the
source's whole set (main's `narrow`, one set per source shared by its claims).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "evidence"
SHAPES = ("long", "short")
KINDS = ("single", "quad")

# A sentence ends at . ! ? followed by white space and a capital, a digit or an opening mark.
_SENTENCE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[A-Z0-9\"“‘(\[])")


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of `text` (stripped, non-empty)."""
    out: list[tuple[int, int]] = []
    at = 0
    for m in _SENTENCE.finditer(text):
        out.append((at, m.start()))
        at = m.end()
    out.append((at, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


@dataclass(frozen=True, slots=True)
class Claim:
    id: str
    text: str
    evidence: list[tuple[int, int]]  # spans of its evidence sentences in the document text


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    kind: str  # single | quad
    shape: str  # long | short
    text: str
    claims: list[Claim]


def load(shape: str, data: Path = DATA) -> list[Document]:
    """Every document of the set rendered in `shape`, with its claims' evidence spans."""
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    texts: dict[str, str] = {}
    for line in (data / "passages.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        texts[rec["id"]] = rec["text"]
    docs: list[Document] = []
    for line in (data / "documents.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        lines: list[str] = []
        spans: dict[str, list[tuple[int, int]]] = {}
        at = 0
        for pid in rec["paragraphs"]:
            body = texts[pid]
            pieces = sentences(body)
            mine: list[tuple[int, int]] = []
            if shape == "long":
                lines.append(body)
                mine = [(at + a, at + b) for a, b in pieces]
                at += len(body) + 1
            else:
                for a, b in pieces:
                    piece = body[a:b].strip()
                    lines.append(piece)
                    mine.append((at, at + len(piece)))
                    at += len(piece) + 1
            spans.setdefault(pid, mine)
        text = "\n".join(lines)
        claims = [Claim(c["id"], c["claim"], spans[c["evidence"]]) for c in rec["claims"]]
        docs.append(Document(rec["id"], rec["kind"], shape, text, claims))
    return docs


# A retrieval under test: (source id, text, the claims' texts) -> for each claim, the
# (start, end) spans of the passages sent for it.
Retrieve = Callable[[str, str, Sequence[str]], list[list[tuple[int, int]]]]


@dataclass(slots=True)
class Score:
    claims: int = 0
    full: int = 0
    partial: float = 0.0
    source_full: int = 0  # claims whose evidence lies within their source's whole set
    chars: int = 0  # characters sent for the claims, summed
    source_chars: int = 0  # characters of each document's union of passages, summed
    docs: int = 0

    @property
    def full_recall(self) -> float:
        return self.full / self.claims if self.claims else 0.0

    @property
    def source_recall(self) -> float:
        return self.source_full / self.claims if self.claims else 0.0

    @property
    def partial_recall(self) -> float:
        return self.partial / self.claims if self.claims else 0.0

    @property
    def chars_per_claim(self) -> float:
        return self.chars / self.claims if self.claims else 0.0

    @property
    def chars_per_source(self) -> float:
        return self.source_chars / self.docs if self.docs else 0.0


def _covered(span: tuple[int, int], text: str, sent: Sequence[tuple[int, int]]) -> bool:
    a, b = span
    return all(text[i].isspace() or any(s <= i < e for s, e in sent) for i in range(a, b))


def score(docs: Sequence[Document], retrieve: Retrieve) -> tuple[Score, list[str]]:
    """Recall of `retrieve` over `docs`, and the ids of the claims not fully recalled."""
    out = Score()
    missed: list[str] = []
    for doc in docs:
        sets = retrieve(doc.id, doc.text, [c.text for c in doc.claims])
        out.docs += 1
        union = sorted({span for spans in sets for span in spans})
        out.source_chars += sum(e - s for s, e in union)
        for claim, sent in zip(doc.claims, sets, strict=True):
            merged = sorted(sent)
            hit = sum(_covered(span, doc.text, merged) for span in claim.evidence)
            out.claims += 1
            out.chars += sum(e - s for s, e in sent)
            out.partial += hit / len(claim.evidence)
            if all(_covered(span, doc.text, union) for span in claim.evidence):
                out.source_full += 1
            if hit == len(claim.evidence):
                out.full += 1
            else:
                missed.append(claim.id)
    return out, missed
