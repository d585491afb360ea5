"""Settling the artifacts as the run ends: one run's judge.json and citations.json stay
together, and what is in place is named (which run wrote each, the up-to-date stamp)."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from harness.artifacts.record import (
    ArtifactRef,
    ArtifactSet,
    RunChannels,
    RunRecord,
    UpToDateStamp,
)
from harness.audit.record import AuditRecord, Channels
from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.fs.digest import digest_cache
from harness.fs.names import ARTIFACT_DIR, CITATIONS_FILE, PREVIOUS_CITATIONS_FILE
from harness.run import uptodate
from harness.run.faults import fault_words
from harness.run.judge_client import judge_channels
from harness.run.outcome import RunDecision
from harness.run.prepare import Inputs
from harness.run.stages import Stages
from harness.run.start import RunStart


@dataclass(frozen=True, slots=True)
class Settled:
    kept: str | None  # what was left in place instead of this run's set, for the receipt
    problems: tuple[str, ...]  # artifacts that could not be put back
    ended: datetime
    seconds: float
    # What the record says of the artifacts (None when no record is written):
    citations: AuditRecord | None = None
    up_to_date: UpToDateStamp | None = None
    artifacts: ArtifactSet | None = None
    channels: RunChannels | None = None


def settle(run: RunStart, stages: Stages, decision: RunDecision, *, recorded: bool) -> Settled:
    ended = datetime.now(UTC)
    moved = stages.aside is not None and stages.aside.moved_citations
    kept, problems = _keep_together(run, stages, decision.wrote, moved)
    seconds = round(time.monotonic() - run.budget.clock, 3)
    if not recorded:
        return Settled(kept, problems, ended, seconds)
    # judge.json as the run leaves it, read once: the up-to-date stamp and the artifact
    # set vouch for the same bytes.
    judge = check_session_judge(run.folder)
    return Settled(
        kept,
        problems,
        ended,
        seconds,
        citations=_citations(stages, decision, kept),
        channels=_channels(run, stages),
        up_to_date=_stamp(run, stages, decision, judge.sha256),
        artifacts=_artifact_set(run, stages, decision.wrote, ended.isoformat(), judge),
    )


def _previous(stages: Stages) -> RunRecord | None:
    return stages.inputs.previous if stages.inputs is not None else None


def _keep_together(
    run: RunStart, stages: Stages, wrote: bool, moved: bool
) -> tuple[str | None, tuple[str, ...]]:
    """Keep the set together: when judge.json stays as it was, put the previous
    citations.json back in place of this run's (or remove this run's, when there was
    none). What was kept, for the receipt; None when this run's set is in place."""
    if wrote:
        return None, ()
    fd, audit = run.artifacts.fd, stages.audit
    problems: tuple[str, ...] = ()
    try:
        if moved:
            with contextlib.suppress(FileNotFoundError):  # put back by a first settling
                os.rename(PREVIOUS_CITATIONS_FILE, CITATIONS_FILE, src_dir_fd=fd, dst_dir_fd=fd)
            os.fsync(fd)
        elif audit is not None and audit.record.path is not None:
            # This run's report, where the set it keeps had none.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(CITATIONS_FILE, dir_fd=fd)
            os.fsync(fd)
    except OSError as exc:
        problems = (
            f"the previous {ARTIFACT_DIR}/{CITATIONS_FILE} could not be put back "
            f"({fault_words(exc)})",
        )
    previous = _previous(stages)
    before = previous.artifacts if previous is not None else None
    judge_run = before.judge.runId if before is not None and before.judge else None
    if judge_run is None:
        return "judge.json and the citation audit in place were left as they were", problems
    return (
        f"the judgment and citation audit of run {judge_run} were left in place as they were",
        problems,
    )


def _citations(stages: Stages, decision: RunDecision, kept: str | None) -> AuditRecord | None:
    audited, audit = stages.audited, stages.audit
    if audited is None or audit is None:
        return audited.record if audited is not None else None  # --no-cite: skipped
    if not kept:  # only the model's own judgment is
        by_model = decision.judgment is not None and decision.kind in ("model-written", "repaired")
        judgment = decision.judgment
        return audit.judged(judgment.scores.citationAccuracy if by_model and judgment else None)
    # This run's audit is not the one in place.
    previous = _previous(stages)
    before = previous.citations if previous is not None else None
    return before or audit.record.model_copy(update={"path": None})


def _channels(run: RunStart, stages: Stages) -> RunChannels | None:
    """--batch-api: this run's requests by channel, read as the run ends (every turn of
    every sample, the audit's, this run's own even when it keeps the previous set);
    None when neither client counts them."""
    judge = judge_channels(run.callers.client)
    audit = stages.audit.record.channels if stages.audit is not None else None
    if judge is None and audit is None:
        return None
    return RunChannels(audit=audit or Channels(), judge=judge or Channels())


def _stamp(
    run: RunStart, stages: Stages, decision: RunDecision, written: str | None
) -> UpToDateStamp | None:
    """run.json's `upToDate` for a completed run on inputs it could digest whole."""
    completed = decision.kind in uptodate.COMPLETED or (
        decision.kind == "fallback" and decision.no_findings
    )
    inputs = stages.inputs
    if not completed or inputs is None or not inputs.inputs:
        return None
    digest = inputs.inputs
    if stages.audit is not None:  # the cache as the audit left it (it may fetch)
        digest = _inputs_now(run, inputs) or ""
    if not digest:
        return None
    return uptodate.stamp(digest, written, no_findings=decision.kind == "fallback")


def _inputs_now(run: RunStart, inputs: Inputs) -> str | None:
    """The inputs digest with the fetched-text cache as it is now (the audit may have
    added to it); None if it cannot cover everything."""
    cache = digest_cache(run.folder)
    if not cache.complete:
        return None
    return uptodate.inputs_digest(run.opts, inputs.digest, inputs.brief.digest, cache.value)


def _artifact_set(
    run: RunStart, stages: Stages, wrote: bool, ended: str, checked: JudgeCheck
) -> ArtifactSet:
    """Which run each of judge.json (as `checked` read it) and citations.json in place
    came from."""
    from harness.artifacts.read import read_citations

    # citations.json read back under its seal (run.json's last record is the one the
    # run read at its start: `previous`, not read again)
    report = read_citations(run.folder).value
    citations_run = report.report.runId if report is not None else None
    judge_sha = checked.sha256
    mine = ArtifactRef(runId=run.run_id, sha256=judge_sha, ended=ended)
    previous = _previous(stages)
    before = previous.artifacts if previous is not None else None
    judge: ArtifactRef | None = None
    if judge_sha is not None:
        if wrote:
            judge = mine
        elif before is not None and before.judge is not None and (before.judge.sha256 == judge_sha):
            judge = before.judge
        else:
            judge = ArtifactRef(runId=None, sha256=judge_sha)
    citations: ArtifactRef | None = None
    if report is not None:
        sha = report.sha256
        if citations_run == run.run_id:
            citations = ArtifactRef(runId=run.run_id, sha256=sha, ended=ended)
        elif (
            before is not None
            and before.citations is not None
            and (before.citations.runId == citations_run)
        ):
            citations = before.citations
        else:
            citations = ArtifactRef(runId=citations_run, sha256=sha)
    return ArtifactSet(judge=judge, citations=citations)


__all__ = ["Settled", "settle"]
