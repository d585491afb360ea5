"""How the run ends: the outcome decided from what the judge did (or why it could not),
with the advisory fallback written when no model judgment stands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness import redact
from harness.artifacts.record import Interruption, OutcomeKind
from harness.audit.record import ApiFault
from harness.contract.judgment import (
    JudgeCheck,
    Judgment,
    check_session_judge,
    fallback_judgment,
    score_text,
    write_judgment_atomic,
)
from harness.errors import EXIT_FAILED, EXIT_OK, WriteError
from harness.fs.names import ARTIFACT_DIR, PREVIOUS_JUDGE_FILE
from harness.interrupt import Interrupted
from harness.run.faults import fault_words
from harness.run.judge import Judged
from harness.run.prepare import SetAside
from harness.run.start import RunStart

if TYPE_CHECKING:
    from harness.agent.tools import ToolBox

NO_FINDINGS = (
    "no findings to score: the findings are absent or empty, so every dimension "
    "is Unknown (escalation rule); no model was called"
)

# Said after every failure the key, the endpoint or the network may cause.
DOCTOR_HINT = "`judge doctor` says which check fails"


@dataclass(frozen=True, slots=True)
class RunDecision:
    kind: OutcomeKind
    reason: str
    note: str  # the receipt's note, before what settling the artifacts adds
    wrote: bool  # judge.json was written by this run
    code: int  # the exit code
    judgment: Judgment | None  # the judgment in place
    api_fault: ApiFault | None = None  # why the model API gave no usable reply
    no_findings: bool = False  # the completed fallback: nothing to score
    interruption: Interruption | None = None


def no_findings(run: RunStart, aside: SetAside) -> RunDecision:
    # Nothing has touched judge.json since `before` was read.
    return fallback(run, NO_FINDINGS, aside, current=aside.before, no_findings=True)


def from_judge(run: RunStart, judged: Judged, tools: ToolBox, aside: SetAside) -> RunDecision:
    """What the judge's loop came to: its valid judge.json, or the fallback and why."""
    result, check = judged.first, judged.check
    if check is not None:
        repaired = tools.writes_refused > 0 or result.reasks > 0
        judgment = check.judgment
        assert judgment is not None
        parts = [
            f"{', '.join(result.models) or run.opts.model} wrote a valid judge.json in "
            f"{result.turns} turn(s){' after repairs' if repaired else ''}: "
            f"{score_text(judgment)}"
        ]
        if judged.samples is not None:
            parts.append(
                f"sample {judged.samples.chosen} of {len(judged.samples.made)} made "
                f"({run.opts.samples} asked), the one nearest their median"
            )
        if judged.samples_moved:
            parts.append(judged.samples_moved)
        kind: OutcomeKind = "repaired" if repaired else "model-written"
        return RunDecision(kind, result.reason, "; ".join(parts), True, EXIT_OK, judgment)
    # An API or proxy may quote the key in an error; the reason goes to the receipt,
    # judge.json's note and run.json. A request refused as invalid says so itself
    # ("the API refused the request as invalid: ..."): never read as an outage.
    prefix = "the model was unavailable" if result.unavailable else "the judge did not finish"
    why = result.reason
    failures = tools.write_failures
    if failures and tools.writes_ok == 0:
        # The disk, not the model or a limit, is why no judgment is in place.
        why = (
            f"judge.json could not be written ({failures[-1]}; "
            f"{len(failures)} Write(s) failed), then {why}"
        )
    reason = redact.redact(why if result.invalid else f"{prefix}: {why}")
    if result.unavailable and not result.invalid:  # the key, the endpoint, the network?
        reason += f"; {DOCTOR_HINT}"
    fault: ApiFault | None = None
    if result.invalid or result.unavailable:
        fault = "invalid-request" if result.invalid else "unavailable"
    return fallback(run, reason, aside, api_fault=fault)


def fallback(
    run: RunStart,
    reason: str,
    aside: SetAside,
    *,
    current: JudgeCheck | None = None,
    api_fault: ApiFault | None = None,
    no_findings: bool = False,
) -> RunDecision:
    """Keep the valid judge.json that was there before when a sealed record of this
    installation says one of its runs wrote those bytes (`aside.vouched`); else write the
    all-Unknown one (whatever was there is kept as .judge/previous-judge.json). A judgment
    that arrived with the session, however valid, is never kept or counted as one."""
    if current is None:
        current = check_session_judge(run.folder)
    ours = aside.vouched is not None and current.sha256 == aside.vouched  # the bytes checked
    if current.valid and current.judgment is not None and aside.before.valid and ours:
        note = (
            f"advisory fallback not written: {reason}; the valid judge.json that a run of "
            "this installation wrote was kept"
        )
        return RunDecision(
            "kept-previous", reason, note, False, EXIT_OK, current.judgment, api_fault, no_findings
        )
    unvouched = aside.before.valid and not ours
    judgment = fallback_judgment(redact.clean(f"Advisory fallback by the harness: {reason}."))
    try:
        write_judgment_atomic(run.judge_path, judgment.to_json(), artifacts=run.artifacts)
    except WriteError as exc:
        note = f"no judge.json could be written: {exc.message} ({reason})"
        return RunDecision(
            "not-written", reason, note, False, EXIT_FAILED, None, api_fault, no_findings
        )
    note = f"advisory all-Unknown judge.json written: {reason}"
    if unvouched:
        note += (
            "; the valid judge.json in place, which no run of this installation wrote, was "
            f"replaced (kept as {ARTIFACT_DIR}/{PREVIOUS_JUDGE_FILE})"
        )
    return RunDecision("fallback", reason, note, True, EXIT_OK, judgment, api_fault, no_findings)


def interrupted(exc: Interrupted, wrote: bool) -> RunDecision:
    """A signal: a judge.json this run already wrote stays (each write is atomic and was
    valid); otherwise whatever was in place before is left as it was."""
    reason = f"{exc}; the run stopped"
    if wrote:
        note = f"{reason} after the model wrote a valid judge.json"
    else:
        note = f"{reason} before judge.json was written; any judge.json in place is unchanged"
    stopped = Interruption(signal=exc.name, exitCode=exc.exit_code)
    return RunDecision(
        "interrupted", reason, note, wrote, exc.exit_code, None, interruption=stopped
    )


def disk_fault(exc: OSError, wrote: bool) -> RunDecision:
    """A full disk or an I/O error: the receipt says which and where; exit 1."""
    reason = f"{fault_words(exc)}; the run stopped"
    if wrote:
        note = f"{reason} after the model wrote a valid judge.json"
    else:
        note = f"{reason}; judge.json is unchanged"
    return RunDecision("not-written", reason, note, wrote, EXIT_FAILED, None)


def waiting_note(exc: Interrupted) -> str:
    """A signal while waiting for another run's lock: nothing of this run was started, and
    run.json is the lock holder's, so nothing is written; the receipt says so."""
    return (
        f"{exc} while waiting for the lock held by another run; no run.json written (it "
        "belongs to that run) and judge.json is unchanged"
    )


__all__ = [
    "DOCTOR_HINT",
    "RunDecision",
    "disk_fault",
    "fallback",
    "from_judge",
    "interrupted",
    "no_findings",
    "waiting_note",
]
