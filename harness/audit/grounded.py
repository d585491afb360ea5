"""Support judged against the cited sources' own text (`--against sources`).

Each cited source with text is ONE engine source: its plain text cut into passages
(`harness.audit.passages`); each claim citing it takes its own most relevant passages, at
most `passage_chars` characters of them, and the source is the union of those, kept in
document order (`as: "passages"`). Every claim citing that source is
one screened concern over it, named after the claim (`c-<claim id>`), so all of them are
asked in the same round-1 windows: the source's text is sent once per window however many
claims cite it. Round 2 is one request per claim and source (one finding, never merged
with another claim's: a confirm reads its passage beside the claim's other gathered
passages and nothing else), confirming the passages gathered for the claim as a set; a
descriptor named like the concern asks whether they support the claim taken together (it
also keeps two claims that gathered the same passages apart in a replay: replays are keyed
by question keys, never by wording).

A claim citing several sources with text is judged in each; its verdict is the best:

| the claim's findings over its sources        | claim                                  |
|----------------------------------------------|----------------------------------------|
| one holds                                    | `supported`                            |
| none holds, one is for review                | `uncertain`                            |
| none gathered, or all fail, nothing failed   | `unsupported`, `source_does_not_support` |
| otherwise (a request failed)                 | `error`                                |

Engine passage ids are `<source id>-p<n>` (made safe, unique per source); the report's
`passageId` is `<source id>:p<n>`, n the passage's order in the whole text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from harness.audit.passages import CLAIM_CHARS, MAX_CHARS, SourcePassage, select
from harness.audit.report import (
    Against,
    ClaimError,
    ClaimVerdict,
    Overlap,
    PassageResult,
    PassageVerdict,
    Problem,
)
from harness.audit.support import (  # one wording of support, one naming rule, both modes
    CRITERIA,
    ID_UNSAFE,
    decided_confidence,
    unique_name,
)
from harness.cite import (
    CiteSource,
    Concerns,
    Descriptor,
    Noul,
    Report,
    ScreenedConcern,
)
from harness.clock import Deadline, OutOfTime, overdue
from harness.session.models import Claim

LATE = "the citation audit's time limit was reached"
LATE_KIND = "time_limit"  # a claim's error when a source it cites was not judged in time
DEFAULT_PASSAGE_CHARS = CLAIM_CHARS  # each claim's passages of a source, in characters
PASSAGE_CHARS_MIN = MAX_CHARS  # one passage at least
CLAIM_CAP = 1000  # characters of a claim put into its questions
STATE_KEY = "passages"


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_WORD = re.compile(r"\w+")
_WORDS = re.compile(r"(\w+)")  # split: the text between words, then each word, in turn

TextOf = Callable[[str], str | None]  # a source id's plain text (None: none to read)


def concern_names(claim_ids: Iterable[str]) -> list[str]:
    """A concern name per claim: `c-` and the id's safe characters, unique, in order."""
    seen: set[str] = set()
    return [unique_name(f"c-{_NAME_UNSAFE.sub('_', cid)}"[:60], seen, "-") for cid in claim_ids]


def cited(claim: Claim) -> list[str]:
    """The sources a claim cites or quotes, once each, in order."""
    return list(dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)]))


def choose(against: Against, has_text: bool) -> str | None:
    """What a claim is judged against: `sources`, `quotes`, or None (nothing to read)."""
    if against == "quotes":
        return "quotes"
    if has_text:
        return "sources"
    return "quotes" if against == "auto" else None


def _cap(text: str) -> str:
    return text if len(text) <= CLAIM_CAP else text[: CLAIM_CAP - 1] + "…"


def supports(name: str, claim_text: str, alone: bool = False) -> ScreenedConcern:
    """One claim's concern over a source's passages (`alone`: the only claim citing it)."""
    said = _cap(" ".join(claim_text.split()))
    # Round 1 asks every claim of the source in one window: each wording names its claim,
    # unless it is the only one there.
    which = "the claim" if alone else f"claim {name}"
    return ScreenedConcern(
        name=name,
        detect=Noul(question=f"Does {{passage}} support {which}: {said}", criteria=CRITERIA),
        # Round 2 asks one claim's finding alone.
        confirm=Noul(
            question=f"Beside the other passages here, does {{passage}} evidence the claim: {said}",
            criteria=CRITERIA,
        ),
        descriptors=[
            Descriptor(
                name=name,
                ask=Noul(
                    # One wording for every claim: its request holds that claim alone.
                    question="Taken together, do the compared passages support the claim?",
                    criteria=CRITERIA,
                ),
            )
        ],
    )


@dataclass(slots=True)
class CitedDocument:
    """One cited source with text, as the engine reads it, and the claims citing it."""

    source_id: str
    plain: str
    passages: list[SourcePassage]  # the kept ones, in document order (once `prepare`d)
    engine_ids: list[str]
    claims: list[int] = field(default_factory=list)  # indexes into the caller's claims
    names: list[str] = field(default_factory=list)  # each claim's concern name
    prefix: str = ""  # of its engine passage ids: the source id made safe, unique
    _words: str | None = None  # the text's casefolded words, one space apart
    _pieces: list[str] | None = None  # `plain` split around its words (`_WORDS`)
    _ends: list[int] | None = None  # where each piece ends in `plain`
    _located: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    own: list[list[SourcePassage]] = field(default_factory=list)  # each claim's own, as `claims`
    notes: list[str] = field(default_factory=list)  # what ranking cut (`select`)
    # Why the document was not judged: the audit's time ran out before or while it was
    # ranked (`prepare`). Its claims are never asked about it, and end as `time_limit`.
    late: str | None = None
    ranking: bool = False  # `late` came while its passages were being ranked

    def prepare(
        self, claims: Sequence[Claim], passage_chars: int, deadline: Deadline | None = None
    ) -> None:
        """Split the text into passages; keep, for each claim citing it, its most relevant
        passages within `passage_chars` characters; the document sends their union (in
        document order), each passage with its engine id. Past `deadline` (monotonic),
        before or while ranking, nothing is kept and `late` says why."""
        if overdue(deadline):
            self.late = f"{LATE} before its passages were ranked"
            return
        try:
            found = select(
                self.source_id,
                self.plain,
                [claims[i].text for i in self.claims],
                passage_chars,
                names=[claims[i].id for i in self.claims],
                deadline=deadline,
            )
        except OutOfTime:
            self.late = f"{LATE} while its passages were being ranked"
            self.ranking = True
            return
        kept = found.passages
        self.own, self.notes = found.by_query, found.notes
        self.passages = kept
        self.engine_ids = [f"{self.prefix}-p{p.index}" for p in kept]

    def source(self) -> CiteSource:
        return CiteSource.model_validate(
            {
                "as": STATE_KEY,
                "passages": [
                    {"id": pid, "text": p.text}
                    for pid, p in zip(self.engine_ids, self.passages, strict=True)
                ],
            }
        )

    def concerns(self, claims: Sequence[Claim]) -> Concerns:
        return Concerns(
            concerns=[
                supports(name, claims[i].text, alone=len(self.claims) == 1)
                for i, name in zip(self.claims, self.names, strict=True)
            ]
        )

    def locate(self, quote: str) -> tuple[int, int] | None:
        """Where a quote's words run in the plain text (case and spacing aside), or None."""
        if quote not in self._located:
            self._located[quote] = self._find(quote)
        return self._located[quote]

    def locate_quotes(self, claims: Sequence[Claim]) -> None:
        """Locate the quotes this document's claims take from it, ahead of `overlap`: the
        audit does it while the model's replies are awaited, not after the last one (not
        at all for a document not judged: `late`)."""
        if self.late is not None:
            return
        for i in self.claims:
            for quote in claims[i].quotes:
                if quote.sourceId == self.source_id and quote.text.strip():
                    self.locate(quote.text)

    def _find(self, quote: str) -> tuple[int, int] | None:
        # Casefold maps each character alone and never makes a space, so word i of the
        # casefolded, space-joined words is the i-th space-separated one.
        wanted = " ".join(_WORD.findall(quote)).casefold()
        if not wanted:
            return None
        if self._pieces is None or self._words is None:
            # Between words, then a word, in turn: word k is piece 2k+1 (as `_WORD` finds it).
            self._pieces = _WORDS.split(self.plain)
            self._words = " ".join(self._pieces[1::2]).casefold()
        joined = self._words
        found = joined.find(wanted)
        while found >= 0:
            if found == 0 or joined[found - 1] == " ":  # at a word's start
                if self._ends is None:
                    # Offsets by summing lengths, in C: a match object per word cost most of
                    # locating the quotes.
                    self._ends = list(itertools.accumulate(map(len, self._pieces)))
                i = joined.count(" ", 0, found)
                j = i + wanted.count(" ")
                return self._ends[2 * i], self._ends[2 * j + 1]
            found = joined.find(wanted, found + 1)
        return None


def grouped(claims: Sequence[Claim], ground: Sequence[int], text_of: TextOf) -> list[CitedDocument]:
    """The sources the `ground` claims cite that have text, each with its claims, in order;
    none yet `prepare`d: the audit splits and ranks each one just before it is judged, while
    the requests of those before it are in flight."""
    names = concern_names(claims[i].id for i in ground)
    by_source: dict[str, CitedDocument | None] = {}
    prefixes: set[str] = set()
    for i, name in zip(ground, names, strict=True):
        for sid in cited(claims[i]):
            if sid not in by_source:
                plain = text_of(sid)
                if plain is None or not plain.strip():
                    by_source[sid] = None
                    continue
                prefix = unique_name(ID_UNSAFE.sub("_", sid) or "s", prefixes, "~")
                by_source[sid] = CitedDocument(sid, plain, [], [], prefix=prefix)
            doc = by_source[sid]
            if doc is not None:
                doc.claims.append(i)
                doc.names.append(name)
    return [d for d in by_source.values() if d is not None]


@dataclass(slots=True)
class Grounded:
    """What the claim's sources said, gathered over every document it cites."""

    verdict: ClaimVerdict
    passages: list[PassageResult]
    together: float | None
    overlap: Overlap | None
    requests: int
    error: ClaimError | None
    problem: Problem | None
    confidence: float | None  # `support.decided_confidence`; None unless a verdict


_RANK: dict[str, int] = {"holds": 0, "review": 1, "fails": 2}


Judged = tuple[
    CitedDocument, str, Report | None
]  # a document, the claim's concern name, its report


def read(claim: Claim, judged: list[Judged]) -> Grounded:
    """The claim's verdict from its findings in each (document, concern name, report); a
    document not judged in time (`late`, no report) is an error of kind `time_limit`."""
    passages: list[PassageResult] = []
    best: str | None = None
    together: float | None = None
    error: ClaimError | None = None
    requests = 0
    confirms: list[float] = []  # every round-2 confirm of the claim's own findings
    screened: list[float] = []  # its round-1 best where it had no finding
    for doc, name, report in judged:
        if report is None:
            if error is None:
                error = ClaimError(
                    kind=LATE_KIND, message=f"not judged against {doc.source_id}: {doc.late}"
                )
            continue
        finding = next((f for f in report.findings if f.concern == name), None)
        by_id = dict(zip(doc.engine_ids, doc.passages, strict=True))
        if finding is None:
            # Nothing gathered for this claim: its own evidence decides (unsupported), unless
            # a round-1 window that held one of its own passages failed. The report's other
            # errors belong to other claims citing the source (their round-2 requests).
            failed = _own_window_error(doc, name, report)
            if failed is not None and error is None:
                error = failed
            first_round = report.strongest.get(name)
            if first_round is not None:
                screened.append(first_round)
            continue
        requests += 1
        if finding.verdict is None:
            if error is None and finding.error is not None:
                error = ClaimError(
                    kind=finding.error.kind, message=finding.error.message or finding.error.kind
                )
            continue
        if best is None or _RANK[finding.verdict] < _RANK[best]:
            best = finding.verdict
        confirms.extend(finding.confirms.values())
        answer = finding.descriptors.get(name)
        if answer is not None and isinstance(answer.value, float):
            together = answer.value if together is None else max(together, answer.value)
        status: dict[str, tuple[PassageVerdict, float | None]] = {
            c.passage: (c.status, c.score) for c in finding.citations
        }
        for pid in finding.passages:
            p = by_id[pid]
            said, score = status.get(pid, ("dropped", None))
            passages.append(
                PassageResult(
                    sourceId=doc.source_id,
                    passageId=p.id,
                    start=p.start,
                    end=p.end,
                    text=p.text,
                    verdict=said,
                    confirm=score,
                )
            )
    verdict: ClaimVerdict
    problem: Problem | None = None
    if best == "holds":
        verdict = "supported"
    elif best == "review":
        verdict = "uncertain"
    elif error is not None:
        verdict = "error"
    else:
        verdict = "unsupported"
        read_ids = [doc.source_id for doc, _, _ in judged]
        problem = Problem(
            check="source_does_not_support",
            detail=f"the text of {', '.join(read_ids)} was read and no passage of it "
            "supports the claim",
            sourceIds=read_ids,
        )
    decided = verdict in ("supported", "uncertain", "unsupported")
    return Grounded(
        verdict,
        passages,
        together,
        overlap(claim, judged, passages),
        requests,
        None if decided else error,
        problem,
        decided_confidence(confirms, screened) if decided else None,
    )


def _own_window_error(doc: CitedDocument, name: str, report: Report) -> ClaimError | None:
    """The error of the first failed round-1 window that held one of the claim's own
    passages of `doc` (the ones ranked for it), or None."""
    k = doc.names.index(name)
    own = {f"{doc.prefix}-p{p.index}" for p in (doc.own[k] if k < len(doc.own) else [])}
    for failed in report.errors:
        if failed.round == 1 and own.intersection(failed.window or ()):
            return ClaimError(kind=failed.kind, message=failed.message or failed.kind)
    return None


_OVERLAP_RANK: dict[Overlap, int] = {"within": 0, "overlaps": 1, "apart": 2, "unlocated": 3}


def overlap(claim: Claim, judged: list[Judged], passages: list[PassageResult]) -> Overlap | None:
    """Where the claim's own quotes lie against the passages that hold or are for review;
    None when no document it cites was judged (`late`): nothing was looked for."""
    if not any(q.text.strip() for q in claim.quotes):
        return "no_quote"
    docs = {doc.source_id: doc for doc, _, report in judged if report is not None}
    if not docs:
        return None
    best: Overlap = "unlocated"
    for quote in claim.quotes:
        doc = docs.get(quote.sourceId)
        if doc is None or not quote.text.strip():
            continue
        span = doc.locate(quote.text)
        if span is None:
            continue
        here: Overlap = "apart"
        for p in passages:
            if p.sourceId != quote.sourceId or p.verdict == "dropped":
                continue
            if p.start <= span[0] and span[1] <= p.end:
                here = "within"
                break
            if span[0] < p.end and p.start < span[1]:
                here = "overlaps"
        if _OVERLAP_RANK[here] < _OVERLAP_RANK[best]:
            best = here
    return best
