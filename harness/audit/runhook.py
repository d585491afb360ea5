"""The audit inside `judge run`: choose a client, never block the run, tell the judge.

Which client: a `cite_client` the caller passed; else `--cite-replay`; else offline when
the judge itself is replayed (`--replay` without `--cite-replay`) or was supplied by the
caller; else Claude (`cite_model`). A client that cannot be built (no API key), an audit
that fails, or an API unavailable for every claim leaves the run going with the offline
checks, and the record says why. A `ReplayError` stays loud, like the judge's replay.

The report is saved as `.judge/citations.json`; `record` becomes run.json's `citations`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from harness.audit.agreement import compare, expectation
from harness.audit.core import LiveFetch, audit_session, fault_text, source_texts
from harness.audit.fetched import FetchedTexts, ignored_note
from harness.audit.options import AuditOptions
from harness.audit.record import Agreement, ApiFault, AuditRecord, Channels
from harness.audit.report import Against, CitationReport, judged_against
from harness.audit.text import judge_summary
from harness.cite import CiteClient, CitePool
from harness.errors import ConfigError, InvalidRequest, JudgeError, ReplayError
from harness.events import OnEvent, ShouldStop
from harness.fs.artifacts import ArtifactDir
from harness.fs.names import ARTIFACT_DIR, CITATIONS_FILE
from harness.fs.origin import sealed_artifact
from harness.model.resolve import resolve_run_cite
from harness.redact import redact_data
from harness.session.loader import Session


class MakesAuditOptions(Protocol):
    """A run's options (harness.run.options.RunOptions): they build the audit's own."""

    def audit_options(self) -> AuditOptions: ...


GivenOptions = AuditOptions | MakesAuditOptions


def options_of(opts: GivenOptions) -> AuditOptions:
    """The audit's own options, given them or the run's."""
    return opts if isinstance(opts, AuditOptions) else opts.audit_options()


@dataclass(frozen=True, slots=True)
class RunAudit:
    report: CitationReport | None
    record: AuditRecord
    summary: str | None

    def judged(self, score: int | str | None) -> AuditRecord:
        """The record with whether the judge's citationAccuracy (None: no model judgment)
        agrees with the audit."""
        agreement: Agreement = compare(self.record.expected, score)
        return self.record.model_copy(update={"agreement": agreement})

    @property
    def ignored(self) -> str | None:
        """For the receipt: cached source texts the audit treated as absent (not ours)."""
        texts = self.report.sourceTexts if self.report is not None else None
        return ignored_note(texts.refused) if texts is not None else None


def _all_unavailable(report: CitationReport) -> str | None:
    asked = [c for c in report.claims if c.requests or c.error is not None]
    errors = [c.error for c in asked if c.error is not None]
    if asked and len(errors) == len(asked) and all(e.kind == "unavailable" for e in errors):
        return f"the model API was unavailable for every claim ({errors[-1].message})"
    return None


@runtime_checkable
class Channelled(Protocol):
    """A cite client that knows the channel of each request it answered (the
    `judge batch --batch-api` session client): run.json's `citations.channels`."""

    def channel_use(self) -> Channels | None: ...


@dataclass(frozen=True, slots=True)
class AuditArguments:
    """Everything of a run's options that shapes its audit's requests: `audit_session`'s
    keyword arguments but the client and the pool, progress and stop hooks."""

    model: str
    concurrency: int
    max_seconds: float
    against: Against
    passage_chars: int
    source_text: FetchedTexts | None

    def arguments(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "concurrency": self.concurrency,
            "max_seconds": self.max_seconds,
            "against": self.against,
            "passage_chars": self.passage_chars,
            "source_text": self.source_text,
        }


def audit_arguments(
    session: Session, artifacts: Path, given: GivenOptions, live_fetch: LiveFetch | None = None
) -> AuditArguments:
    """The one place a run's audit options are assembled: `judge run`'s audit and the
    `judge batch --batch-api` planner (harness.batch.batchapi) both call the engine with
    these, so the planner asks exactly the requests the session's run will ask.
    `live_fetch` is used only with `--audit-fetch live`, the audit's own by default
    (harness.audit.live); `artifacts` is the session's `.judge/` (the fetched-text cache)."""
    opts = options_of(given)
    fetcher = live_fetch if opts.audit_fetch == "live" else None
    texts = source_texts(session, artifacts, opts.audit_fetch, opts.audit_max_fetches, fetcher)
    return AuditArguments(
        model=opts.cite_model,
        concurrency=opts.cite_concurrency,
        max_seconds=opts.max_seconds,
        against=opts.cite_against,
        passage_chars=opts.cite_passage_chars,
        source_text=texts,
    )


def audit_for_run(
    session: Session,
    artifacts: ArtifactDir,
    given: GivenOptions,
    *,
    cite_client: CiteClient | None = None,
    judge_client_given: bool = False,
    pool: CitePool | None = None,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    session_digest: str | None = None,
    live_fetch: LiveFetch | None = None,
    run_id: str | None = None,
) -> RunAudit:
    """The audit of `judge run`. `--audit-fetch live` fetches cited sources without a
    snapshot (cached in `.judge/`) through the audit's own guarded fetch
    (harness.audit.live), or `live_fetch(urls, max_uses)` when one is given (optional:
    kept while the run still hands its own in)."""
    started = time.monotonic()
    opts = options_of(given)
    options = audit_arguments(session, artifacts.path, opts, live_fetch)
    failure: str | None = None
    fault: ApiFault | None = None
    handle, offline_reason = resolve_run_cite(
        cite_client,
        model=opts.cite_model,
        judge_given=judge_client_given,
        cite_replay=opts.cite_replay,
        judge_replay=opts.replay,
        record=opts.record,
        replay_any=opts.replay_any,
        session_digest=session_digest,
        timeout=opts.timeout,
        max_retries=opts.max_retries,
        max_seconds=opts.max_seconds,
    )
    client: CiteClient | None = handle.client if handle is not None else None

    report: CitationReport | None = None
    if client is not None:
        try:
            report = audit_session(
                session,
                client=client,
                pool=pool,
                progress=progress,
                stop=stop,
                **options.arguments(),
            )
        except (ReplayError, ConfigError):
            raise  # a dry replay and a refused key are loud, never an offline audit
        except InvalidRequest as exc:  # our request or the options, not an outage
            failure, fault = exc.message, "invalid-request"
        except JudgeError as exc:
            failure = exc.message
        except Exception as exc:  # the audit is advisory: no fault of it may stop the judge
            failure = fault_text(exc)
        finally:
            if handle is not None:
                handle.finish()
        if report is not None:
            failure = _all_unavailable(report)
            report = None if failure else report
            fault = "unavailable" if failure else None
        if failure:
            offline_reason = f"the audit failed ({failure})"
    if report is None:
        try:
            report = audit_session(
                session,
                offline=True,
                offline_reason=f"{offline_reason}; deterministic checks only",
                concurrency=opts.cite_concurrency,
                against=opts.cite_against,  # the mode asked, recorded though not applied
            )
        except Exception as exc:
            failure = f"the offline checks failed: {fault_text(exc)}"
    channels = client.channel_use() if isinstance(client, Channelled) else None
    return _finish(report, artifacts, failure, time.monotonic() - started, run_id, channels, fault)


def _finish(
    report: CitationReport | None,
    artifacts: ArtifactDir,
    failure: str | None,
    seconds: float,
    run_id: str | None = None,
    channels: Channels | None = None,
    fault: ApiFault | None = None,
) -> RunAudit:
    if report is None:
        record = AuditRecord(
            failure=failure, apiFault=fault, seconds=round(seconds, 3), channels=channels
        )
        return RunAudit(None, record, None)
    path: str | None = f"{ARTIFACT_DIR}/{CITATIONS_FILE}"
    write_error: str | None = None
    try:
        # Through the one choke point: an API error quoting the key, a claim holding a lone
        # surrogate or U+2028 all end up here; sealed with this installation's key and the
        # run's id and the session's folder, so that no reader takes a planted report, pairs
        # it with another run or shows it as another session's.
        saved = report.model_copy(
            update={"runId": run_id, "sessionDir": str(artifacts.session)}
        ).to_dict()
        artifacts.write(CITATIONS_FILE, sealed_artifact("citations", saved))
    except OSError as exc:
        write_error = f"{CITATIONS_FILE} could not be written: {exc.strerror or exc}"
        path = None
    totals = report.totals
    record = AuditRecord(
        path=path,
        failure=failure,
        apiFault=fault,
        writeError=write_error,
        seconds=round(seconds, 3),
        offline=report.offline,
        offlineReason=report.offlineReason,
        model=report.model,
        models=report.models,
        concurrency=report.concurrency,
        against=report.against,
        judgedAgainst=judged_against(report.claims),
        claims=totals.claims,
        quotes=totals.quotes,
        requests=totals.requests,
        verdicts=totals.verdicts,
        checks=totals.checks,
        usage=report.usage,
        replyProblems=report.replyProblems,
        expected=expectation(report),
        channels=channels,
    )
    # run.json and the judge's first message get the record and summary: redacted here too
    # (their writers redact again; the summary reaches the model through `outbound`).
    return RunAudit(report, redact_data(record), judge_summary(report, path))
