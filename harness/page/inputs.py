"""What a report page shows, read from one session folder into plain view objects.

Four inputs, each optional, each read through the session's confined reader without ever
raising on bad content (a problem is recorded and the page says what is missing and how
to get it):

- `judge.json` through `harness.contract.judgment.check_session_judge`;
- `.judge/citations.json` and `.judge/run.json` by their one reader each
  (`harness.artifacts.read.provenance`: this installation's seal, this session's), the
  report with its claims' `passages` (the source-grounded audit, when it ran), the record
  through `run_view`, the one adapter from the run record to the page;
- the session's findings and sources through `harness.session.loader.load_session`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.agent.calls import ToolCallRecord
from harness.artifacts.read import Provenance, Read, provenance
from harness.artifacts.record import RunRecord
from harness.audit.agreement import compare, expectation
from harness.audit.report import SERIOUS, CitationReport, ClaimResult, PassageResult
from harness.contract.judgment import check_session_judge
from harness.session.loader import Session, load_session

CONTEXT_CHARS = 240  # source text shown on each side of a located passage
# How the run words the note of its advisory all-Unknown judgment (harness.run).
FALLBACK_PREFIX = "Advisory fallback by the harness"


@dataclass(slots=True)
class PassageView:
    source_id: str
    passage_id: str
    before: str
    text: str
    after: str
    verdict: str
    located: bool  # shown inside the snapshot's own text
    # `text` cut where the claim's quotes are: (piece, marked). One unmarked piece when no
    # quote of the claim is in it; the whole passage marked when the claim has no quote.
    pieces: list[tuple[str, bool]] = field(default_factory=list)
    # whether a quote of the claim is in the passage; None: the claim has no quote
    quoted: bool | None = None


@dataclass(slots=True)
class SourceView:
    id: str
    title: str
    tier: str
    url: str
    listed: bool  # in sources.json


@dataclass(slots=True)
class QuoteView:
    source_id: str
    text: str
    verdict: str


@dataclass(slots=True)
class ProblemView:
    check: str
    detail: str
    extra: list[tuple[str, str]]
    # quote_not_in_source with a nearest passage: the quote against it, word by word
    # ("same", "quote" only in the quote, "source" only in the passage, "beyond" the end
    # of a passage cut short: not compared)
    diff: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class ClaimView:
    index: int
    id: str
    text: str
    verdict: str
    problems: list[ProblemView]
    hints: list[ProblemView]
    quotes: list[QuoteView]
    sources: list[SourceView]
    passages: list[PassageView]
    votes: list[tuple[str, str]]
    error: str | None
    requests: int
    against: str | None = None  # what support was judged against: "sources", "quotes"

    @property
    def checks(self) -> list[str]:
        return sorted({p.check for p in self.problems})

    @property
    def attention(self) -> bool:
        """Needs a reader's look: not supported, or a deterministic problem."""
        return self.verdict != "supported" or bool(self.problems)

    @property
    def rank(self) -> int:
        """Worst first: unsupported, a failed request, uncertain, then the rest."""
        order = {"unsupported": 0, "error": 1, "uncertain": 2}
        return order.get(self.verdict, 3)

    @property
    def votes_disagree(self) -> bool:
        """A pipeline verifier voted "supported" on a claim the audit finds unsupported."""
        return self.verdict == "unsupported" and any(v == "supported" for _, v in self.votes)

    @property
    def supporting(self) -> list[PassageView]:
        return [g for g in self.passages if g.verdict != "dropped"]

    @property
    def dropped(self) -> list[PassageView]:
        return [g for g in self.passages if g.verdict == "dropped"]


@dataclass(slots=True)
class FindingView:
    index: int
    id: str
    sub_question: str
    file: str
    claims: list[ClaimView]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for claim in self.claims:
            out[claim.verdict] = out.get(claim.verdict, 0) + 1
        return out

    @property
    def attention(self) -> list[ClaimView]:
        """The claims needing a look, the worst first (stable within a rank)."""
        return sorted((c for c in self.claims if c.attention), key=lambda c: c.rank)

    @property
    def settled(self) -> list[ClaimView]:
        return [c for c in self.claims if not c.attention]


@dataclass(slots=True)
class RunView:
    """The run record as the page needs it; every field tolerates its absence."""

    present: bool
    problem: str | None = None
    absent: bool = False  # no run.json at all: not judged yet
    model: str = ""
    models: list[str] = field(default_factory=list)
    started: str = ""
    ended: str = ""
    seconds: float | None = None
    turns: int | None = None
    reasks: int = 0
    stop_reasons: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    outcome: str = ""
    outcome_reason: str = ""
    receipt_note: str = ""
    wrote_judge: bool | None = None
    final_text: str = ""
    format_errors: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    fetch: str = ""
    replayed: bool = False
    audit: dict[str, Any] = field(default_factory=dict)  # run.json's `citations`
    unknown_reasons: dict[str, str] = field(default_factory=dict)

    # The outcome's reason is said once, on the Outcome line; the receipt's note and the
    # run's fallbacks, which repeat it, point to it instead.
    @property
    def receipt_said(self) -> str:
        return _pointing(self.receipt_note, self.outcome_reason)

    @property
    def fallbacks_said(self) -> list[str]:
        return [_pointing(f, self.outcome_reason) for f in self.fallbacks]


@dataclass(slots=True)
class JudgeView:
    valid: bool
    errors: list[str]
    scores: dict[str, int | str]
    unknowns: list[str]
    note: str
    rubric: str


@dataclass(slots=True)
class AuditView:
    present: bool
    problem: str | None
    offline: bool = False
    offline_reason: str = ""
    model: str = ""
    claims: int = 0
    quotes: int = 0
    requests: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    checks: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    # No saved audit (`present` is False, `problem` says why): the page ran the
    # deterministic checks itself (no model, no key), and these counts are theirs.
    here: bool = False

    @property
    def shown(self) -> bool:
        """Whether the page has counts to show: a saved audit's, or its own offline checks'."""
        return self.present or self.here


@dataclass(slots=True)
class JudgeAgreement:
    disagrees: bool
    why: str
    judge: int | str | None
    expected: int | None
    rate: float | None
    basis: str


@dataclass(slots=True)
class SessionPage:
    session_id: str
    dir: Path
    questions: list[str]
    findings: list[FindingView]
    judge: JudgeView
    unknown_reasons: dict[str, str]
    agreement: JudgeAgreement | None
    audit: AuditView
    run: RunView
    session_problems: list[str]
    claims: int
    verdicts: dict[str, int]
    checks: dict[str, int]
    # Which run each artifact came from (judge.json, citations.json, run.json), in words.
    provenance: list[str] = field(default_factory=list)
    # Claims the support model found supported whose citation a deterministic check found
    # wrong (a dangling source, a quote not in its source, no quote): they earn nothing in
    # the support rate (harness.audit.agreement), and the page says so beside the count.
    flawed_supported: dict[str, int] = field(default_factory=dict)

    @property
    def flawed(self) -> int:
        return sum(self.flawed_supported.values())

    @property
    def shared_unknown_reason(self) -> str | None:
        """The one reason every Unknown shares (said once, not under each score), or None."""
        reasons = set(self.unknown_reasons.values())
        return reasons.pop() if len(self.unknown_reasons) > 1 and len(reasons) == 1 else None

    @property
    def reason_in_note(self) -> bool:
        """The shared reason is the judge's note already (the harness's advisory fallback)."""
        reason = self.shared_unknown_reason
        return reason is not None and _words(reason).split(": ", 1)[-1] in _words(self.judge.note)


# -- reading ----------------------------------------------------------------


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _when(value: Any) -> str:
    """An ISO timestamp as `2026-12-01 10:09:25 UTC`; anything else as given."""
    text = _str(value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo else "")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def run_view(record: Any) -> RunView:
    """The one adapter from the run record (`RunRecord`, or its JSON) to the page.

    Reads only what it needs and tolerates any field missing or of another type.
    """
    if hasattr(record, "model_dump"):
        record = record.model_dump(mode="json")
    if not isinstance(record, dict):
        return RunView(present=False, problem="the run record is not a JSON object")
    outcome = _dict(record.get("outcome"))
    receipt = _dict(record.get("receipt"))
    usage_raw = _dict(record.get("usage"))
    usage = {k: v for k, v in usage_raw.items() if _int(v) is not None}
    calls: list[ToolCallRecord] = []
    for raw in record.get("toolCalls") or []:  # run.json's ToolCallRecord
        if not isinstance(raw, dict):
            continue
        calls.append(
            ToolCallRecord(
                name=_str(raw.get("name")) or "?",
                target=_str(raw.get("target")),
                ok=raw.get("ok") is True,
                detail=_str(raw.get("detail")),
            )
        )
    audit = _dict(record.get("citations"))
    kind = _str(outcome.get("kind"))
    fallbacks: list[str] = []
    if kind in ("fallback", "kept-previous", "not-written"):
        fallbacks.append(f"judgment: {kind} — {_str(outcome.get('reason'))}")
    if audit.get("offlineReason"):
        fallbacks.append(f"citation audit offline — {_str(audit['offlineReason'])}")
    if audit.get("failure"):
        fallbacks.append(f"citation audit failed — {_str(audit['failure'])}")
    if audit.get("skipped"):
        fallbacks.append(f"citation audit skipped ({_str(audit['skipped'])})")
    reasks = _int(record.get("reasks")) or 0
    if reasks:
        fallbacks.append(f"the judge was asked {reasks} time(s) to fix judge.json")
    options = _dict(record.get("options"))
    reasons = record.get("unknownReasons")
    seconds = record.get("seconds")
    return RunView(
        present=True,
        model=_str(record.get("model")),
        models=[m for m in record.get("models") or [] if isinstance(m, str)],
        started=_when(record.get("started")),
        ended=_when(record.get("ended")),
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
        turns=_int(record.get("turns")),
        reasks=reasks,
        stop_reasons=[s for s in record.get("stopReasons") or [] if isinstance(s, str)],
        usage=usage,
        tool_calls=calls,
        outcome=kind,
        outcome_reason=_str(outcome.get("reason")),
        receipt_note=_str(receipt.get("note")),
        wrote_judge=outcome.get("wroteJudge")
        if isinstance(outcome.get("wroteJudge"), bool)
        else None,
        final_text=_str(record.get("finalText")),
        format_errors=[e for e in record.get("formatErrors") or [] if isinstance(e, str)],
        fallbacks=fallbacks,
        fetch=_str(options.get("fetch")),
        replayed=bool(record.get("replay")),
        audit=audit,
        unknown_reasons=(
            {k: v for k, v in reasons.items() if isinstance(v, str)}
            if isinstance(reasons, dict)
            else {}
        ),
    )


def run_of(read: Read[RunRecord]) -> RunView:
    """The run record as its one reader gave it (`harness.artifacts.read.read_run`: this
    installation's seal, this session's), or why there is none to show."""
    fix = "run `judge run` on it"
    if read.value is None:
        return RunView(present=False, problem=read.said(fix), absent=read.absent)
    return run_view(read.value)


# -- assembling ---------------------------------------------------------------


def _pointing(text: str, reason: str) -> str:
    """`text` with the outcome's `reason` (when long enough to matter) replaced by a
    pointer to the Outcome line, where it is said."""
    if len(reason) < 40 or reason not in text:
        return text
    return text.replace(reason, "the outcome's reason, above")


def _snapshot_text(session: Session, source_id: str, cache: dict[str, str | None]) -> str | None:
    """The source's plain text as the snapshots module reads it (passage offsets point here)."""
    if source_id not in cache:
        document = session.texts.document(source_id) if session.texts is not None else None
        cache[source_id] = document.plain if document is not None and document.readable else None
    return cache[source_id]


def _passage_view(
    passage: PassageResult,
    snapshot: str | None,
    quotes: Sequence[str] = (),
    folds: dict[str, str] | None = None,
) -> PassageView:
    view = _placed(passage, snapshot)
    spans = [s for q in quotes for s in quote_spans(view.text, q, folds)]
    view.quoted = bool(spans) if quotes else None
    view.pieces = _pieces(view.text, spans) if quotes else [(view.text, True)]
    return view


def _placed(passage: PassageResult, snapshot: str | None) -> PassageView:
    start: int | None = passage.start
    end: int | None = passage.end
    if snapshot is not None and (start is None or end is None or end > len(snapshot)):
        at = snapshot.find(passage.text) if passage.text else -1
        start, end = (at, at + len(passage.text)) if at >= 0 else (None, None)
    if snapshot is None or start is None or end is None or start > end:
        return PassageView(
            passage.sourceId,
            passage.passageId or "",
            "",
            passage.text,
            "",
            passage.verdict or "",
            False,
        )
    lo = max(0, start - CONTEXT_CHARS)
    hi = min(len(snapshot), end + CONTEXT_CHARS)
    return PassageView(
        source_id=passage.sourceId,
        passage_id=passage.passageId or "",
        before=("…" if lo else "") + snapshot[lo:start],
        text=snapshot[start:end],
        after=snapshot[end:hi] + ("…" if hi < len(snapshot) else ""),
        verdict=passage.verdict or "",
        located=True,
    )


DIFF_WORDS = 400  # a longer quote or passage is shown without its word diff
# A quote whose nearest passage shares less of its words (%) gets no word diff: against a
# passage that unlike it, a diff is noise ("no close match in the source" instead).
DIFF_MIN_SIMILARITY = 50.0
# A passage longer than this many words is shown without looking for its quote in it.
SPAN_WORDS = 4000
# A run of words the quote and the passage share, this long (or the whole quote, or the
# whole passage, when shorter), is where the quote is; shorter runs are chance ("of the").
SPAN_RUN = 4


# Folding, as bytes of UTF-8: ASCII upper case to lower, and every ASCII character but a
# letter, a digit or the newline between words dropped (a byte below 128 is always a whole
# character in UTF-8, so no other character is touched).
_ASCII_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
_ASCII_DROPPED = bytes(c for c in range(128) if c != 10 and not chr(c).isalnum())
_ASCII = bytes(range(128))


def _folded_text(text: str) -> str:
    """`text`'s words (split where str.isspace() sees a space) as the quote and the passage
    are compared, case and punctuation aside, one a line: each word casefolded, with what
    is no letter or digit dropped (an empty line for a word of punctuation alone).

    Folded as one string, not word by word: casefold goes character by character, no word
    holds a newline and no character folds into one, so the lines are the words, in order.
    The quote marks and the word diff fold by this one rule."""
    joined = "\n".join(text.split())
    if joined.isascii():
        return joined.encode("ascii").translate(_ASCII_LOWER, _ASCII_DROPPED).decode("ascii")
    folded = joined.casefold()
    # The few other characters it holds: each that is no letter or digit is dropped.
    for char in set(folded.encode().translate(None, _ASCII).decode()):
        if not char.isalnum():
            folded = folded.replace(char, "")
    return folded.encode().translate(None, _ASCII_DROPPED).decode()


def _span(passage: str, words: int, first: int, size: int) -> tuple[int, int]:
    """Where words `first` to `first + size - 1` of `passage` (of `words` words) are: the
    first starts where the rest after the words before it does, and the last ends where the
    words after it, split off from the right, leave the passage."""
    after = words - first - size
    rest = passage.split(None, first)[-1] if first else passage.lstrip()
    head = passage.rsplit(None, after)[0] if after else passage.rstrip()
    return len(passage) - len(rest), len(head)


def _long_blocks(quote: list[str], passage: list[str], least: int) -> list[tuple[int, int]]:
    """(start in `passage`, size) of the blocks difflib's matcher finds, `least` words long
    or longer, in its order.

    Its own recursion (get_matching_blocks: the longest match of a range, then the ranges
    on either side of it), but for a range holding no such block: one shorter than `least`
    on either side, or whose longest match is shorter. What it would find there is shorter
    still, and is dropped: without junk no two blocks touch, so none would have been merged
    into a longer one."""
    matcher = difflib.SequenceMatcher(None, quote, passage, autojunk=False)
    ranges = [(0, len(quote), 0, len(passage))]
    found: list[tuple[int, int, int]] = []
    while ranges:
        alo, ahi, blo, bhi = ranges.pop()
        i, j, size = matcher.find_longest_match(alo, ahi, blo, bhi)
        if size < least:
            continue
        found.append((i, j, size))
        if i - alo >= least and j - blo >= least:
            ranges.append((alo, i, blo, j))
        if ahi - i - size >= least and bhi - j - size >= least:
            ranges.append((i + size, ahi, j + size, bhi))
    return [(j, size) for _, j, size in sorted(found)]


def quote_spans(
    passage: str, quote: str, folds: dict[str, str] | None = None
) -> list[tuple[int, int]]:
    """Where `quote` is in `passage`: the character spans of the runs of words they share,
    case and punctuation aside (a changed word splits a run; a quote running past the
    passage's end matches the part inside it). `folds`: texts already folded, by text (a
    page's, where one passage or quote comes again under other claims); filled in."""
    if not passage.strip() or not quote.strip():
        return []
    if folds is None:
        folds = {}
    have = folds.get(passage)
    if have is None:
        have = folds[passage] = _folded_text(passage)
    want = folds.get(quote)
    if want is None:
        want = folds[quote] = _folded_text(quote)
    words, wanted = have.count("\n") + 1, want.count("\n") + 1
    if words > SPAN_WORDS or wanted > SPAN_WORDS:
        return []
    # Most quotes are in their passage whole. The matcher finds just that for them: its
    # longest match is the whole quote, at its first place in the passage (its rule between
    # matches of one length), and nothing is left on either side of it to match. Found
    # directly, it is a string search, not the matcher's index and recursion. Folded words
    # hold letters and digits only, so a match of the lines, a newline either side, starts
    # and ends on words, and the newlines before it count the words before it.
    lines = "\n" + have + "\n"
    at = lines.find("\n" + want + "\n")
    if at >= 0:
        return [_span(passage, words, lines.count("\n", 0, at), wanted)]
    least = min(SPAN_RUN, wanted, words)
    blocks = _long_blocks(want.split("\n"), have.split("\n"), least)
    return [_span(passage, words, j, size) for j, size in blocks]


def _pieces(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, bool]]:
    """`text` as (piece, marked) runs, the `spans` (merged where they touch) marked."""
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        gap = text[at:start]
        if out and out[-1][1] and not gap.strip():  # two runs with only a space between
            out[-1] = (out[-1][0] + gap + text[start:end], True)
        else:
            if gap:
                out.append((gap, False))
            out.append((text[start:end], True))
        at = end
    if at < len(text) or not out:
        out.append((text[at:], False))
    return out


def word_diff(quote: str, passage: str) -> list[tuple[str, str]]:
    """The quote against the nearest passage, word by word, case and punctuation aside:
    runs of ("same", words), ("quote", words only in the quote), ("source", words only in
    the passage). Empty when either side is longer than DIFF_WORDS words. A passage cut
    short for the report (it ends with "…") is compared only as far as it goes: the
    quote's words past its end are ("beyond", words), not words missing from the source."""
    cut = passage.rstrip().endswith("…")
    a, b = quote.split(), passage.split()
    if cut:
        b = b[:-1]  # the word at the cut may be a part of one ("d…")
    if not a or not b or len(a) > DIFF_WORDS or len(b) > DIFF_WORDS:
        return []
    fa, fb = (_folded_text(" ".join(words)).split("\n") for words in (a, b))
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, fa, fb, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("quote", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(("source", " ".join(b[j1:j2])))
    if cut and out and out[-1][0] == "quote":
        out[-1] = ("beyond", out[-1][1])
    return out


def _problem_view(problem: Any, quotes: list[str] | None = None) -> ProblemView:
    extra: list[tuple[str, str]] = []
    if problem.numbers:
        extra.append(("numbers", ", ".join(problem.numbers)))
    # Below DIFF_MIN_SIMILARITY the nearest passage is a chance likeness: neither it nor a
    # word diff against it is shown, only that there is no close match.
    close = problem.similarity is None or problem.similarity >= DIFF_MIN_SIMILARITY
    if problem.similarity is not None and close:
        extra.append(("nearest passage matches", f"{problem.similarity:g}% of the quote's words"))
    elif problem.similarity is not None:
        extra.append(
            (
                "no close match in the source",
                f"its nearest passage shares {problem.similarity:g}% of its words; a word "
                f"diff is shown from {DIFF_MIN_SIMILARITY:g}%",
            )
        )
    if problem.nearest and close:
        extra.append(("nearest passage", problem.nearest))
    if problem.foundIn:
        extra.append(("found verbatim in", ", ".join(problem.foundIn)))
    if problem.sourceIds:
        extra.append(("sources", ", ".join(problem.sourceIds)))
    diff: list[tuple[str, str]] = []
    if (
        close
        and problem.nearest
        and problem.quote is not None
        and quotes
        and problem.quote < len(quotes)
    ):
        diff = word_diff(quotes[problem.quote], problem.nearest)
    return ProblemView(problem.check, problem.detail, extra, diff)


def _agreement(
    run: RunView, report: CitationReport | None, judge: JudgeView, artifacts: Provenance
) -> JudgeAgreement | None:
    """The judge's citationAccuracy against the audit: only for a judge.json and a
    citations.json of one run (run.json says which run wrote judge.json; citations.json
    carries its run's id under its seal). Artifacts of different runs are never paired."""
    if not artifacts.paired or report is None:
        return None
    data = run.audit.get("agreement")
    if not isinstance(data, dict) and judge.valid:
        score = None if _is_fallback(judge) else judge.scores.get("citationAccuracy")
        data = compare(expectation(report), score).model_dump()
    if not isinstance(data, dict):
        return None
    rate = data.get("rate")
    return JudgeAgreement(
        disagrees=data.get("disagrees") is True,
        why=_str(data.get("why")),
        judge=data.get("judge") if isinstance(data.get("judge"), int | str) else None,
        expected=_int(data.get("expected")),
        rate=float(rate) if isinstance(rate, int | float) else None,
        basis=_str(data.get("basis")),
    )


def _words(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".")


def _citation_flaw(claim: ClaimView) -> str | None:
    """The first serious check of a claim found supported, by the rule the support rate
    uses (harness.audit.agreement: judged against its sources, a missing quote is no flaw)."""
    if claim.verdict != "supported":
        return None
    for problem in claim.problems:
        if problem.check in SERIOUS and not (
            claim.against == "sources" and problem.check == "no_quote"
        ):
            return problem.check
    return None


def _is_fallback(judge: JudgeView) -> bool:
    return judge.note.startswith(FALLBACK_PREFIX)


def _unknown_reasons(judge: JudgeView, run: RunView, session: Session) -> dict[str, str]:
    """Why each Unknown: the run's own words when it has them, else what the inputs show."""
    reasons: dict[str, str] = {}
    for dim in judge.unknowns:
        if dim in run.unknown_reasons:
            reasons[dim] = run.unknown_reasons[dim]
        elif run.outcome in ("fallback", "not-written"):
            reasons[dim] = f"advisory fallback by the harness: {run.outcome_reason}"
        elif _is_fallback(judge):
            reasons[dim] = "advisory fallback by the harness; its note says why"
        elif not any(f.claims for f in session.findings):
            reasons[dim] = "the session has no findings to score"
        elif dim == "toolEfficiency" and session.trace is None:
            reasons[dim] = "the session has no trace.jsonl, so tool use cannot be judged"
        elif dim == "sourceQuality" and session.sources is None:
            reasons[dim] = "the session has no usable sources.json (no titles or tiers)"
        else:
            reasons[dim] = "the judge gave no reason of its own; see its note"
    return reasons


HERE_REASON = (
    "no audit is saved, so this page ran the deterministic checks itself (no model, no key); "
    "each claim's support is not audited. `judge run` audits with a model and saves the audit"
)


def offline_checks(session: Session) -> CitationReport | None:
    """The deterministic checks of `session` (as `judge cite --offline`), for a page with no
    saved audit: a view never shows a count it did not compute. None if they cannot run."""
    from harness.audit.core import audit_session

    try:
        return audit_session(session, offline=True, offline_reason=HERE_REASON)
    except Exception:  # a page is written whatever the session holds
        return None


NOT_OURS_JUDGE = (
    "judge.json is valid, but no run of this installation wrote it (it came with the session, "
    "or was replaced since): not counted as a judgment; run `judge run` on the session"
)


def load_page(folder: Path) -> SessionPage:
    """Everything a session's page shows. Never raises on what the session holds."""
    session = load_session(folder)
    check = check_session_judge(folder)
    artifacts = provenance(session.dir, check)
    judgment = check.judgment
    if judgment is not None and artifacts.judge_run is None:
        # Valid, but no sealed record of this installation says a run of it wrote these
        # bytes: it came with the session, or was replaced since. Shown as not judged, and
        # never counted in a figure (issue 31 §1).
        judge = JudgeView(False, [NOT_OURS_JUDGE], {}, [], "", "")
        judgment = None
    elif judgment is not None:
        judge = JudgeView(
            valid=True,
            errors=[],
            scores=dict(judgment.scores.model_dump()),
            unknowns=list(judgment.unknowns),
            note=judgment.note,
            rubric=judgment.rubricVersion,
        )
    else:
        judge = JudgeView(False, check.error_lines(), {}, [], "", "")
    saved = artifacts.citations.value
    report = saved.report if saved is not None else None
    audit_problem = artifacts.citations.said(
        "run `judge run` on the session to audit its citations (`judge cite` only prints)"
    )
    here = report is None
    if here:
        report = offline_checks(session)
    run = run_of(artifacts.run)

    by_place: dict[tuple[str, str], ClaimResult] = {}
    by_id: dict[str, ClaimResult] = {}
    if report is not None:
        for audited in report.claims:
            by_place[(audited.file, audited.pointer)] = audited
            by_id.setdefault(audited.claimId, audited)
    sources = {s.id: s for s in session.sources or []}
    urls = session.source_urls()
    snapshots: dict[str, str | None] = {}
    folds: dict[str, str] = {}  # the texts quote_spans folded, for this page only
    findings: list[FindingView] = []
    index = 0
    verdicts: dict[str, int] = {}
    checks: dict[str, int] = {}
    flawed: dict[str, int] = {}
    for f_index, (finding, rel) in enumerate(
        zip(session.findings, session.finding_paths, strict=True)
    ):
        claims: list[ClaimView] = []
        for claim in finding.claims:
            place = (rel, session.claim_pointer(claim))
            result: ClaimResult | None = by_place.get(place) or by_id.get(claim.id)
            # Checks run by the page judge no support: every claim's is "not audited",
            # whatever problems the checks found (they are shown as problems).
            verdict = result.verdict if result and not here else "not audited"
            quote_verdicts = {q.index: q.verdict for q in result.quotes} if result else {}
            cited = list(dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)]))
            views = [
                SourceView(
                    id=sid,
                    title=(sources[sid].title or "") if sid in sources else "",
                    tier=(sources[sid].tier or "") if sid in sources else "",
                    url=urls.get(sid, ""),
                    listed=sid in sources,
                )
                for sid in cited
            ]
            texts = [q.text for q in claim.quotes]
            problems = [_problem_view(p, texts) for p in result.problems] if result else []
            hints = [_problem_view(p) for p in result.hints] if result else []
            claims.append(
                ClaimView(
                    index=index,
                    id=claim.id,
                    text=claim.text,
                    verdict=verdict,
                    problems=problems,
                    hints=hints,
                    quotes=[
                        QuoteView(q.sourceId, q.text, quote_verdicts.get(i, ""))
                        for i, q in enumerate(claim.quotes)
                    ],
                    sources=views,
                    passages=[
                        _passage_view(
                            p,
                            _snapshot_text(session, p.sourceId, snapshots),
                            [q.text for q in claim.quotes if q.sourceId == p.sourceId],
                            folds,
                        )
                        for p in (by_place[place].passages if place in by_place else [])
                    ],
                    votes=[
                        (v.verifier or "?", v.verdict)
                        for v in (claim.verification.votes if claim.verification else [])
                    ],
                    error=f"{result.error.kind}: {result.error.message}"
                    if result and result.error
                    else None,
                    requests=result.requests if result else 0,
                    against=result.against if result else None,
                )
            )
            index += 1
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
            flaw = _citation_flaw(claims[-1])
            if flaw is not None:
                flawed[flaw] = flawed.get(flaw, 0) + 1
            for name in {p.check for p in problems}:
                checks[name] = checks.get(name, 0) + 1
        findings.append(FindingView(f_index, finding.id, finding.subQuestion, rel, claims))

    questions = list(
        dict.fromkeys(
            q
            for f in session.findings
            if isinstance(q := (f.model_extra or {}).get("question"), str)
        )
    )
    if report is not None:
        audit = AuditView(
            present=not here,
            problem=audit_problem if here else None,
            offline=report.offline,
            offline_reason=(HERE_REASON if here else report.offlineReason or ""),
            here=here,
            model=", ".join(report.models) or (report.model or ""),
            claims=report.totals.claims,
            quotes=report.totals.quotes,
            requests=report.totals.requests,
            # the page's own checks judged no support: no verdict count to show
            verdicts={} if here else report.totals.verdicts.model_dump(),
            checks=report.totals.checks.model_dump(),
            usage=report.usage.model_dump(),
        )
    else:
        audit = AuditView(present=False, problem=audit_problem)
    return SessionPage(
        session_id=session.session_id,
        dir=session.dir,
        questions=questions,
        findings=findings,
        judge=judge,
        unknown_reasons=_unknown_reasons(judge, run, session),
        # Only a saved audit of the judgment's own run is compared with it.
        agreement=None if here else _agreement(run, report, judge, artifacts),
        audit=audit,
        run=run,
        session_problems=[p.line() for p in session.problems],
        claims=index,
        verdicts=verdicts,
        checks=checks,
        flawed_supported=flawed,
        provenance=provenance_lines(artifacts, check.valid, saved is not None)
        + (["deterministic checks: run by this page (no audit saved)"] if here and report else []),
    )


def provenance_lines(artifacts: Provenance, judged: bool, audited: bool) -> list[str]:
    """Which run each artifact in place came from, in words, for the page."""

    def run(run_id: str | None) -> str:
        if run_id is None:
            return "no run record of this installation says which run wrote it"
        ended = artifacts.ended(run_id)
        return f"run {run_id}" + (f" (ended {_when(ended)})" if ended else "")

    lines: list[str] = []
    if judged:
        lines.append(f"judge.json: {run(artifacts.judge_run)}")
    if audited:
        lines.append(f"citations.json: {run(artifacts.citations_run)}")
    if artifacts.run_id is not None:
        lines.append(f"run.json: run {artifacts.run_id}")
    if judged and audited and not artifacts.paired:
        lines.append(
            "judge.json and citations.json are not known to come from one run: the judgment "
            "is not compared with the audit"
        )
    return lines
