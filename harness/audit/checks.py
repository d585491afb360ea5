"""Deterministic citation checks: no model, always run, the same answer every time.

Each check returns the `Problem`s it finds on one claim:

- `dangling_source`: the claim or one of its quotes cites a source id the source set lacks
  (only when sources.json lists the set; otherwise the set is read off the findings).
- `quote_not_in_source`: a stored snapshot `sources/<id>.*` exists and the quote is not in
  it, compared after normalising case, whitespace, quote marks, dashes and ellipses (an
  ellipsis inside a quote stands for omitted text). The problem says how close the nearest
  passage came and whether the quote is verbatim in another source's snapshot.
- `number_mismatch`: a number of the claim (a count, a percentage, a year) that none of its
  quotes carries, with `1,000` = `1000`, `4.50` = `4.5`, `five` = `5`, `1.5 million` =
  `1,500,000`; `4.5%` and `4.5 percent` are the same number.
- `no_quote`: a claim with no quote, or only blank ones.
- `quote_source_not_cited`: a quote taken from a source the claim's `sourceIds` omit.

Snapshots are read once per source (confined to the session, byte-capped) and normalised
once; the word index used to find the nearest passage is built only for a source that
actually has a quote missing.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import stat
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from harness.audit.report import Problem
from harness.errors import ToolError
from harness.session import Session
from harness.session_models import Claim

# -- normalisation ---------------------------------------------------------------------

_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4`\u2039\u203a", "'"),
        **dict.fromkeys('"\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb', "'"),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", None),
    }
)
_SPACE = re.compile(r"\s+")
_DOTS = re.compile(r"\.(?:\s*\.){2,}")
_ELLIPSIS = re.compile(r"\[\s*\.\.\.\s*\]|\(\s*\.\.\.\s*\)|\.\.\.")
_PIECE_EDGES = " '.,;:()[]"
_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    """Case, whitespace, quote marks, dashes and ellipses folded, for comparing passages."""
    text = text.translate(_TRANSLATE)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)  # also turns "…" into "..."
    text = _SPACE.sub(" ", text.casefold())
    if ". ." in text:
        text = _DOTS.sub("...", text)
    return text.strip()


def quote_pieces(quote: str) -> list[str]:
    """A normalised quote's parts between ellipses, trimmed of edge punctuation."""
    pieces = (p.strip(_PIECE_EDGES) for p in _ELLIPSIS.split(quote))
    return [p for p in pieces if p]


def contains(text: str, quote: str) -> bool:
    """Whether normalised `text` holds normalised `quote`, its pieces in order."""
    at = 0
    for piece in quote_pieces(quote):
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


# -- snapshots -------------------------------------------------------------------------

FILE_CAP = 8 * 1024 * 1024
TOTAL_CAP = 256 * 1024 * 1024
_FUZZY_WORDS = 400  # longer quotes are compared by their first words only
_NEAREST_CHARS = 300


@dataclass(slots=True)
class Snapshot:
    """The normalised text of one source's stored snapshot(s)."""

    source_id: str
    files: list[str]
    text: str
    truncated: bool = False
    _words: list[str] | None = field(default=None, repr=False)
    _spans: list[tuple[int, int]] = field(default_factory=list, repr=False)
    _index: dict[str, list[int]] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        return ", ".join(self.files)

    def holds(self, quote: str) -> bool:
        return contains(self.text, quote)

    def _indexed(self) -> list[str]:
        if self._words is None:
            words: list[str] = []
            spans: list[tuple[int, int]] = []
            index: dict[str, list[int]] = {}
            for i, m in enumerate(_WORD.finditer(self.text)):
                word = m.group()
                words.append(word)
                spans.append(m.span())
                index.setdefault(word, []).append(i)
            self._words, self._spans, self._index = words, spans, index
        return self._words

    def nearest(self, quote: str) -> tuple[float, str]:
        """The best word-window similarity to `quote` (0..1) and that window's text.

        Windows are anchored where the quote's rarer words occur (each word votes for the
        window start it implies), and the few best-voted are compared word by word.
        """
        wanted = _WORD.findall(quote)[:_FUZZY_WORDS]
        words = self._indexed()
        if not wanted or not words:
            return 0.0, ""
        common = max(64, len(words) // 50)
        votes: Counter[int] = Counter()
        for rare_only in (True, False):
            for i, word in enumerate(wanted):
                where = self._index.get(word)
                if where is None or (rare_only and len(where) > common):
                    continue
                for position in where[: common * 4]:
                    votes[max(0, position - i)] += 1
            if votes:
                break
        best, best_at = 0.0, (0, 0)
        for start, _ in votes.most_common(5):
            stop = min(len(words), start + len(wanted))
            matcher = difflib.SequenceMatcher(None, wanted, words[start:stop], autojunk=False)
            ratio = matcher.ratio()
            if ratio > best:
                best, best_at = ratio, (start, stop)
        if best == 0.0:
            return 0.0, ""
        start, stop = best_at
        excerpt = self.text[self._spans[start][0] : self._spans[stop - 1][1]]
        if len(excerpt) > _NEAREST_CHARS:
            excerpt = excerpt[: _NEAREST_CHARS - 1].rstrip() + "…"
        return best, excerpt


class Snapshots:
    """Each source's snapshot text, read and normalised at most once, within byte caps."""

    def __init__(self, session: Session, *, file_cap: int = FILE_CAP, total_cap: int = TOTAL_CAP):
        self._dir = session.dir
        self._file_cap = file_cap
        self._budget = total_cap
        self._files: dict[str, list[Path]] = {}
        for path in session.snapshots.values():
            self._files.setdefault(path.stem, [])
        if self._files:
            self._list(session)
        self._cache: dict[str, Snapshot | None] = {}

    def _list(self, session: Session) -> None:
        # The loader keeps one file per id; a source may have several (s1.txt, s1.html),
        # and a quote found in any of them is in the source.
        try:
            entries = sorted((session.dir / "sources").iterdir())
        except OSError:
            entries = list(session.snapshots.values())
        for entry in entries:
            if entry.stem in self._files:
                self._files[entry.stem].append(entry)

    def ids(self) -> list[str]:
        return list(self._files)

    def get(self, source_id: str) -> Snapshot | None:
        if source_id not in self._cache:
            self._cache[source_id] = self._load(source_id)
        return self._cache[source_id]

    def _load(self, source_id: str) -> Snapshot | None:
        texts: list[str] = []
        names: list[str] = []
        truncated = False
        for path in self._files.get(source_id, []):
            read = self._read(path)
            if read is not None:
                text, cut = read
                texts.append(text)
                names.append(f"sources/{path.name}")
                truncated = truncated or cut
        if not texts:
            return None
        return Snapshot(source_id, names, "\n\n".join(texts), truncated)

    def _read(self, path: Path) -> tuple[str, bool] | None:
        """A snapshot's normalised text, or None when it cannot be used as text."""
        if self._budget <= 0:
            return None
        from harness.agent.scope import open_in_session, resolve_in_session

        try:
            # Confined like the Read tool: a snapshot that links out of the session is not read.
            resolved = resolve_in_session(self._dir, f"sources/{path.name}")
            fd = open_in_session(self._dir, resolved)
        except (ToolError, OSError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            cap = min(self._file_cap, self._budget)
            with os.fdopen(fd, "rb", closefd=False) as handle:
                blob = handle.read(cap + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        cut = len(blob) > cap
        blob = blob[:cap]
        self._budget -= len(blob)
        if b"\x00" in blob[:8192]:
            return None  # binary (a PDF, an image): not text to compare quotes against
        try:
            raw = blob.decode("utf-8")
        except UnicodeDecodeError as exc:
            if cut and exc.start >= len(blob) - 3:  # the cap split a character
                raw = blob[: exc.start].decode("utf-8", errors="replace")
            else:  # not UTF-8: most such pages are Windows-1252
                raw = blob.decode("cp1252", errors="replace")
        if path.suffix.lower() in (".html", ".htm", ".xhtml"):
            from harness.agent.fetch import html_to_text

            raw = html_to_text(raw)
        return normalise(raw), cut


# -- numbers ---------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?:\s+(million|billion|trillion|thousand)\b)?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_SCALE = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_TENS = "thirty forty fifty sixty seventy eighty ninety"
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_ONES.split(" "))} | {
    word: str(10 * (i + 3)) for i, word in enumerate(_TENS.split(" "))
}
_WORDS_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def _canonical(token: str) -> str:
    if _THOUSANDS.fullmatch(token):
        token = token.replace(",", "")
    if token.count(".") == 1 and "," not in token:
        whole, frac = token.split(".")
        frac = frac.rstrip("0")
        token = (whole.lstrip("0") or "0") + ("." + frac if frac else "")
    elif token.isdigit():
        token = token.lstrip("0") or "0"
    return token


def _forms(token: str, scale: str | None) -> set[str]:
    """Every spelling a number may match: itself, and its value when a scale word follows."""
    value = _canonical(token)
    forms = {value}
    if scale:
        with contextlib.suppress(InvalidOperation):
            forms.add(_canonical(str(Decimal(value) * _SCALE[scale.lower()])))
    return forms


def numbers(text: str) -> list[tuple[str, set[str]]]:
    """The numbers written in `text`, in order, each as (as written, forms it may match)."""
    out: dict[str, set[str]] = {}
    for m in _NUMBER.finditer(text):
        token = m.group(0).split()[0]
        out.setdefault(token, set()).update(_forms(token, m.group(1)))
    return list(out.items())


def number_forms(text: str) -> set[str]:
    """Every form of every number in `text`, number words included."""
    forms: set[str] = set()
    for _, f in numbers(text):
        forms |= f
    forms.update(_NUMBER_WORDS[w.lower()] for w in _WORDS_RE.findall(text))
    return forms


# -- the checks ------------------------------------------------------------------------


def _listing(ids: Iterable[str]) -> str:
    return ", ".join(ids)


def check_dangling(claim: Claim, known: set[str] | None) -> list[Problem]:
    """Ids cited by the claim or its quotes that the source set lacks (None: no set)."""
    if known is None:
        return []
    cited = dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)])
    missing = [sid for sid in cited if sid not in known]
    if not missing:
        return []
    return [
        Problem(
            check="dangling_source",
            detail=f"cites {_listing(missing)}, which sources.json does not list",
            sourceIds=missing,
        )
    ]


def check_no_quote(claim: Claim) -> list[Problem]:
    if not claim.quotes:
        return [Problem(check="no_quote", detail="the claim has no quote")]
    if all(not q.text.strip() for q in claim.quotes):
        return [Problem(check="no_quote", detail="every quote of the claim is blank")]
    return []


def check_quote_sources(claim: Claim) -> list[Problem]:
    """Quotes taken from a source the claim's own `sourceIds` do not name."""
    cited = set(claim.sourceIds)
    problems = []
    for j, quote in enumerate(claim.quotes):
        if quote.sourceId in cited:
            continue
        why = "which the claim's sourceIds omit" if cited else "but the claim lists no sourceIds"
        problems.append(
            Problem(
                check="quote_source_not_cited",
                detail=f"quote {j + 1} is from {quote.sourceId}, {why}",
                quote=j,
                sourceIds=[quote.sourceId],
            )
        )
    return problems


def check_numbers(claim: Claim) -> list[Problem]:
    """Numbers of the claim that none of its quotes carries (claims with quotes only)."""
    if not claim.quotes:
        return []
    written = numbers(claim.text)
    if not written:
        return []
    quoted: set[str] = set()
    for quote in claim.quotes:
        quoted |= number_forms(quote.text)
    absent = [token for token, forms in written if not forms & quoted]
    if not absent:
        return []
    which = "its quote" if len(claim.quotes) == 1 else "any of its quotes"
    verb = "is" if len(absent) == 1 else "are"
    return [
        Problem(
            check="number_mismatch",
            detail=f"{_listing(absent)} {verb} not in {which}",
            numbers=absent,
        )
    ]


def check_quotes_in_sources(claim: Claim, snapshots: Snapshots) -> list[Problem]:
    """Quotes not found in their source's stored snapshot, with the nearest passage."""
    problems = []
    for j, quote in enumerate(claim.quotes):
        snapshot = snapshots.get(quote.sourceId)
        if snapshot is None or not quote.text.strip():
            continue
        text = normalise(quote.text)
        if snapshot.holds(text):
            continue
        ratio, excerpt = snapshot.nearest(text)
        similarity = round(ratio * 100, 1)
        elsewhere = [
            sid
            for sid in snapshots.ids()
            if sid != quote.sourceId and (other := snapshots.get(sid)) and other.holds(text)
        ]
        detail = f"quote {j + 1} is not in {snapshot.label}"
        if snapshot.truncated:
            detail += f" (only its first {FILE_CAP:,} bytes were read)"
        if excerpt:
            detail += f"; the nearest passage matches {similarity:g}% of its words"
        else:
            detail += "; no passage shares its words"
        if elsewhere:
            detail += f"; it is verbatim in {_listing(elsewhere)}"
        problems.append(
            Problem(
                check="quote_not_in_source",
                detail=detail,
                quote=j,
                sourceIds=[quote.sourceId],
                similarity=similarity,
                nearest=excerpt or None,
                foundIn=elsewhere or None,
            )
        )
    return problems


class Checker:
    """Every deterministic check over one session's claims, sharing one snapshot store."""

    def __init__(self, session: Session) -> None:
        self.known = session.listed_source_ids if session.sources is not None else None
        self.snapshots = Snapshots(session)

    def check(self, claim: Claim) -> list[Problem]:
        return [
            *check_no_quote(claim),
            *check_dangling(claim, self.known),
            *check_quotes_in_sources(claim, self.snapshots),
            *check_numbers(claim),
            *check_quote_sources(claim),
        ]
