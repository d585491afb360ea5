"""A source's plain text as passages, and the passages most relevant to each claim citing it.

Pure: no file, no model. `split(source_id, text)` cuts the text into passages bounded by
paragraphs and sentences, each at most `max_chars` characters. Sentences are packed up to
that size, and so are whole paragraphs (a page of one-sentence paragraphs gives passages of
the same size as a page of long ones), except that a short paragraph with no sentence end
(a heading) starts the passage of the text it heads. A passage ends at a sentence end
whenever one is in reach; a single sentence longer than `max_chars` (or a run of text with
no sentence end) is cut at the last word boundary before the bound, hard only when it has
none. A passage carries character offsets into the text it was cut from,
`text[start:end] == passage.text`, and an id derived from the source id and its order in
the whole document (`s4:p12`, 1-based), so narrowing a document to fewer passages never
renames one.

`narrow(passages, queries, max_chars)` gives **each query** (a claim citing the source) its
own passages: the best-ranked ones by BM25 (Okapi, k1 1.5, b 0.75, the non-negative idf of
Lucene) until `max_chars` characters are taken, each kept passage bringing its
neighbours when the budget allows (`NEIGHBOURS`: the supporting text often runs over a
passage's end). The union of the queries' passages is what the source sends, in document
order (the model reads neighbours), and each query's own set is kept too.

Ranking tokenizes by runs of letters and runs of digits (`Spain1986` → spain 1986, `4th` → 4
th; `1,000` → 1000), casefolded, without English stop words, stemmed by Snowball's English
stemmer (`pystemmer`). A query's *specific* terms weigh `SPECIFIC_WEIGHT` times their idf:
its numbers, its names (capitalized words that do not open a sentence) unless another query
of the same call uses the word too (then it is the claims' shared topic), and each number it
states as rounded ("about 4,700", "75 thousand", "more than 12,000"), a term of its own held
by the passages with a number in the range it rounds (at most `MAX_ROUNDED` of them).

The pure-Python work is bounded by the size of the input: a query is at most
`MAX_QUERY_TERMS` distinct terms (its rarest in the document), and `select` splits and ranks
only the first `MAX_RANKED_CHARS` characters of a text; either cut is said in
`Narrowed.notes` (the audit reports them as `cuts`). It is bounded by time too: given a
`deadline` (monotonic seconds), `split`, `select` and `narrow` read the clock as they go
(`harness.clock`: every few hundred paragraphs or passages, and before each query)
and raise `OutOfTime` once it has passed, keeping nothing of what they were making.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness import config
from harness.clock import Deadline, ticks

# Chosen on the first evidence set (bench/bench_retrieval.py, docs/retrieval.md): the
# smallest passage size, and the largest neighbourhood, that kept full recall at or above 98%
# in every configuration within today's characters per claim; measured on the second set too.
MAX_CHARS = 450  # about 110 tokens
MIN_CHARS = 160
HEADING_CHARS = 60  # a paragraph this short with no sentence end heads what follows it
# characters of passages each claim reads, by default (about 1,350 tokens)
CLAIM_CHARS = int(config.CITE_PASSAGE_CHARS.default)
NEIGHBOURS = 2  # passages either side of a kept one, taken while the budget allows
# A query's specific terms (its numbers, the ranges of its rounded numbers, the words of its
# names) weigh this many times their idf: what a claim states in particular is what the
# sentence supporting it repeats, while its other words are those of its topic. The smallest
# of 2, 3, 4 keeping own recall at or above 98% on the second evidence set; 1-3 are alike on
# the first.
SPECIFIC_WEIGHT = 3.0
NEIGHBOUR_WEIGHT = 0.5  # a passage ranks by its score and this share of its best neighbour's
MAX_QUERY_TERMS = 64  # distinct terms of one query (a claim); its rarest are kept
# Characters of a source's text split and ranked: tokenizing is about 0.1 s per MiB, so a
# source at the loader's 8 MiB cap is ranked on its first quarter.
MAX_RANKED_CHARS = 2 * 1024 * 1024
K1, B = 1.5, 0.75

# A line break ends a paragraph: the text pipeline's plain rendering puts one block (a
# paragraph, a list item, a table row) on each line, wrapped lines already joined. A
# paragraph is a line's text without the white space around it.
_PARAGRAPH = re.compile(r"\S(?:[^\n]*\S)?")
# A sentence ends at . ! ? … (or a CJK full stop), possibly closed by quotes or brackets,
# followed by white space.
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+")
# A paragraph that ends without one is a heading or a label: it belongs with what follows.
_ENDS_SENTENCE = re.compile(r"[.!?…。！？:;][\"'”’)\]]*$")
# Runs of letters, and runs of digits (with the thousands' or decimal separators inside).
# ASCII words first (the regex engine's fast path), whole unless a non-ASCII letter follows.
_TERM = re.compile(r"[a-z]++(?![^\W\d_])|[^\W\d_]+|\d+(?:[.,]\d+)*")

# A number a claim states as rounded: after a hedge ("about 4,700", "more than 12,000") or
# with a scale word ("75 thousand", "2.1 million"). Besides its own digits, it matches a
# text's numbers in the range it rounds (4,651 for "about 4,700"; 74,695 for "75 thousand").
_HEDGED = re.compile(
    r"\b(?:(about|around|approximately|roughly|nearly|almost|some|over|under|close\s+to"
    r"|more\s+than|less\s+than|fewer\s+than|at\s+least|up\s+to|just\s+over|just\s+under"
    r"|an\s+estimated)\s+(\d+(?:,\d{3})*(?:\.\d+)?)(?:\s+(thousand|million|billion))?"
    r"|(\d+(?:,\d{3})*(?:\.\d+)?)\s+(thousand|million|billion))\b",
    re.IGNORECASE,
)
# A number in a text, with its scale word if one follows it.
_NUMBER = re.compile(
    r"(?<![\d.,])(\d+(?:,\d{3})*(?:\.\d+)?)(?:\s+(thousand|million|billion)\b)?", re.IGNORECASE
)
# A name: a capitalized word that does not open a sentence (nor a quotation, nor brackets).
_NAME = re.compile(r"(?<=[^\s.!?:;\"“‘(\[])\s+([^\W\d_a-z][\w'’-]*)")


def _named(text: str) -> list[str]:
    """The words of the names in `text`, casefolded (as `_words` gives them)."""
    return [w for m in _NAME.finditer(text) for w in _words(m[1])]


_SCALE = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
MAX_ROUNDED = 8  # rounded numbers of one query matched approximately


_ABOVE = frozenset({"over", "more than", "at least", "just over"})
_BELOW = frozenset({"under", "less than", "fewer than", "up to", "just under", "nearly", "almost"})


def rounded(text: str) -> list[tuple[float, float]]:
    """The ranges of the numbers `text` states as rounded, at most `MAX_ROUNDED`: "about
    4,700" → (4650, 4750), "more than 12,000" → (12000, 13000), "2.1 million" →
    (2050000, 2150000). A number with one significant digit ("over 1,000") is left out: its
    range would hold most numbers of a text."""
    out: list[tuple[float, float]] = []
    for m in _HEDGED.finditer(text):
        hedge, digits, scale = (m[1], m[2], m[3]) if m[2] else (None, m[4], m[5])
        plain = digits.replace(",", "")
        whole, _, decimals = plain.partition(".")
        unit = 10.0 ** -len(decimals) if decimals else 10.0 ** (len(whole) - len(whole.rstrip("0")))
        factor = _SCALE.get((scale or "").casefold(), 1)
        value, unit = float(plain) * factor, unit * factor
        if value < 10 or unit * 5 > value:
            continue
        word = " ".join((hedge or "").casefold().split())
        if word in _ABOVE:
            span = (value, value + unit)
        elif word in _BELOW:
            span = (value - unit, value)
        else:
            span = (value - unit / 2, value + unit / 2)
        if span not in out:
            out.append(span)
    return out[:MAX_ROUNDED]


def _numbers(
    pool: Sequence[SourcePassage], deadline: Deadline | None
) -> tuple[list[float], list[int]]:
    """Every number of `pool`'s passages (a scale word applied), ascending, and the index of
    the passage holding each."""
    found: list[tuple[float, int]] = []
    for i, p in enumerate(ticks(pool, deadline)):
        for m in _NUMBER.finditer(p.text):
            found.append((float(m[1].replace(",", "")) * _SCALE.get((m[2] or "").casefold(), 1), i))
    found.sort()
    return [v for v, _ in found], [i for _, i in found]


# Snowball's English stop word list (snowballstem.org, algorithms/english/stop.txt), and
# the ordinal suffixes that splitting `4th` leaves.
_STOP = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing would should could ought i'm you're he's she's it's we're they're i've
    you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll
    they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's
    there's when's where's why's how's a an the and but if or because as until while of at
    by for with about against between into through during before after above below to from
    up down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t d ll m re ve y st nd rd th
"""
STOP_WORDS = frozenset(_STOP.split())


@dataclass(frozen=True, slots=True)
class SourcePassage:
    """One passage of a source: `text == plain[start:end]` of the text it was cut from."""

    source_id: str
    index: int  # 1-based order in the whole document
    start: int
    end: int
    text: str

    @property
    def id(self) -> str:
        return f"{self.source_id}:p{self.index}"


@dataclass(frozen=True, slots=True)
class Narrowed:
    """What `narrow` kept: the union in document order, each query's own set, the cuts."""

    passages: list[SourcePassage]
    by_query: list[list[SourcePassage]]  # in the order of the queries, each in document order
    notes: list[str] = field(default_factory=list)


def _spans(
    text: str, pattern: re.Pattern[str], start: int, end: int, deadline: Deadline | None = None
) -> list[tuple[int, int]]:
    """Non-blank pieces of `text[start:end]` between matches of `pattern`, stripped."""
    out: list[tuple[int, int]] = []
    at = start
    for m in ticks(pattern.finditer(text, start, end), deadline):
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
    """A span longer than `max_chars` cut at the last white space before each bound."""
    out: list[tuple[int, int]] = []
    while b - a > max_chars:
        stop = a + max_chars
        while stop > a + max_chars // 4 and not text[stop].isspace():
            stop -= 1
        if not text[stop].isspace():  # no word boundary in reach: cut hard
            stop = a + max_chars
        end = stop
        while end > a and text[end - 1].isspace():
            end -= 1
        out.append((a, end))
        a = stop
        while a < b and text[a].isspace():
            a += 1
    if a < b:
        out.append((a, b))
    return out


def split(
    source_id: str,
    text: str,
    *,
    max_chars: int = MAX_CHARS,
    min_chars: int = MIN_CHARS,
    deadline: Deadline | None = None,
) -> list[SourcePassage]:
    """The passages of `text`, in order (none for blank text).

    Within a paragraph, sentences are packed up to `max_chars`. A paragraph joins the
    passage before it when all of it fits there, or, sentence by sentence, while that
    passage is shorter than `min_chars`; otherwise it starts a passage of its own. A
    paragraph with no sentence end (a heading) joins the passage before it only while that
    is shorter than `min_chars`: it starts the passage of the text it heads. Raises
    `OutOfTime` once `deadline` (monotonic) has passed.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    spans: list[tuple[int, int]] = []  # passage spans being packed
    for m in ticks(_PARAGRAPH.finditer(text), deadline):
        pa, pb = m.span()
        if (
            spans
            and pb - spans[-1][0] <= max_chars  # the whole paragraph fits
            and (
                spans[-1][1] - spans[-1][0] < min_chars
                or pb - pa > HEADING_CHARS
                or _ENDS_SENTENCE.search(text, pa, pb) is not None
            )
        ):
            spans[-1] = (spans[-1][0], pb)
            continue
        if pb - pa <= max_chars and (not spans or spans[-1][1] - spans[-1][0] >= min_chars):
            spans.append((pa, pb))  # a paragraph of its own
            continue
        units: list[tuple[int, int]] = []
        for sa, sb in _spans(text, _SENTENCE_END, pa, pb, deadline):
            units.extend(_cut(text, sa, sb, max_chars))
        first = True
        for ua, ub in ticks(units, deadline):
            if spans:
                a, b = spans[-1]
                if ub - a <= max_chars and (not first or b - a < min_chars):
                    spans[-1] = (a, ub)
                    first = False
                    continue
            spans.append((ua, ub))
            first = False
    return [SourcePassage(source_id, i, a, b, text[a:b]) for i, (a, b) in enumerate(spans, 1)]


_stemmer: Any = None  # pystemmer's Stemmer (untyped), made on first use


def _stems(words: Iterable[str]) -> dict[str, str]:
    """Each word's ranking term: a number without its thousands' commas, a word stemmed."""
    global _stemmer
    if _stemmer is None:
        import Stemmer  # type: ignore[import-not-found]  # pystemmer: C, loaded when ranking

        _stemmer = Stemmer.Stemmer("english")
    letters = [w for w in words if not w[0].isdigit()]
    out = dict(zip(letters, _stemmer.stemWords(letters), strict=True))
    out.update((w, w.replace(",", "")) for w in words if w[0].isdigit())
    return out


_STEM_CHUNK = 4096  # words stemmed between two readings of the clock (about 5 ms)


def _stems_until(words: Iterable[str], deadline: Deadline | None) -> dict[str, str]:
    """`_stems(words)`, a chunk at a time, the clock read before each (`ticks`)."""
    if deadline is None:
        return _stems(words)
    listed = list(words)
    out: dict[str, str] = {}
    for at in ticks(range(0, len(listed), _STEM_CHUNK), deadline, stride=1):
        out.update(_stems(listed[at : at + _STEM_CHUNK]))
    return out


def _words(text: str) -> list[str]:
    return _TERM.findall(text.casefold())


def tokens(text: str) -> list[str]:
    """The ranking terms of `text`, in order: letters and digits apart, casefolded, no stop
    words, stemmed."""
    words = [w for w in _words(text) if w not in STOP_WORDS]
    stem = _stems(set(words))
    return [stem[w] for w in words]


def select(
    source_id: str,
    text: str,
    queries: Sequence[str],
    max_chars: int = CLAIM_CHARS,
    *,
    names: Sequence[str] | None = None,
    max_ranked_chars: int = MAX_RANKED_CHARS,
    deadline: Deadline | None = None,
) -> Narrowed:
    """`narrow(split(source_id, text), queries, max_chars)`, ranking only the first
    `max_ranked_chars` characters of the text (the cut is said in the notes). Raises
    `OutOfTime` once `deadline` (monotonic) has passed: nothing half ranked is returned."""
    notes: list[str] = []
    if len(text) > max_ranked_chars:
        notes.append(
            f"only the first {max_ranked_chars:,} of {len(text):,} characters of {source_id} "
            "were ranked for relevance"
        )
        text = text[:max_ranked_chars]  # offsets into the prefix are offsets into the text
    pieces = split(source_id, text, deadline=deadline)
    found = narrow(pieces, queries, max_chars, names=names, deadline=deadline)
    return Narrowed(found.passages, found.by_query, notes + found.notes)


def narrow(
    passages: Sequence[SourcePassage],
    queries: Sequence[str],
    max_chars: int = CLAIM_CHARS,
    *,
    names: Sequence[str] | None = None,
    neighbours: int = NEIGHBOURS,
    neighbour_weight: float = NEIGHBOUR_WEIGHT,
    max_query_terms: int = MAX_QUERY_TERMS,
    specific_weight: float = SPECIFIC_WEIGHT,
    deadline: Deadline | None = None,
) -> Narrowed:
    """Each query's best passages within `max_chars` characters, and their union. `names`
    (of the queries, e.g. the claims' ids) name them in the notes. Raises `OutOfTime` once
    `deadline` (monotonic) has passed, the clock read before each query."""
    if max_chars < 1:
        raise ValueError("the passage budget must be at least 1 character")
    notes: list[str] = []
    by_query: list[list[SourcePassage]] = []
    labels = list(names) if names is not None else [f"query {q + 1}" for q in range(len(queries))]
    scored = _score(passages, queries, labels, max_query_terms, notes, deadline, specific_weight)
    for scores in ticks(scored, deadline, stride=1):
        near = {j for i in scores for j in (i - 1, i, i + 1) if 0 <= j < len(passages)}
        ranks = {
            i: scores.get(i, 0.0)
            + neighbour_weight * max(scores.get(i - 1, 0.0), scores.get(i + 1, 0.0))
            for i in near
        }
        order = sorted(ranks, key=lambda i: (-ranks[i], i))
        if not order:  # nothing in common: the document's first passages
            order = list(range(len(passages)))
        by_query.append([passages[i] for i in _take(passages, order, max_chars, neighbours)])
    union = sorted({p.index: p for ps in by_query for p in ps}.values(), key=lambda p: p.index)
    return Narrowed(union, by_query, notes)


def _score(
    pool: Sequence[SourcePassage],
    queries: Sequence[str],
    labels: Sequence[str],
    max_query_terms: int,
    notes: list[str],
    deadline: Deadline | None = None,
    specific_weight: float = SPECIFIC_WEIGHT,
) -> list[dict[int, float]]:
    """Each query's BM25 score of every passage of `pool` that shares a term with it.

    The per-word work runs in C (regex, `Counter`, set operations, the stemmer); Python
    loops only over the distinct words of each passage that are query terms.
    """
    doc_words = [_words(p.text) for p in ticks(pool, deadline)]
    counts = [Counter(words) for words in ticks(doc_words, deadline)]
    # A passage's length counts its words, stop words included.
    lengths = [len(words) for words in doc_words]
    average = (sum(lengths) / len(lengths)) if lengths else 1.0
    norm = [K1 * (1 - B + B * n / (average or 1.0)) for n in lengths]
    query_words = [[w for w in _words(q) if w not in STOP_WORDS] for q in ticks(queries, deadline)]
    query_stem = _stems_until({w for words in query_words for w in words}, deadline)
    wanted = set(query_stem.values())
    vocab: set[str] = set().union(*counts) - STOP_WORDS if counts else set()
    doc_stem = {w: t for w, t in _stems_until(vocab, deadline).items() if t in wanted}
    matching = set(doc_stem)
    postings: dict[str, dict[int, int]] = {t: {} for t in wanted}
    for i, c in enumerate(ticks(counts, deadline)):
        for w in matching.intersection(c):
            hits = postings[doc_stem[w]]
            hits[i] = hits.get(i, 0) + c[w]
    # A number the query rounds is a term of its own, held by the passages with a number in
    # its range.
    ranges = [[f"≈{lo:g}–{hi:g}" for lo, hi in rounded(q)] for q in ticks(queries, deadline)]
    if any(ranges):
        values, where = _numbers(pool, deadline)
        for key in ticks({k for keys in ranges for k in keys}, deadline):
            lo, hi = (float(x) for x in key[1:].split("–"))
            postings[key] = dict(
                Counter(where[bisect.bisect_left(values, lo) : bisect.bisect_right(values, hi)])
            )
    # A name another query (claim) uses too is the topic the claims share, not what one of
    # them states in particular: how many queries use each word's term.
    used_by = Counter(
        t for words in query_words for t in {query_stem[w] for w in words if not w[0].isdigit()}
    )
    n = len(pool)
    idf = {t: math.log(1 + (n - len(ps) + 0.5) / (len(ps) + 0.5)) for t, ps in postings.items()}
    out: list[dict[int, float]] = []
    for q, words in enumerate(ticks(query_words, deadline, stride=1)):
        terms = [*dict.fromkeys(query_stem[w] for w in words), *ranges[q]]
        specific = {query_stem[w] for w in words if w[0].isdigit()}
        specific.update(ranges[q])
        names = (query_stem[w] for w in _named(queries[q]) if w in query_stem)
        specific.update(t for t in names if used_by[t] == 1)
        distinct = [t for t in terms if postings[t]]
        if len(distinct) > max_query_terms:
            rare = set(sorted(distinct, key=lambda t: -idf[t])[:max_query_terms])
            notes.append(
                f"{labels[q]}: only its {max_query_terms} rarest of {len(distinct)} terms "
                "found in the text were ranked"
            )
            distinct = [t for t in distinct if t in rare]
        scores: dict[int, float] = {}
        for t in distinct:
            weight = idf[t] * (specific_weight if t in specific else 1.0)
            for i, tf in postings[t].items():
                scores[i] = scores.get(i, 0.0) + weight * tf * (K1 + 1) / (tf + norm[i])
        out.append(scores)
    return out


def _take(
    passages: Sequence[SourcePassage], order: Sequence[int], budget: int, neighbours: int
) -> list[int]:
    """Passages in `order`, each followed by its neighbours, while they fit `budget`
    characters; in document order. At least the first in `order` (a passage is never
    longer than the budget the options allow)."""
    kept: set[int] = set()
    used = 0

    def add(i: int) -> None:
        nonlocal used
        if i in kept or not 0 <= i < len(passages):
            return
        size = len(passages[i].text)
        if used + size <= budget:
            kept.add(i)
            used += size

    for i in order:
        add(i)
        if i in kept:
            for d in range(1, neighbours + 1):
                add(i - d)
                add(i + d)
        if used >= budget:
            break
    if not kept and order:
        kept.add(order[0])
    return sorted(kept)
