"""Deterministic citation checks: no model, always run, the same answer every time.

Each check returns the `Problem`s it finds on one claim:

- `dangling_source`: the claim or one of its quotes cites a source id the source set lacks
  (only when sources.json lists the set; otherwise the set is read off the findings).
- `quote_not_in_source`: a stored snapshot `sources/<id>.*` exists and the quote is not in
  it, compared after normalising case, whitespace, quote marks, dashes and ellipses (an
  ellipsis inside a quote stands for omitted text). The problem says how close the nearest
  passage came (word similarity, %) and, when that is under 80%, whether the quote is
  verbatim in another source's snapshot (a misattribution).
- `number_mismatch`: a number of the claim (a count, a percentage, a year) that neither its
  quotes nor the stored text of its cited sources carry, with `1,000` = `1000`, `4.50` =
  `4.5`, `five` = `5`, `1.5 million` = `1,500,000`, `2018-19` = 2018-2019, `1990s` by a
  year in them (harness/audit/numbers.py reads the spellings; citation markers and names
  such as `COVID-19` are not numbers). A number the quotes lack, when a quoted source has no
  stored text to look in, is a *hint* (the claim's `hints`), not counted against it.
- `no_quote`: a claim with no quote, or only blank ones.
- `quote_source_not_cited`: a quote taken from a source the claim's `sourceIds` omit.

Snapshots are read once per source (confined to the session, byte-capped) and normalised
once; the nearest passage is found with a few `str.find` of the quote's phrases, without an
index, and only for a quote that is missing.
"""

from __future__ import annotations

import bisect
import difflib
import os
import re
import stat
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.audit.numbers import Evidence, absent, numbers
from harness.audit.report import Problem
from harness.session.loader import Session
from harness.session.models import Claim

# -- normalisation ---------------------------------------------------------------------

_FOLD = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4`\u2039\u203a", "'"),
    **dict.fromkeys('"\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb', "'"),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", ""),
}
_FOLD_ITEMS = tuple(_FOLD.items())


def _fold(text: str) -> str:
    # One `in` scan per character to fold, replacing only those present: several times
    # faster than a regex calling back per match, or translate looking up every character.
    for char, into in _FOLD_ITEMS:
        if char in text:
            text = text.replace(char, into)
    return text


_DOTS = re.compile(r"\.(?:\s*\.){2,}")
_ELLIPSIS = re.compile(r"\[\s*\.\.\.\s*\]|\(\s*\.\.\.\s*\)|\.\.\.")
_PIECE_EDGES = " '.,;:()[]"
_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    """Case, whitespace, quote marks, dashes and ellipses folded, for comparing passages."""
    if text.isascii():  # most snapshots: two replaces cost far less than a translate
        text = text.replace('"', "'").replace("`", "'")
    else:
        # Folded before (NFKC splits "´") and after (NFKC makes "﹘" a dash to fold).
        text = _fold(unicodedata.normalize("NFKC", _fold(text)))
    text = " ".join(text.casefold().split())
    if ". ." in text:
        text = _DOTS.sub("...", text)
    return text


def quote_pieces(quote: str) -> list[str]:
    """A normalised quote's parts between ellipses, trimmed of edge punctuation."""
    if "..." not in quote:  # the usual case, without the regex
        piece = quote.strip(_PIECE_EDGES)
        return [piece] if piece else []
    pieces = (p.strip(_PIECE_EDGES) for p in _ELLIPSIS.split(quote))
    return [p for p in pieces if p]


def contains(text: str, quote: str | list[str]) -> bool:
    """Whether normalised `text` holds a normalised quote (or its pieces), in order."""
    at = 0
    for piece in quote_pieces(quote) if isinstance(quote, str) else quote:
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
_ANCHORS = 12  # phrases of the quote looked up per length
_CANDIDATES = 6  # windows compared word by word


@dataclass(slots=True)
class Snapshot:
    """The normalised text of one source's stored snapshot(s)."""

    source_id: str
    files: list[str]
    text: str
    truncated: bool = False
    # The text as read, before normalising (what passages and their offsets are cut from).
    plain: str = ""

    @property
    def label(self) -> str:
        return ", ".join(self.files)

    def holds(self, quote: str | list[str]) -> bool:
        return contains(self.text, quote)

    def nearest(self, quote: str) -> tuple[float, str]:
        """The best word-window similarity to `quote` (0..1) and that window's text.

        Phrases of the quote (4 words, then 2, then single long words) are looked up in the
        text; each occurrence implies where a copy of the quote would start there. The
        starts most phrases agree on are compared with the quote word by word. No index is
        built, so a long snapshot costs a few `str.find` per missing quote.
        """
        words = quote.split(" ")[:_FUZZY_WORDS]
        wanted = _WORD.findall(" ".join(words))
        if not wanted or not self.text:
            return 0.0, ""
        offsets = [0]
        for word in words[:-1]:
            offsets.append(offsets[-1] + len(word) + 1)
        votes: Counter[int] = Counter()
        for n in (4, 2, 1):
            starts = range(0, max(1, len(words) - n + 1))
            step = max(1, len(starts) // _ANCHORS)
            for i in starts[::step]:
                phrase = " ".join(words[i : i + n])
                if len(phrase) < (5 if n == 1 else 3):
                    continue
                at = self.text.find(phrase)
                for _ in range(3):  # a few occurrences of a phrase, not every one
                    if at < 0:
                        break
                    votes[max(0, at - offsets[i])] += 1
                    at = self.text.find(phrase, at + 1)
            if votes:
                break
        span = offsets[-1] + len(words[-1])
        best, best_at = 0.0, (0, 0)
        chosen: list[int] = []
        for implied, _ in votes.most_common():
            if len(chosen) == _CANDIDATES:
                break
            if any(abs(implied - c) < 8 for c in chosen):
                continue  # a word changed length: the same window, a few characters off
            chosen.append(implied)
        for implied in chosen:
            start = self._word_start(implied)
            stop = self._word_end(min(len(self.text), start + span))
            window = _WORD.findall(self.text[start:stop])
            ratio = difflib.SequenceMatcher(None, wanted, window, autojunk=False).ratio()
            if ratio > best:
                best, best_at = ratio, (start, stop)
        if best == 0.0:
            return 0.0, ""
        excerpt = self.text[best_at[0] : best_at[1]].strip()
        if len(excerpt) > _NEAREST_CHARS:
            excerpt = excerpt[: _NEAREST_CHARS - 1].rstrip() + "…"
        return best, excerpt

    def _word_start(self, at: int) -> int:
        space = self.text.rfind(" ", 0, at + 1)
        return 0 if space < 0 else space + 1

    def _word_end(self, at: int) -> int:
        space = self.text.find(" ", at)
        return len(self.text) if space < 0 else space


_SNAPSHOT_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK


class Snapshots:
    """Each source's snapshot text, read and normalised at most once, within byte caps.

    Files are opened relative to `sources/` with `O_NOFOLLOW` (the folder itself must not
    be a link out of the session), so a snapshot that is a symlink is never followed out.
    The folder is opened once, on first use; `close` (or `with`) gives it back.
    """

    def __init__(self, session: Session, *, file_cap: int = FILE_CAP, total_cap: int = TOTAL_CAP):
        self._sources: int | None = None  # first: __del__ reads it even if __init__ fails
        self._dir = session.dir
        self._file_cap = file_cap
        self._budget = total_cap
        self._files: dict[str, list[str]] = {}
        for path in session.snapshots.values():
            self._files.setdefault(path.stem, [])
        if self._files:
            self._list(session)
        self._cache: dict[str, Snapshot | None] = {}
        self._everything: tuple[str, list[tuple[int, str]]] | None = None

    def _list(self, session: Session) -> None:
        # The loader keeps one file per id; a source may have several (s1.txt, s1.html),
        # and a quote found in any of them is in the source.
        try:
            names = sorted(os.listdir(session.dir / "sources"))
        except OSError:
            names = sorted(p.name for p in session.snapshots.values())
        for name in names:
            stem = os.path.splitext(name)[0]
            if stem in self._files:
                self._files[stem].append(name)

    def get(self, source_id: str) -> Snapshot | None:
        if source_id not in self._cache:
            self._cache[source_id] = self._load(source_id)
        return self._cache[source_id]

    def holding(self, pieces: list[str], but: str) -> list[str]:
        """Sources other than `but` whose snapshot holds the quote's pieces, in id order."""
        if self._everything is None:
            # Every snapshot joined once, so each missing quote is one scan, not one per source.
            parts: list[str] = []
            starts: list[tuple[int, str]] = []
            at = 0
            for sid in self._files:
                snapshot = self.get(sid)
                if snapshot is not None:
                    starts.append((at, sid))
                    parts.append(snapshot.text)
                    at += len(snapshot.text) + 1
            self._everything = ("\x00".join(parts), starts)
        text, starts = self._everything
        if not pieces:
            return []
        found: dict[str, None] = {}
        at = text.find(pieces[0])
        while at >= 0:
            sid = starts[bisect.bisect_right(starts, (at, "\uffff")) - 1][1]
            if sid != but and sid not in found:
                snapshot = self.get(sid)
                if snapshot is not None and snapshot.holds(pieces):
                    found[sid] = None
            at = text.find(pieces[0], at + 1)
        return [sid for sid in self._files if sid in found]

    def _load(self, source_id: str) -> Snapshot | None:
        names = self._files.get(source_id, [])
        sources = self._folder() if names else None
        if sources is None:
            return None
        texts: list[str] = []
        plains: list[str] = []
        used: list[str] = []
        truncated = False
        for name in names:
            read = self._read(sources, name)
            if read is not None:
                texts.append(normalise(read[0]))
                plains.append(read[0])
                used.append(f"sources/{name}")
                truncated = truncated or read[1]
        if not texts:
            return None
        return Snapshot(source_id, used, "\n\n".join(texts), truncated, "\n\n".join(plains))

    def _folder(self) -> int | None:
        """`sources/`, opened once (not through a link) and kept until `close`."""
        if self._sources is None:
            try:
                folder = os.open(self._dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return None
            try:
                self._sources = os.open(
                    "sources",
                    os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                    dir_fd=folder,
                )
            except OSError:
                return None
            finally:
                os.close(folder)
        return self._sources

    def close(self) -> None:
        if self._sources is not None:
            os.close(self._sources)
            self._sources = None

    def __enter__(self) -> Snapshots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a caller that forgot `close` still gives the fd back
        self.close()

    def _read(self, sources: int, name: str) -> tuple[str, bool] | None:
        """A snapshot's text (not yet normalised), or None when it cannot be used as text."""
        if self._budget <= 0:
            return None
        try:
            fd = os.open(name, _SNAPSHOT_FLAGS, dir_fd=sources)
        except OSError:  # ELOOP: a symlink, refused like the Read tool refuses one leading out
            return None
        cap = min(self._file_cap, self._budget)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            # Sized by the file, not the cap: no 8 MiB buffer for a 3 KB snapshot.
            want = min(cap, info.st_size) + 1
            chunks: list[bytes] = []
            while want > 0:
                chunk = os.read(fd, want)
                chunks.append(chunk)
                if len(chunk) < want:  # a regular file reads short only at its end
                    break
                want -= len(chunk)
            blob = b"".join(chunks)
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
        if os.path.splitext(name)[1].lower() in (".html", ".htm", ".xhtml"):
            from harness.agent.fetch import html_to_text

            raw = html_to_text(raw)
        return raw, cut


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


SourceText = Callable[[str], Evidence | None]  # a source id's text (None: none stored)


def check_numbers(
    claim: Claim, source_text: SourceText | None = None
) -> tuple[list[Problem], list[Problem]]:
    """Numbers of the claim that its quotes lack: (problems, hints); claims with quotes only.

    A number the quotes lack may be elsewhere in the source (a neighbouring sentence, the
    publication date): it is looked for in the stored text of every source the claim cites
    or quotes. Still absent, it is a problem when every source the claim quotes has text
    (the whole document was read), and a hint otherwise: the check cannot know.
    """
    if not claim.quotes:
        return [], []
    wanted = numbers(claim.text)
    if not wanted:
        return [], []
    missing = absent(wanted, [Evidence(q.text) for q in claim.quotes])
    if not missing:
        return [], []
    cited = dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)])
    texts = {sid: source_text(sid) if source_text is not None else None for sid in cited}
    read = [sid for sid, text in texts.items() if text is not None]
    missing = absent(missing, [text for text in texts.values() if text is not None])
    if not missing:
        return [], []
    written = [w for w, _ in missing]
    which = "its quote" if len(claim.quotes) == 1 else "any of its quotes"
    verb = "is" if len(written) == 1 else "are"
    unread = [sid for sid in dict.fromkeys(q.sourceId for q in claim.quotes) if sid not in read]
    if read and not unread:
        detail = f"{_listing(written)} {verb} not in {which}, nor in the text of {_listing(read)}"
        return [Problem(check="number_mismatch", detail=detail, numbers=written)], []
    has = "has" if len(unread) == 1 else "have"
    detail = (
        f"{_listing(written)} {verb} not in {which}, and {_listing(unread)} {has} no stored "
        "text to look in: a hint for the support check, not a problem"
    )
    return [], [Problem(check="number_mismatch", detail=detail, numbers=written)]


def check_quotes_in_sources(claim: Claim, snapshots: Snapshots) -> list[Problem]:
    """Quotes not found in their source's stored snapshot, with the nearest passage."""
    problems = []
    for j, quote in enumerate(claim.quotes):
        snapshot = snapshots.get(quote.sourceId)
        if snapshot is None or not quote.text.strip():
            continue
        text = normalise(quote.text)
        pieces = quote_pieces(text)
        if snapshot.holds(pieces):
            continue
        ratio, excerpt = snapshot.nearest(text)
        similarity = round(ratio * 100, 1)
        # A quote its own source nearly holds was edited, not taken from elsewhere: only a
        # distant one is looked for in the other snapshots (one scan of them all).
        elsewhere = snapshots.holding(pieces, but=quote.sourceId) if similarity < 80 else []
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
        self.known = session.listed_source_ids  # None: no sources.json to check against
        self.snapshots = Snapshots(session)
        self._evidence: dict[str, Evidence | None] = {}

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.snapshots.close()

    def source_text(self, source_id: str) -> Evidence | None:
        """A source's stored text, as the number check reads it (None: no text to read)."""
        if source_id not in self._evidence:
            snapshot = self.snapshots.get(source_id)
            text = snapshot.text if snapshot is not None else ""
            self._evidence[source_id] = Evidence(text) if text.strip() else None
        return self._evidence[source_id]

    def check(self, claim: Claim) -> list[Problem]:
        return self.review(claim)[0]

    def review(self, claim: Claim) -> tuple[list[Problem], list[Problem]]:
        """The claim's problems, and its hints (what a check could not decide)."""
        number_problems, hints = check_numbers(claim, self.source_text)
        problems = [
            *check_no_quote(claim),
            *check_dangling(claim, self.known),
            *check_quotes_in_sources(claim, self.snapshots),
            *number_problems,
            *check_quote_sources(claim),
        ]
        return problems, hints
