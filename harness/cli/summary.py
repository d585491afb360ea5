"""Human summaries of a run for stderr, read off the typed run record."""

from __future__ import annotations

from harness.audit.record import AuditRecord
from harness.cli.audited import FAILED_HOW, against_lines
from harness.contract.judgment import score_text
from harness.run import RunResult
from harness.session.file_problems import summary


def run_summary_lines(result: RunResult) -> list[str]:
    record = result.record
    lines = [headline(result.outcome, result.reason)]
    files = summary(result.session_problems)
    if files is not None:
        lines.append(f"  session:  {files} (judge show lists them)")
    if result.judgment is not None:
        lines.append("  scores:   " + score_text(result.judgment))
        lines.append("  unknowns: " + (", ".join(result.judgment.unknowns) or "none"))
        lines.append(f"  note:     {result.judgment.note}")
    if record is None:
        return lines
    usage = record.usage
    lines.append(
        f"  turns {record.turns}, tool calls {len(record.toolCalls)}, "
        f"tokens in {usage.input_tokens if usage else 0:,} / "
        f"out {usage.output_tokens if usage else 0:,} "
        f"(cache read {usage.cache_read_input_tokens if usage else 0:,}, "
        f"written {usage.cache_creation_input_tokens if usage else 0:,})"
    )
    lines += citation_lines(record.citations)
    if result.record_path is not None:
        lines.append(f"  record:   {result.record_path}")
    return lines


def headline(outcome: str, reason: str) -> str:
    """`judge: <outcome>: <reason>`, said once: a reason that already starts with its
    outcome's words ("up to date: …", "interrupted by SIGINT") is not preceded by them."""
    words = outcome.replace("-", " ").lower()
    if reason.lower().startswith(words):
        return f"judge: {reason}"
    return f"judge: {outcome}: {reason}"


def citation_lines(citations: AuditRecord | None) -> list[str]:
    """The citation audit in one or two lines (run.json's `citations`)."""
    if citations is None:
        return []
    if citations.skipped:
        return [f"  citations: skipped ({citations.skipped})"]
    if citations.verdicts is None or citations.checks is None:
        return [f"  citations: not audited ({citations.failure or 'no report'})"]
    verdicts = ", ".join(f"{n} {v}" for v, n in citations.verdicts.model_dump().items() if n)
    checks = ", ".join(f"{k} {n}" for k, n in citations.checks.model_dump().items() if n)
    failed = bool(citations.offline and citations.failure)  # not "offline" (FAILED_HOW)
    how = "offline" if citations.offline else ", ".join(citations.models)
    if failed:
        how = FAILED_HOW
    lines = [
        f"  citations: {citations.claims} claims ({how}): {verdicts or 'none'}; "
        f"problems: {checks or 'none'}; {citations.path or 'report not saved'}"
    ]
    if failed:
        lines.append(f"  citations: unchecked because {citations.offlineReason}")
    elif citations.offline and citations.offlineReason:
        # Why offline (a replayed judge, no model client), when nobody asked for it.
        lines.append(f"  citations: offline because {citations.offlineReason}")
    judged = citations.judgedAgainst
    split = None if judged is None else judged.model_dump()
    why = "the audit failed" if failed else "offline"
    lines += against_lines(citations.against, split, bool(citations.offline), why)
    agreement = citations.agreement
    if agreement is not None and agreement.disagrees:
        lines.append(f"  citations: the judge disagrees with the audit: {agreement.why}")
    return lines
