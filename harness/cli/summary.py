"""Human summaries for stderr."""

from __future__ import annotations

from typing import Any

from harness.run.pipeline import RunResult, score_text


def run_summary_lines(result: RunResult) -> list[str]:
    record = result.record
    lines = [f"judge: {result.outcome}: {result.reason}"]
    if result.judgment is not None:
        lines.append("  scores:   " + score_text(result.judgment))
        lines.append("  unknowns: " + (", ".join(result.judgment.unknowns) or "none"))
        lines.append(f"  note:     {result.judgment.note}")
    usage = record.get("usage") or {}
    lines.append(
        f"  turns {record.get('turns', 0)}, tool calls {len(record.get('toolCalls', []))}, "
        f"tokens in {usage.get('input_tokens', 0):,} / out {usage.get('output_tokens', 0):,} "
        f"(cache read {usage.get('cache_read_input_tokens', 0):,}, "
        f"written {usage.get('cache_creation_input_tokens', 0):,})"
    )
    lines += citation_lines(record.get("citations"))
    if result.record_path is not None:
        lines.append(f"  record:   {result.record_path}")
    return lines


def citation_lines(citations: dict[str, Any] | None) -> list[str]:
    """The citation audit in one or two lines (run.json's `citations`)."""
    if not citations:
        return []
    if citations.get("skipped"):
        return [f"  citations: skipped ({citations['skipped']})"]
    if "verdicts" not in citations:
        return [f"  citations: not audited ({citations.get('failure') or 'no report'})"]
    verdicts = ", ".join(f"{n} {v}" for v, n in citations["verdicts"].items() if n)
    checks = ", ".join(f"{k} {n}" for k, n in citations["checks"].items() if n) or "none"
    how = "offline" if citations.get("offline") else ", ".join(citations.get("models") or [])
    lines = [
        f"  citations: {citations['claims']} claims ({how}): {verdicts or 'none'}; "
        f"problems: {checks}; {citations.get('path') or 'report not saved'}"
    ]
    agreement = citations.get("agreement") or {}
    if agreement.get("disagrees"):
        lines.append(f"  citations: the judge disagrees with the audit: {agreement['why']}")
    return lines
