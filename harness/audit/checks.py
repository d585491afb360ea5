"""Deterministic citation checks: no model, always run, the same answer every time.

Each check returns the `Problem`s it finds on one claim:

- `dangling_source`: the claim or one of its quotes cites a source id the source set lacks
  (only when sources.json lists the set; otherwise the set is read off the findings).
- `quote_not_in_source`: a stored snapshot `sources/<id>.*` exists and the quote is not in
  its text (the plain rendering of :mod:`harness.session.snapshots`: HTML without its
  markup or hidden parts, a PDF's text layer), compared after normalising case,
  whitespace, quote marks, dashes and ellipses (an ellipsis inside a quote stands for
  omitted text). The problem says how close the nearest passage came (word similarity, %)
  and, when that is under 80%, whether the quote is verbatim in another source's snapshot
  (a misattribution).
- `number_mismatch`: a number of the claim (a count, a percentage, a year) that neither its
  quotes nor the stored text of its cited sources carry, with `1,000` = `1000`, `4.50` =
  `4.5`, `five` = `5`, `1.5 million` = `1,500,000`, `2018-19` = 2018-2019, `1990s` by a
  year in them (harness/audit/numbers.py reads the spellings; citation markers and names
  such as `COVID-19` are not numbers). A number the quotes lack, when a quoted source has no
  stored text to look in, is a *hint* (the claim's `hints`), not counted against it.
- `source_unreadable`: a quote's source has a snapshot that cannot become text (binary,
  an encrypted or image-only PDF, a page with no visible text), so the quote cannot be
  checked: said, never skipped in silence.
- `no_quote`: a claim with no quote, or only blank ones.
- `quote_source_not_cited`: a quote taken from a source the claim's `sourceIds` omit.

Snapshots are read once per source (through :mod:`harness.session.snapshots`, byte-capped)
and normalised once; the nearest passage is found with a few `str.find` of the quote's
phrases, without an index, and only for a quote that is missing.
"""

from __future__ import annotations

import bisect
import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.audit import inferred
from harness.audit.numbers import (
    MAX_CLAIM_NUMBERS,
    Evidence,
    Wanted,
    absent,
    digit_forms,
    numbers,
    word_forms,
)
from harness.audit.report import Problem
from harness.clock import Deadline, OutOfTime, overdue
from harness.session.loader import Session
from harness.session.models import Claim
from harness.session.snapshots import TOTAL_BYTES, SnapshotStore
from harness.text.decode import clean_controls
from harness.text.document import DEFAULT_LIMITS, Limits

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
    """Case, whitespace, quote marks, dashes and ellipses folded, for comparing passages.

    Control characters become spaces first, as the snapshots module makes them in the
    source text, so a quote copied with one still matches.
    """
    text = clean_controls(text)
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

FILE_CAP = DEFAULT_LIMITS.max_bytes
TOTAL_CAP = TOTAL_BYTES
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
    cuts: list[str] = field(default_factory=list)  # what the snapshots module left out

    @property
    def truncated(self) -> bool:
        return bool(self.cuts)

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


class Snapshots:
    """Each source's snapshot text, normalised at most once, from :mod:`harness.session.snapshots`.

    Which file counts, how it is decoded and how HTML or a PDF becomes text is the
    snapshots module's rule (the same one the loader and WebFetch use); quotes are
    matched against the document's ``plain`` rendering. The session's own store is
    shared when its caps are the ones asked for.
    """

    def __init__(self, session: Session, *, file_cap: int = FILE_CAP, total_cap: int = TOTAL_CAP):
        store = session.texts
        if store is None or store.limits.max_bytes != file_cap or store.total_bytes != total_cap:
            store = SnapshotStore(
                session.dir,
                limits=Limits(max_bytes=file_cap),
                total_bytes=total_cap,
                deadline=None if store is None else store.deadline,
            )
        self._store = store
        self._files: dict[str, None] = dict.fromkeys(session.snapshots)
        self._cache: dict[str, Snapshot | None] = {}
        self._everything: tuple[str, list[tuple[int, str]]] | None = None

    def get(self, source_id: str) -> Snapshot | None:
        if source_id not in self._cache:
            self._cache[source_id] = self._load(source_id)
        return self._cache[source_id]

    def unreadable(self, source_id: str) -> tuple[str, str] | None:
        """(file, why) when the source's snapshot exists but cannot become text."""
        if source_id not in self._files:
            return None
        document = self._store.document(source_id)
        if document is None or document.problem is None:
            return None
        return document.name, document.problem

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
            index = bisect.bisect_right(starts, (at, "\uffff")) - 1
            sid = starts[index][1]
            if sid != but:
                snapshot = self.get(sid)
                if snapshot is not None and snapshot.holds(pieces):
                    found[sid] = None
            # Each source is asked once: a first piece found a million times in one source
            # (a hostile "a ... zzz") costs one `holds`, not a million.
            end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
            at = text.find(pieces[0], end)
        return [sid for sid in self._files if sid in found]

    def _load(self, source_id: str) -> Snapshot | None:
        if source_id not in self._files:
            return None
        document = self._store.document(source_id)
        if document is None or document.problem is not None:
            return None
        return Snapshot(
            source_id,
            [document.name],
            normalise(document.plain),
            cuts=list(document.cuts),
            plain=document.plain,
        )

    def close(self) -> None:
        """Nothing stays open between reads; kept so callers may use `with`."""

    def __enter__(self) -> Snapshots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


_TEXT_CUTS = ("bytes cap", "pages cap", "time cap")  # cuts that leave text unread
SourceText = Callable[[str], Evidence | None]  # a source id's text (None: none stored)


def check_numbers(
    claim: Claim,
    source_text: SourceText | None = None,
    deadline: Deadline | None = None,
    premise: str = "",
) -> tuple[list[Problem], list[Problem]]:
    """Numbers of the claim that its quotes lack: (problems, hints); claims with quotes only.

    A number the quotes lack may be elsewhere in the source (a neighbouring sentence, the
    publication date): it is looked for in the stored text of every source the claim cites
    or quotes. Still absent, it is a problem when every source the claim quotes has text
    (the whole document was read), and a hint otherwise: the check cannot know. Raises
    `OutOfTime` once `deadline` (monotonic) has passed (a source's `Evidence` carries its
    own deadline).

    A missing number the claim's `premise` (its finding's sub-question) states, or one that
    follows in one arithmetic step from the numbers its evidence states where its wording
    asks for that step (harness.audit.inferred), is a hint, never a problem.
    """
    if not claim.quotes:
        return [], []
    wanted = numbers(claim.text, deadline)
    if not wanted:
        return [], []
    more = ""
    unchecked: list[Problem] = []
    if len(wanted) > MAX_CLAIM_NUMBERS:
        more = (
            f" (the claim states {len(wanted):,} numbers; only the first {MAX_CLAIM_NUMBERS} "
            "were checked)"
        )
        rest = [w for w, _ in wanted[MAX_CLAIM_NUMBERS:]]
        unchecked = [
            Problem(
                check="number_mismatch",
                detail=(
                    f"the claim states {len(wanted):,} numbers; only the first "
                    f"{MAX_CLAIM_NUMBERS} were checked, the other {len(rest):,} were not: a "
                    "hint for the support check, not a problem"
                ),
                numbers=rest[:20],
            )
        ]
        wanted = wanted[:MAX_CLAIM_NUMBERS]
    quoted = [Evidence(q.text, deadline=deadline) for q in claim.quotes]
    missing = absent(wanted, quoted)
    if not missing:
        return [], unchecked
    cited = dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)])
    texts = {sid: source_text(sid) if source_text is not None else None for sid in cited}
    read = [sid for sid, text in texts.items() if text is not None]
    missing = absent(missing, [text for text in texts.values() if text is not None])
    if not missing:
        return [], unchecked
    missing, inferred = _inferred(claim, missing, quoted, texts, premise)
    if not missing:
        return [], [*inferred, *unchecked]
    unchecked = [*inferred, *unchecked]
    written = [w for w, _ in missing]
    which = "its quote" if len(claim.quotes) == 1 else "any of its quotes"
    verb = "is" if len(written) == 1 else "are"
    unread = [sid for sid in dict.fromkeys(q.sourceId for q in claim.quotes) if sid not in read]
    if read and not unread:
        detail = f"{_listing(written)} {verb} not in {which}, nor in the text of {_listing(read)}"
        cut = [(sid, texts[sid]) for sid in read]
        said = [
            f"{sid}: {'; '.join(c for c in t.cuts if c.startswith(_TEXT_CUTS))}"
            for sid, t in cut
            if t is not None and any(c.startswith(_TEXT_CUTS) for c in t.cuts)
        ]
        if said:
            detail += (
                f" — but the text read was cut ({'; '.join(said)}), so the number may be in "
                "the part not read"
            )
        problem = Problem(check="number_mismatch", detail=detail + more, numbers=written)
        return [problem], unchecked
    has = "has" if len(unread) == 1 else "have"
    detail = (
        f"{_listing(written)} {verb} not in {which}, and {_listing(unread)} {has} no stored "
        "text to look in: a hint for the support check, not a problem"
    )
    return [], [Problem(check="number_mismatch", detail=detail + more, numbers=written), *unchecked]


def _inferred(
    claim: Claim,
    missing: list[Wanted],
    quoted: list[Evidence],
    texts: dict[str, Evidence | None],
    premise: str,
) -> tuple[list[Wanted], list[Problem]]:
    """The missing numbers that stay problems, and a hint for each the claim restates from
    its sub-question or derives in one step from its evidence (harness.audit.inferred)."""
    premise_forms = _digit_forms_of(premise) if premise.strip() else set()
    read = [e for e in texts.values() if e is not None and e.short()]
    forms: set[str] = set()
    for e in [*quoted, *read]:
        forms |= e.plain() | e.words()
    evidence = inferred.values(sorted(forms, key=_numeric_order))
    words = [q.text for q in claim.quotes] + [e.text for e in read]
    kept: list[Wanted] = []
    hints: list[Problem] = []
    for written, wanted_forms in missing:
        if inferred.in_premise(wanted_forms, premise_forms):
            why = "the finding's sub-question states it (the claim restates its premise)"
        else:
            step = inferred.derivation(written, wanted_forms, claim.text, evidence, words)
            if step is None:
                kept.append((written, wanted_forms))
                continue
            why = f"it follows in one step from numbers the evidence states ({step})"
        hints.append(
            Problem(
                check="number_mismatch",
                detail=f"{written} is not in the evidence as written, but {why}: a hint for "
                "the support check, not a problem",
                numbers=[written],
            )
        )
    return kept, hints


def _digit_forms_of(text: str) -> set[str]:
    return digit_forms(text) | word_forms(text)


def _numeric_order(form: str) -> tuple[int, str]:
    """Plain numbers first, shortest first (a cap then keeps the small counts a step uses)."""
    return (":" in form, f"{len(form):04d}{form}")


def check_quotes_in_sources(claim: Claim, snapshots: Snapshots) -> list[Problem]:
    """Quotes not found in their source's stored snapshot, with the nearest passage.

    A quote whose snapshot cannot become text is `source_unreadable`, never skipped.
    """
    problems = []
    for j, quote in enumerate(claim.quotes):
        if not quote.text.strip():
            continue
        snapshot = snapshots.get(quote.sourceId)
        if snapshot is None:
            unreadable = snapshots.unreadable(quote.sourceId)
            if unreadable is not None:
                problems.append(
                    Problem(
                        check="source_unreadable",
                        detail=(
                            f"quote {j + 1} cannot be checked: {unreadable[0]} cannot become "
                            f"text ({unreadable[1]})"
                        ),
                        quote=j,
                        sourceIds=[quote.sourceId],
                    )
                )
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
            detail += f" ({'; '.join(snapshot.cuts)})"
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

    def __init__(self, session: Session, *, deadline: Deadline | None = None) -> None:
        self.known = session.listed_source_ids  # None: no sources.json to check against
        self.snapshots = Snapshots(session)
        self._evidence: dict[str, Evidence | None] = {}
        # The run's deadline (the loader's, by default): past it, a claim's quotes and
        # numbers are not looked for in the sources, and each of its quotes says so.
        if deadline is None and session.texts is not None:
            deadline = session.texts.deadline
        self.deadline = deadline
        self.late = 0  # claims whose source checks were left out at the deadline
        self.stopped: str | None = None  # the claim whose number check the deadline stopped

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.snapshots.close()

    def source_text(self, source_id: str) -> Evidence | None:
        """A source's stored text, as the number check reads it (None: no text to read)."""
        if source_id not in self._evidence:
            snapshot = self.snapshots.get(source_id)
            text = snapshot.text if snapshot is not None else ""
            cuts = tuple(snapshot.cuts) if snapshot is not None else ()
            evidence = Evidence(text, cuts, self.deadline) if text.strip() else None
            self._evidence[source_id] = evidence
        return self._evidence[source_id]

    def check(self, claim: Claim, premise: str = "") -> list[Problem]:
        return self.review(claim, premise)[0]

    def review(self, claim: Claim, premise: str = "") -> tuple[list[Problem], list[Problem]]:
        """The claim's problems, and its hints (what a check could not decide); `premise` is
        the question the claim answers (its finding's sub-question)."""
        if overdue(self.deadline):
            return self._late(claim), []
        try:
            number_problems, hints = check_numbers(claim, self.source_text, self.deadline, premise)
        except OutOfTime:  # reading its numbers' forms: nothing half read is used
            self.stopped = claim.id
            return self._late(claim, "while its numbers were being looked for"), []
        problems = [
            *check_no_quote(claim),
            *check_dangling(claim, self.known),
            *check_quotes_in_sources(claim, self.snapshots),
            *number_problems,
            *check_quote_sources(claim),
        ]
        return problems, hints

    def cuts(self) -> list[str]:
        """What the deadline left unchecked, in one sentence (none when nothing was)."""
        if not self.late:
            return []
        stopped = (
            f", the number check of claim {self.stopped} stopped midway"
            if self.stopped is not None
            else ""
        )
        return [
            f"the run's time limit was reached during the deterministic checks{stopped}: "
            f"{self.late:,} claim(s) had their quotes and numbers left unchecked against "
            "their sources (source_unreadable)"
        ]

    def _late(self, claim: Claim, when: str = "before this claim's turn") -> list[Problem]:
        """Past the deadline: the cheap checks, and each quote said to be unchecked (it
        leaves the citation unverified, as an unreadable source does)."""
        self.late += 1
        late = [
            Problem(
                check="source_unreadable",
                detail=(
                    f"quote {j + 1} was not checked against its source: the run's time limit "
                    f"was reached {when}"
                ),
                quote=j,
                sourceIds=[quote.sourceId],
            )
            for j, quote in enumerate(claim.quotes)
            if quote.text.strip()
        ]
        return [
            *check_no_quote(claim),
            *check_dangling(claim, self.known),
            *late,
            *check_quote_sources(claim),
        ]
