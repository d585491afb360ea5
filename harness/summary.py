"""Human summaries for stderr."""

from __future__ import annotations

from harness.run import RunResult


def run_summary_lines(result: RunResult) -> list[str]:
    record = result.record
    lines = [f"judge: {result.outcome}: {result.reason}"]
    if result.judgment is not None:
        scores = result.judgment.scores.model_dump()
        lines.append("  scores:   " + ", ".join(f"{k} {v}" for k, v in scores.items()))
        lines.append("  unknowns: " + (", ".join(result.judgment.unknowns) or "none"))
        lines.append(f"  note:     {result.judgment.note}")
    usage = record.get("usage") or {}
    lines.append(
        f"  turns {record.get('turns', 0)}, tool calls {len(record.get('toolCalls', []))}, "
        f"tokens in {usage.get('input_tokens', 0):,} / out {usage.get('output_tokens', 0):,} "
        f"(cache read {usage.get('cache_read_input_tokens', 0):,}, "
        f"written {usage.get('cache_creation_input_tokens', 0):,})"
    )
    if result.record_path is not None:
        lines.append(f"  record:   {result.record_path}")
    return lines
