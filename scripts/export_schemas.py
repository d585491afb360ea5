"""Write the schemas (schemas/*.schema.json) from the pydantic models of the session's files
(harness/session/models.py), the audit's report (harness/audit/report.py), the run record
(harness/artifacts/record.py), `judge batch --batch-api`'s state (harness/batch/state.py) and
`judge agree`'s labels and report (harness/agree/) and `judge compare`'s result
(harness/compare/result.py).

The pydantic models are the source of truth; the JSON Schemas are their published form for
the pipeline's own tooling. Output is deterministic, so `tests/packaging/test_schemas.py` can
insist the committed files equal a fresh export.

Usage: ``python scripts/export_schemas.py [--check]`` (``--check``: exit 1 if a file differs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.agree.labels import LabelLine
from harness.agree.report import AgreementReport
from harness.artifacts.record import RunRecord
from harness.audit.report import CitationReport
from harness.batch.state import BatchState, BookLine, RoundLine, SavedConversation
from harness.compare.result import CompareResult
from harness.session.models import Finding, SourceSet, TraceLine

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://judge-harness.invalid/schemas/"

# file name -> (model, title, description)
EXPORTS: dict[str, tuple[type[BaseModel], str, str]] = {
    "finding.schema.json": (
        Finding,
        "Finding file (findings/<sub-question>.json)",
        "One sub-question of a deep-research session with its claims, each claim's cited "
        "source ids, verbatim quotes and verification votes. Written by the research "
        "pipeline; fields not listed here are allowed and kept.",
    ),
    "sources.schema.json": (
        SourceSet,
        "Source set (sources.json)",
        "The session's deduplicated sources, referred to by id from the findings. Optional "
        "(it may be absent early in a run); fields not listed here are allowed and kept.",
    ),
    "trace-line.schema.json": (
        TraceLine,
        "Tool-log line (one line of trace.jsonl)",
        "One tool call of the research run: which tool, its input, whether it succeeded and "
        "how long it took. Optional file; fields not listed here are allowed and kept.",
    ),
    "citations.schema.json": (
        CitationReport,
        "Citation report (.judge/citations.json, judge cite --json)",
        "The harness's claim–quote audit of a session: per claim its support verdict, the "
        "deterministic checks that failed and each quote's verdict; totals, usage and models. "
        "Written by the harness: no other field is allowed.",
    ),
    "run.schema.json": (
        RunRecord,
        "Run record (.judge/run.json)",
        "What one `judge run` did: its inputs (session and brief digests, model, options), "
        "the citation audit's summary, the agent's turns, tool calls and token usage, and the "
        "outcome. Written by the harness: no other field is allowed.",
    ),
    "labels.schema.json": (
        LabelLine,
        "Human label (one line of a `judge agree` labels file)",
        "One person's label: a claim's support (`kind: claim`: supported, partial or "
        "unsupported) or a session's rubric scores (`kind: rating`: any of the five "
        'dimensions, 0-5 or "Unknown"), each with its rater. Written by whoever labels; '
        "no other field is allowed.",
    ),
    "agreement.schema.json": (
        AgreementReport,
        "Agreement report (judge agree --json)",
        "The saved judgments and audits of labelled sessions against the human labels: the "
        "claims' confusion matrix, accuracy, kappa, precision/recall/F1 of unsupported, by "
        "problem, calibration; per dimension Spearman, Kendall, MAE, exact and within-one "
        "agreement, quadratic-weighted kappa, Krippendorff's alpha; the judge against its own "
        "samples; and every session or label that could not be paired. Written by the harness.",
    ),
    "compare.schema.json": (
        CompareResult,
        "Comparison (judge compare A B --json)",
        "Two sets of judged sessions compared, B − A, paired by id or question: per rubric "
        "dimension the mean paired difference with its 95% paired bootstrap interval, the "
        "Wilcoxon signed-rank test, better/worse/equal counts, Unknowns per side and the "
        "judge's noise; the claims' verdict shares and problem rates with session-bootstrap "
        "intervals; cost and time per session; the sessions that moved most; warnings when "
        "the sides were judged differently; every session left out or unpaired, and why; "
        "the --fail-if conditions. Written by the harness.",
    ),
    "batch-state.schema.json": (
        BatchState,
        "Batch state (ROOT/.judge-batch/state.json)",
        "The audit's Message Batches of one `judge batch --batch-api` root: each batch id, "
        "the request key of each custom_id and whether its results were read, so a batch "
        "killed and started again polls what it submitted. Written by the harness: no other "
        "field is allowed.",
    ),
    "batch-conversation.schema.json": (
        SavedConversation,
        "Saved lockstep conversation (ROOT/.judge-batch/conversations/<hash>.json)",
        "One session's agent turns under `judge batch --batch-api`: the answer of each turn "
        "as the API sent it and the batch of each turn submitted and not yet answered, tied "
        "to the run's inputs digest. Written by the harness: no other field is allowed.",
    ),
    "batch-answer-line.schema.json": (
        BookLine,
        "Audit answer line (one line of ROOT/.judge-batch/answers.jsonl)",
        "The answer a Message Batch gave one audit request, by the request's key, or how "
        "its result failed; appended as each result is read. Written by the harness.",
    ),
    "batch-round-line.schema.json": (
        RoundLine,
        "Agent round line (one line of ROOT/.judge-batch/lockstep.jsonl)",
        "One lockstep round of `judge batch --batch-api`: its batch id and the session, turn "
        "and run inputs of each custom_id; for the operator, never read back.",
    ),
}


def schema_for(name: str) -> dict[str, Any]:
    model, title, description = EXPORTS[name]
    body = model.model_json_schema(mode="validation")
    body.pop("title", None)
    body.pop("description", None)
    return {
        "$schema": DRAFT,
        "$id": BASE_ID + name,
        "title": title,
        "description": description,
        **body,
    }


def render(name: str) -> str:
    return json.dumps(schema_for(name), indent=2, ensure_ascii=False) + "\n"


def export(folder: Path = SCHEMAS, check: bool = False) -> list[str]:
    """Write (or with `check`, compare) every schema; returns the names that differed."""
    differ = []
    for name in EXPORTS:
        path = folder / name
        text = render(name)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            differ.append(name)
            if not check:
                path.write_text(text, encoding="utf-8")
    return differ


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only report files that differ")
    args = parser.parse_args(argv)
    differ = export(check=args.check)
    for name in differ:
        verb = "differs from the models" if args.check else "written"
        print(f"schemas/{name}: {verb}", file=sys.stderr)
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    sys.exit(main())
