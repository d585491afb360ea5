"""The run record, built once from whichever stage values exist, and the receipt."""

from __future__ import annotations

from functools import cache
from typing import Any

from harness import redact
from harness.artifacts.record import (
    Outcome,
    PreviousJudge,
    Receipt,
    RefusedWrite,
    RunRecord,
    SessionSummary,
    TokenTotals,
    Writes,
)
from harness.contract.rubric import RUBRIC_VERSION
from harness.errors import EXIT_FAILED, EXIT_OK
from harness.run.outcome import RunDecision
from harness.run.settle import Settled
from harness.run.stages import Stages
from harness.run.start import RunStart


def receipt_note(decision: RunDecision, settled: Settled, ignored: str | None) -> str:
    """The receipt's note as run.json keeps it: the outcome's, what was kept in place and a
    planted cache entry the audit ignored (each said once)."""
    parts = [decision.note]
    if settled.kept:
        parts.append(settled.kept)
    if ignored and ignored not in "; ".join(parts):
        parts.append(ignored)
    return "; ".join(parts)


def final_note(note: str, record: RunRecord | None, unkept: str | None, problems: list[str]) -> str:
    """The receipt printed: run.json's note, the refused up-to-date reuse (said once), an
    origin key that could not be kept and what could not be written."""
    parts = [note]
    refused = record.upToDateRefused if record is not None else None
    if refused and refused not in note:
        parts.append(refused)
    if unkept is not None:
        parts.append(
            f"no origin key could be kept ({unkept}), so later runs will not trust "
            "this run's artifacts"
        )
    if problems:
        parts.append("not written: " + "; ".join(problems))
    return "; ".join(parts)


def exit_code(decision: RunDecision, problems: list[str]) -> int:
    """An artifact that could not be written fails a run that was otherwise fine."""
    return EXIT_FAILED if problems and decision.code == EXIT_OK else decision.code


def build_record(
    run: RunStart, stages: Stages, decision: RunDecision, settled: Settled, note: str
) -> RunRecord:
    """run.json: the one place a `RunRecord` is made. Before the run has read its inputs
    (a signal while loading) those it had not read are absent."""
    opts, inputs, aside = run.opts, stages.inputs, stages.aside
    full = inputs is not None and aside is not None
    tools = stages.judge_start.tools if stages.judge_start is not None else None
    judged = stages.judged
    loop: dict[str, Any] = {}
    if judged is not None and tools is not None:
        # Every judgment's tokens, not only the first's.
        totals = sum((extra.usage for extra in judged.sampled), judged.first.usage)
        loop = {
            "replyProblems": [redact.redact(p) for p in judged.first.problems],
            "turns": judged.first.turns + sum(extra.turns for extra in judged.sampled),
            "reasks": judged.first.reasks,
            "stopReasons": judged.first.stop_reasons,
            "models": judged.first.models,
            "usage": TokenTotals.of(totals),
            "writes": Writes(valid=tools.writes_ok, refused=tools.writes_refused),
            "finalText": judged.first.final_text,
            # A judge that broke the format is kept visible, never silently scored.
            "formatErrors": [c.detail for c in tools.calls if c.name == "Write" and not c.ok],
            "refusedWrites": [RefusedWrite(**w) for w in tools.refused_writes],
            "samples": judged.samples,
        }
    if tools is not None:
        loop["toolCalls"] = list(tools.calls)
    judgment = decision.judgment
    return RunRecord(
        harnessVersion=harness_version(),
        rubricVersion=RUBRIC_VERSION,
        sessionId=inputs.session.session_id
        if full and inputs
        else opts.session_id or run.folder.name,
        sessionDir=str(run.folder),
        sessionDigest=inputs.digest if full and inputs else None,
        sessionDigestCut=list(inputs.digest_cut) if full and inputs else [],
        brief=inputs.brief if full and inputs else None,
        model=opts.model,
        options=opts.model_dump(mode="json", exclude={"replay", "record", "transcript"}),
        replay=str(opts.replay) if opts.replay else None,
        started=run.started.isoformat(),
        sessionSummary=SessionSummary(**inputs.session.summary()) if full and inputs else None,
        previousJudge=PreviousJudge(present=aside.had_file, valid=aside.before.valid)
        if full and aside
        else None,
        upToDateRefused=inputs.refused if full and inputs else None,
        citations=settled.citations,
        channels=settled.channels,
        runId=run.run_id,
        ended=settled.ended.isoformat(),
        seconds=settled.seconds,
        time=stages.time(run.budget),
        outcome=Outcome(
            kind=decision.kind,
            reason=decision.reason,
            wroteJudge=decision.wrote,
            apiFault=decision.api_fault,
            halted=run.callers.hooks.halted(),
        ),
        interrupted=decision.interruption,
        receipt=Receipt(wroteJudge=decision.wrote, note=note),
        judge=judgment.model_dump() if judgment else None,
        upToDate=settled.up_to_date,
        artifacts=settled.artifacts,
        **loop,
    )


@cache
def harness_version() -> str | None:
    """The installed judge-harness's version (None when it runs from a tree not installed).
    Read once a process: the metadata lookup scans sys.path (0.3 ms), and a batch asked once
    a session."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judge-harness")
    except PackageNotFoundError:
        return None


__all__ = ["build_record", "exit_code", "final_note", "receipt_note"]
