"""`audit_session`: the deterministic checks on every claim, then support judged by a model.

Claims are judged concurrently across the whole session on one `CitePool`, so requests
in flight never exceed `concurrency` however many claims there are. A session of N claims
costs, for claim i with q_i > 0 quotes, ceil(q_i / window) round-1 requests plus one
round-2 request if any quote matched: at most 2 per claim when no claim has more than
`window` (10) quotes, none for a claim without quotes (and none offline).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from harness import clock, config
from harness.audit.checks import Checker
from harness.audit.fetched import DEFAULT_MAX_FETCHES, FetchedTexts, FetchMode
from harness.audit.grounded import (
    DEFAULT_PASSAGE_CHARS,
    LATE,
    LATE_KIND,
    PASSAGE_CHARS_MIN,
    CitedDocument,
    Judged,
    TextOf,
    choose,
    cited,
    grouped,
    read,
)
from harness.audit.report import (
    Against,
    Checked,
    CitationReport,
    ClaimError,
    ClaimResult,
    ClaimVerdict,
    Overlap,
    PassageResult,
    Problem,
    QuoteResult,
    SourceTexts,
    totals,
)
from harness.audit.support import (
    SUPPORTS,
    claim_source,
    needs_model,
    passage_ids,
    passage_prefixes,
    read_report,
)
from harness.cite import (
    CiteClient,
    CiteOptions,
    CitePool,
    CiteSource,
    Concerns,
    Pending,
    Report,
    Usage,
)
from harness.clock import AUDIT_SHARE, Deadline
from harness.errors import (
    ConfigError,
    JudgeError,
    UsageError,
)
from harness.events import OnEvent, ShouldStop, emit
from harness.fs.names import ARTIFACT_DIR
from harness.model.resolve import DEFAULT_CITE_MODEL, Guard, audit_client, resolve_cite
from harness.session.loader import Session, load_session
from harness.session.models import Claim

DEFAULT_CONCURRENCY = int(config.CITE_CONCURRENCY.default)


class AuditError(JudgeError):
    """The citation audit could not produce a report (a client fault other than a replay's)."""

    code = "audit"


@dataclass(slots=True)
class _Entry:
    finding_id: str
    file: str
    pointer: str
    claim: Claim
    premise: str  # the sub-question of the claim's finding: numbers it states are its own
    passages: list[str]  # the engine's id for each quote
    judged: bool  # asks the model (has a non-blank quote)
    problems: list[Problem]
    hints: list[Problem]


def _entries(session: Session) -> list[_Entry]:
    found = [
        (finding, rel, claim)
        for finding, rel in zip(session.findings, session.finding_paths, strict=True)
        for claim in finding.claims
    ]
    prefixes = passage_prefixes(claim.id for _, _, claim in found)
    return [
        _Entry(
            finding.id,
            rel,
            session.claim_pointer(claim),
            claim,
            finding.subQuestion,
            passage_ids(prefix, claim),
            needs_model(claim),
            [],
            [],
        )
        for (finding, rel, claim), prefix in zip(found, prefixes, strict=True)
    ]


def _result(
    entry: _Entry,
    verdict: ClaimVerdict,
    quotes: list[QuoteResult],
    requests: int = 0,
    error: ClaimError | None = None,
    *,
    against: Checked | None = None,
    passages: list[PassageResult] | None = None,
    together: float | None = None,
    overlap: Overlap | None = None,
    confidence: float | None = None,
) -> ClaimResult:
    return ClaimResult(
        claimId=entry.claim.id,
        findingId=entry.finding_id,
        file=entry.file,
        pointer=entry.pointer,
        verdict=verdict,
        problems=entry.problems,
        hints=entry.hints,
        quotes=quotes,
        requests=requests,
        error=error,
        against=against,
        passages=passages or [],
        together=together,
        confidence=confidence,
        quoteOverlap=overlap,
    )


def _unjudged(entry: _Entry, verdict: ClaimVerdict, against: Checked | None = None) -> ClaimResult:
    quotes = [
        QuoteResult(index=i, sourceId=q.sourceId, passage=pid, verdict="unchecked")
        for i, (pid, q) in enumerate(zip(entry.passages, entry.claim.quotes, strict=True))
    ]
    return _result(entry, verdict, quotes, against=against)


def audit_session(
    session: Session,
    *,
    offline: bool = False,
    client: CiteClient | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    model: str | None = None,
    offline_reason: str | None = None,
    options: Mapping[str, Any] | None = None,
    max_seconds: float | None = None,
    pool: CitePool | None = None,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    against: Against = "auto",
    passage_chars: int = DEFAULT_PASSAGE_CHARS,
    source_text: TextOf | None = None,
) -> CitationReport:
    """Check every claim of `session`; unless `offline`, judge each claim's support.

    `client` answers the engine's requests (`AnthropicCiteClient`, `ReplayCiteClient`,
    `ScriptedClient`...); `options` are the engine's other options (`window`, `threshold`,
    `low`, `high`). `against` says what support is judged against (`harness.audit.grounded`):
    `sources`, the cited sources' text (each claim its own passages of each source it
    cites, at most `passage_chars` characters of them; the source sends their union);
    `quotes`, the claim's quotes; `auto`, sources where they have text, else quotes.
    `source_text` gives a source's text when it has no stored snapshot (a fetched copy).
    In quotes mode a claim with no quote is `unsupported` without a request; offline every
    other claim is `unchecked`. Raises `ReplayError` from a replay that cannot answer, and
    `AuditError` when the client fails in a way the engine does not absorb (e.g. a refused
    API key); unavailable or oversized requests end as that claim's `error`.
    `progress` is told of each answered request and judged claim, and once `stop` gives a
    reason no further request is sent (harness.events).
    """
    run = CiteOptions(**{**dict(options or {}), "concurrency": concurrency})
    if not offline and client is None:
        raise UsageError("the citation audit needs a client unless it runs offline")
    if passage_chars < PASSAGE_CHARS_MIN:
        raise UsageError(
            f"--passage-chars must be at least {PASSAGE_CHARS_MIN} (one passage), "
            f"not {passage_chars}"
        )
    entries = _entries(session)
    claims = [e.claim for e in entries]
    results: list[ClaimResult | None] = [None] * len(entries)
    usage, requests = Usage(), 0
    models: dict[str, None] = {}
    # The audit's deadline: its own `max_seconds` from now, or its thread's (a run sets
    # the audit's share of its time: harness.clock), the earlier. Requests end by
    # it (`Guard`), and so does the ranking of each document's passages.
    deadline = _deadline(max_seconds)
    with ExitStack() as stack:
        # The checks stop at the run's deadline (the loader's), else at the audit's own.
        loaded = session.texts.deadline if session.texts is not None else None
        checker = stack.enter_context(
            Checker(session, deadline=loaded if loaded is not None and loaded.at else deadline)
        )
        text_of = _text_of(checker, source_text)
        modes: list[str | None] = [None] * len(entries)
        if not offline:
            modes = [choose(against, any(text_of(sid) for sid in cited(e.claim))) for e in entries]
        quoted = [i for i, e in enumerate(entries) if modes[i] == "quotes" and e.judged]
        ground = [i for i in range(len(entries)) if modes[i] == "sources"]
        docs = grouped(claims, ground, text_of) if ground else []
        pending: Pending | None = None
        guard: Guard | None = None
        if quoted or docs:
            assert client is not None
            guard = audit_client(client, progress, stop, deadline)

            def items() -> Iterator[tuple[CiteSource, Concerns]]:
                for i in quoted:
                    yield claim_source(entries[i].passages, entries[i].claim), SUPPORTS
                for doc in docs:
                    # Split and ranked only now: the requests of those before are in flight.
                    # One not ranked by the deadline is not asked (its claims: `time_limit`).
                    doc.prepare(claims, passage_chars, deadline)
                    if doc.late is None:
                        yield doc.source(), doc.concerns(claims)
                    else:
                        done.one()

            on = pool if pool is not None else stack.enter_context(CitePool(run.concurrency))
            # Progress counts the engine's judgments: one per quoted claim, and one per
            # cited source with every claim citing it (sources mode).
            judgments = len(quoted) + len(docs)  # one not ranked in time: done, unasked
            emit(
                progress,
                {
                    "event": "audit-start",
                    "claims": len(quoted) + len(ground),
                    "judgments": judgments,
                    "seconds": deadline.left() if deadline is not None else None,
                },
            )
            done = _Counter(progress, judgments)
            # Each judgment's first requests go out as soon as it is made; the checks then
            # fill the wait for the first replies, on this thread, with no other to share.
            pending = _fault_as_audit_error(lambda: on.stream(items(), guard, run, done.one))
            # Should a check fail, no request outlives us; should the process be stopped
            # (SIGINT/SIGTERM, not an Exception), a request in flight is not waited for.
            stack.push(
                lambda kind, exc, tb, job=pending: job.cancel(
                    wait=exc is None or isinstance(exc, Exception)
                )
            )
        for entry in entries:
            entry.problems, entry.hints = checker.review(entry.claim, entry.premise)
        for doc in docs:
            doc.locate_quotes(claims)
        for i, entry in enumerate(entries):
            if offline:
                results[i] = _unjudged(entry, "unchecked" if entry.judged else "unsupported")
            elif modes[i] is None:
                results[i] = _unjudged(entry, "unchecked")
            elif modes[i] == "quotes" and not entry.judged:
                results[i] = _unjudged(entry, "unsupported", "quotes")
        if pending is not None:
            # Each report is read as soon as its judgment is done, while later ones are
            # still asked, and dropped once its claims are: thousands held at once would be
            # most of the collector's work.
            usage, requests = _fault_as_audit_error(
                lambda: _read_reports(pending.as_ready(), entries, quoted, docs, results, models)
            )

    finished = [r for r in results if r is not None]
    return CitationReport(
        sessionId=session.session_id,
        against=against,
        offline=offline,
        offlineReason=(offline_reason or "run offline: deterministic checks only")
        if offline
        else None,
        model=None if offline else model,
        concurrency=run.concurrency,
        claims=finished,
        totals=totals(finished, requests),
        usage=usage,
        models=list(models),
        sourceTexts=SourceTexts.model_validate(source_text.summary())
        if isinstance(source_text, FetchedTexts)
        else None,
        replyProblems=(guard.said() or None) if guard is not None else None,
        cuts=[*(note for doc in docs for note in doc.notes), *_late(docs), *checker.cuts()] or None,
    )


def _deadline(max_seconds: float | None) -> Deadline | None:
    """The audit's deadline: `max_seconds` from now, or its thread's, the earlier."""
    sooner = Deadline.after(max_seconds).sooner(clock.current())
    return None if sooner.at is None else Deadline(sooner.at, AUDIT_SHARE)


def _late(docs: list[CitedDocument]) -> list[str]:
    """The documents the deadline left unjudged, in one sentence (none when none was)."""
    late = [doc for doc in docs if doc.late is not None]
    if not late:
        return []
    claims = {i for doc in late for i in doc.claims}
    shown = ", ".join(doc.source_id for doc in late[:5])
    more = f" and {len(late) - 5:,} more" if len(late) > 5 else ""
    stopped = next((doc.source_id for doc in late if doc.ranking), None)
    when = f"while ranking {stopped}'s passages" if stopped else "before ranking"
    return [
        f"{LATE} {when}: {len(late):,} cited source(s) ({shown}{more}) were not judged, "
        f"and the {len(claims):,} claim(s) citing them not against them (error {LATE_KIND})"
    ]


def _read_reports(
    reports: Iterator[Report],
    entries: list[_Entry],
    quoted: list[int],
    docs: list[CitedDocument],
    results: list[ClaimResult | None],
    models: dict[str, None],
) -> tuple[Usage, int]:
    """Each claim's result from the engine's reports (quoted claims', then each document's,
    in that order), into `results`; the usage and requests they add up to. A claim judged
    against sources is read once the last of its documents has reported (each cites one at
    least: `choose` and `grouped` read the same texts)."""
    usage, requests = Usage(), 0
    for i in quoted:
        report = next(reports)
        entry = entries[i]
        sources = [q.sourceId for q in entry.claim.quotes]
        verdict, quotes, error, confidence = read_report(report, entry.passages, sources)
        results[i] = _result(
            entry, verdict, quotes, report.requests, error, against="quotes", confidence=confidence
        )
        usage += report.usage
        models.update(dict.fromkeys(report.models))
        requests += report.requests
    judged: dict[int, list[Judged]] = {}
    left: dict[int, int] = {}
    for doc in docs:
        for i in doc.claims:
            left[i] = left.get(i, 0) + 1
    for doc in docs:
        said = None if doc.late is not None else next(reports)  # late: never asked
        for i, name in zip(doc.claims, doc.names, strict=True):
            judged.setdefault(i, []).append((doc, name, said))
            left[i] -= 1
            if left[i] == 0:
                results[i] = _grounded(entries[i], judged.pop(i))
        if said is not None:
            usage += said.usage
            models.update(dict.fromkeys(said.models))
            requests += said.requests
    return usage, requests


def _grounded(entry: _Entry, judged: list[Judged]) -> ClaimResult:
    """A claim's result from its findings over every document it cites."""
    g = read(entry.claim, judged)
    if g.problem is not None:
        entry.problems = [*entry.problems, g.problem]
    return _result(
        entry,
        g.verdict,
        _unjudged(entry, g.verdict).quotes,
        g.requests,
        g.error,
        against="sources",
        passages=g.passages,
        together=g.together,
        overlap=g.overlap,
        confidence=g.confidence,
    )


def _text_of(checker: Checker, fallback: TextOf | None) -> TextOf:
    """A source's plain text: its stored snapshot's, else what `fallback` has (fetched)."""
    cache: dict[str, str | None] = {}

    def text_of(source_id: str) -> str | None:
        if source_id not in cache:
            snapshot = checker.snapshots.get(source_id)
            plain = snapshot.plain if snapshot is not None else None
            if (plain is None or not plain.strip()) and fallback is not None:
                plain = fallback(source_id)
            cache[source_id] = plain if plain is not None and plain.strip() else None
        return cache[source_id]

    return text_of


LiveFetch = Callable[[dict[str, str], int], Callable[[str], str]]
"""Builds a live fetcher over the session's source URLs, allowed `max_uses` fetches."""


def source_texts(
    session: Session,
    artifacts: Path,
    mode: FetchMode,
    max_fetches: int,
    live_fetch: LiveFetch | None = None,
) -> FetchedTexts | None:
    """The fetched-text cache for a session (None: `off`, or nothing could be cached).
    `live`: sources are fetched through `live_fetch`, by default the audit's own
    (harness.audit.live: WebFetch's guard, bounded by the deadline in force)."""
    if mode == "off":
        return None
    if mode == "live" and live_fetch is None:
        from harness.audit import live

        live_fetch = live.live_fetch  # looked up now: a test puts its own in its place
    urls = session.source_urls()
    fetch = live_fetch(urls, max_fetches) if mode == "live" and live_fetch is not None else None
    return FetchedTexts(artifacts, urls, mode, fetch=fetch, max_fetches=max_fetches)


T = TypeVar("T")


class _Counter:
    """Counts finished judgments for `progress` (called from pool threads)."""

    def __init__(self, progress: OnEvent | None, total: int) -> None:
        self._progress, self._total, self._done = progress, total, 0
        self._lock = threading.Lock()

    def one(self) -> None:
        if self._progress is None:
            return
        with self._lock:  # emitted under the lock: the display sees 1, 2, … in order
            self._done += 1
            emit(self._progress, {"event": "audit-claim", "done": self._done, "total": self._total})


def _fault_as_audit_error(step: Callable[[], T]) -> T:
    """Run a step of the engine; a client fault it raises becomes an `AuditError`."""
    try:
        return step()
    except JudgeError:
        raise  # ReplayError and the like keep their own message and exit code
    except Exception as exc:
        raise AuditError(f"the citation audit failed: {fault_text(exc)}") from exc


def fault_text(exc: BaseException) -> str:
    """An unexpected exception in one line for a report: its type and the start of its text."""
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def audit_folder(
    folder: Path,
    *,
    offline: bool = False,
    model: str = DEFAULT_CITE_MODEL,
    concurrency: int = DEFAULT_CONCURRENCY,
    replay: Path | None = None,
    record: Path | None = None,
    timeout: float = float(config.TIMEOUT.default),
    max_retries: int = int(config.MAX_RETRIES.default),
    progress: OnEvent | None = None,
    against: Against = "auto",
    passage_chars: int = DEFAULT_PASSAGE_CHARS,
    fetch: FetchMode = "stored",
    max_fetches: int = DEFAULT_MAX_FETCHES,
    live_fetch: LiveFetch | None = None,
) -> CitationReport:
    """`judge cite`: load the session folder and audit it with a replay, Claude, or offline.

    `progress` is told of each answered request and judged claim (harness.events).
    `fetch`: `stored` also reads the texts cached in `.judge/sources/`; `live` fetches a
    cited source with no text (through `live_fetch(urls, max_uses)`, by default the
    audit's own guarded fetch, harness.audit.live) and caches it; `off` reads neither."""
    if offline and (replay is not None or record is not None):
        raise UsageError("--offline asks no model: drop --replay/--record, or drop --offline")
    CiteOptions(concurrency=concurrency)  # a bad value fails before anything is read
    session = load_session(folder)
    if offline:
        reason = "--offline: deterministic checks only"
        return audit_session(
            session, offline=True, offline_reason=reason, concurrency=concurrency, against=against
        )
    try:
        handle = resolve_cite(
            model=model, replay=replay, record=record, timeout=timeout, max_retries=max_retries
        )
    except ConfigError as exc:
        raise ConfigError(f"{exc.message}; or --offline for the deterministic checks only") from exc
    texts = source_texts(session, session.dir / ARTIFACT_DIR, fetch, max_fetches, live_fetch)
    try:
        return audit_session(
            session,
            client=handle.client,
            model=model,
            concurrency=concurrency,
            progress=progress,
            against=against,
            passage_chars=passage_chars,
            source_text=texts,
        )
    finally:
        handle.finish()
