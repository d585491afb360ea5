"""`judge run` as one library call, read top to bottom like the README's diagram:

options → session → lock → budget → prepare (or up to date) → audit → judge → outcome →
settle the artifacts → the record, built once → run.json. Whatever happens, at the end
judge.json is valid or absent, the session's own files are untouched, and the receipt
says what happened: a signal or a fault of the disk builds the record from the stages
that had returned.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness import redact
from harness.agent.opening import first_message
from harness.artifacts.record import Receipt
from harness.errors import EXIT_FAILED
from harness.events import OnEvent, ShouldStop
from harness.fs.artifacts import ArtifactDir, NotWritable
from harness.fs.names import ARTIFACT_DIR
from harness.interrupt import Interrupted, within
from harness.run import outcome, prepare
from harness.run.assemble import build_record, exit_code, final_note, receipt_note
from harness.run.audit import begin_audit, not_audited, run_audit
from harness.run.faults import is_disk_fault
from harness.run.hooks import RunHooks
from harness.run.judge import begin_judge, judge
from harness.run.judge_client import judge_model
from harness.run.resolve import lock_wait, resolve
from harness.run.result import RunResult
from harness.run.settle import settle
from harness.run.stages import Stages
from harness.run.start import Callers, RunStart
from harness.run.write import RecordWritten, write_record


def judge_session(
    path: str | Path,
    *,
    client: Any = None,
    cite_client: Any = None,
    force: bool = False,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    cite_pool: Any = None,
    hooks: RunHooks | None = None,
    **options: Any,
) -> RunResult:
    """Run the whole audit on one session folder. Never raises for model behaviour;
    raises `JudgeError` subclasses only for usage/configuration faults.

    `client` replaces the Anthropic client (an object with `.messages.create`),
    for tests and for callers that build their own; `cite_client` (a `CiteClient`)
    answers the citation audit. With `client` but no `cite_client` the audit runs offline.
    Without `force`, a judge.json that a completed run wrote on identical inputs is
    reported up to date and no model is called (harness.run.uptodate). `progress` is told
    what the run does and `stop` may end it early (harness.events); `cite_pool` (a
    `harness.cite.CitePool`) is a limit on audit requests in flight shared with other runs;
    `hooks` (a `RunHooks`) hears the run's milestones, for a caller that steers by them.
    """
    resolved = resolve(path, options)
    try:  # opened once, by descriptor: a `.judge` swapped for a link later changes nothing
        artifacts = ArtifactDir(resolved.folder, ARTIFACT_DIR)
    except NotWritable as exc:
        return RunResult.said("not-written", EXIT_FAILED, exc.message)
    callers = Callers(client, cite_client, progress, stop, cite_pool, hooks or RunHooks(), force)
    redact.register_client(client)  # a caller's client may hold a key of its own
    clock = time.monotonic()  # the run's time starts before the wait for the lock
    with artifacts, contextlib.ExitStack() as held:
        try:
            wait, option = lock_wait(resolved.opts)
            held.enter_context(artifacts.lock(wait, raise_what=option))
        except Interrupted as exc:
            return RunResult.said("interrupted", exc.exit_code, outcome.waiting_note(exc))
        run = RunStart.begin(resolved.folder, artifacts, resolved.opts, callers, clock)
        return _judge(run, held)


def _judge(run: RunStart, held: contextlib.ExitStack) -> RunResult:
    """The stages under the lock; `done` holds the value of each stage that returned."""
    done = Stages()
    try:
        inputs = prepare.read_inputs(run)
        if inputs.fresh is not None:  # nothing is written: run.json stays the completed run's
            fresh = RunResult.up_to_date(inputs.fresh)
            return replace(fresh, session_problems=_file_problems(inputs))
        aside = prepare.set_aside(run, inputs)
        done = replace(done, inputs=inputs, aside=aside)
        if not inputs.has_claims:
            return _close(run, done, outcome.no_findings(run, aside))
        # The judge's client first: a missing key is a configuration error (exit 2)
        # that should not wait for the audit's model calls.
        model = judge_model(run.opts, run.callers.client, inputs.digest, inputs.brief.digest)
        held.callback(model.close)
        audited = not_audited()
        if run.opts.cite:
            share = begin_audit(run)
            done = replace(done, audit_share=share)
            audited = run_audit(run, inputs.session, inputs.digest, share)
        done = replace(done, audited=audited)
        judging = begin_judge(run, inputs.session, model, inputs.inputs, held)
        done = replace(done, judge_start=judging)
        first = first_message(inputs.session, run.opts.cli, audited.summary)
        judged = judge(run, model, inputs.system, first, judging, done.audit_time)
        done = replace(done, judged=judged)
        return _close(run, done, outcome.from_judge(run, judged, judging.tools, aside))
    except Interrupted as exc:
        return _close(run, done, outcome.interrupted(exc, done.wrote))
    except OSError as exc:
        if not is_disk_fault(exc):
            raise
        return _close(run, done, outcome.disk_fault(exc, done.wrote))
    except Exception as exc:  # a signal inside a lazy import comes out wrapped
        signalled = within(exc)
        if signalled is None:
            raise
        return _close(run, done, outcome.interrupted(signalled, done.wrote))


def _close(run: RunStart, done: Stages, decision: outcome.RunDecision) -> RunResult:
    """Settle the artifacts, build the record once and write it; the receipt says all."""
    # A run stopped before it read its inputs still records that it was interrupted.
    recorded = done.aside is not None or decision.interruption is not None
    settled = settle(run, done, decision, recorded=recorded)
    note = receipt_note(decision, settled, done.audited.ignored if done.audited else None)
    record = build_record(run, done, decision, settled, note) if recorded else None
    written = write_record(run, record) if record is not None else RecordWritten(None, None, None)
    problems = [*settled.problems, *filter(None, [written.problem])]
    receipt = Receipt(
        wroteJudge=decision.wrote, note=final_note(note, record, written.unkept, problems)
    )
    if problems and record is not None:  # the record returned says what the receipt says
        record = record.model_copy(update={"receipt": receipt})
    code = exit_code(decision, problems)
    return RunResult(
        receipt,
        code,
        decision.kind,
        decision.reason,
        decision.judgment,
        record,
        written.path,
        _file_problems(done.inputs),
    )


def _file_problems(inputs: prepare.Inputs | None) -> tuple[str, ...]:
    return tuple(p.line() for p in inputs.session.problems) if inputs is not None else ()


__all__ = ["judge_session"]
