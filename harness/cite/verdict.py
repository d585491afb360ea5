"""Round 2, pure: one request per finding, and the verdict read back from its answers.

A finding is one request, never merged with another and never split: each confirm reads
its passage for its part in the whole finding, beside every other passage gathered with
it and with nothing else, so what else sat in the request would change what it judges.
A screened finding's passages share one state under the source's `as` (its confirms keyed
`confirm:<passage id>`, its descriptors by name); a factored finding puts each role at the
top level and asks the checks that apply.

With {low, high} as the review band:
- screened evidence: a confirm at or below low is dropped; below high it is cited for
  review; at or above high it holds.
- factored evidence: every passage filling a role holds, cited once.
- fails: any asked check at or below low, or no evidence left.
- holds: every asked check at or above high, and at least one citation holds.
- review: everything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.cite.concerns import Check, Concerns, FactoredConcern, ScreenedConcern
from harness.cite.gather import Gathered
from harness.cite.questions import compare, inspect, probability
from harness.cite.replies import Checked
from harness.cite.report import Answer, Citation, Verdict
from harness.cite.source import CiteSource
from harness.cite.wire import Request


def confirm_key(passage_id: str) -> str:
    return f"confirm:{passage_id}"


def applicable(concern: FactoredConcern, roles: Mapping[str, str]) -> list[Check]:
    """The checks whose roles are all filled (a check without roles always applies)."""
    return [c for c in concern.checks if all(r in roles for r in c.roles or [])]


def request(source: CiteSource, concerns: Concerns, finding: Gathered) -> Request:
    concern = concerns.concerns[finding.concern]
    if isinstance(concern, ScreenedConcern):
        return _screened(source, concern, finding)
    return _factored(source, concern, finding)


def _screened(source: CiteSource, concern: ScreenedConcern, finding: Gathered) -> Request:
    # The passages share one state so each confirm reads its passage beside the others.
    state = source.state
    refs = [source.ref(pid) for pid in finding.passages]
    questions: dict[str, Any] = {
        confirm_key(pid): inspect(concern.confirm, ref)
        for pid, ref in zip(finding.passages, refs, strict=True)
    }
    subs = {"passages": ", ".join(refs)}
    for d in concern.descriptors:
        questions[d.name] = compare(d.ask, refs, subs)
    return {
        "state": {source.as_: {pid: state[pid] for pid in finding.passages}},
        "questions": questions,
    }


def _factored(source: CiteSource, concern: FactoredConcern, finding: Gathered) -> Request:
    roles = dict(finding.roles)
    refs = {role: f"`{role}.{source.field}`" for role in roles}
    questions: dict[str, Any] = {}
    for check in applicable(concern, roles):
        names = check.roles if check.roles is not None else list(roles)
        questions[check.name] = compare(check.ask, [refs[r] for r in names], refs)
    for d in concern.descriptors:
        questions[d.name] = compare(d.ask, list(refs.values()), refs)
    return {
        "state": {role: source.state[pid] for role, pid in finding.roles},
        "questions": questions,
    }


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    citations: list[Citation]
    checks: dict[str, Answer]
    descriptors: dict[str, Answer]
    confirms: dict[str, float]  # every screened passage's confirm, dropped ones included


def decide(
    concerns: Concerns, finding: Gathered, answers: Mapping[str, Checked], low: float, high: float
) -> Decision:
    """The verdict on one finding from its round-2 answers (already checked)."""
    concern = concerns.concerns[finding.concern]
    descriptors = {d.name: _answer(answers[d.name]) for d in concern.descriptors}
    if isinstance(concern, ScreenedConcern):
        citations: list[Citation] = []
        confirms: dict[str, float] = {}
        for pid in finding.passages:
            score = probability(concern.confirm, answers[confirm_key(pid)])
            confirms[pid] = score
            if score >= high:
                citations.append(Citation(passage=pid, status="holds", score=score))
            elif score > low:
                citations.append(Citation(passage=pid, status="review", score=score))
        verdict = _verdict(citations, [], low, high)
        return Decision(verdict, citations, {}, descriptors, confirms)

    roles = dict(finding.roles)
    asked = applicable(concern, roles)
    citations = [
        Citation(passage=pid, status="holds", roles=[r for r, p in finding.roles if p == pid])
        for pid in finding.passages
    ]
    checks = [probability(c.ask, answers[c.name]) for c in asked]
    verdict = _verdict(citations, checks, low, high)
    checked = {c.name: _answer(answers[c.name]) for c in asked}
    return Decision(verdict, citations, checked, descriptors, {})


def _answer(checked: Checked) -> Answer:
    return Answer(value=checked.value, confidence=checked.confidence)


def _verdict(citations: list[Citation], checks: list[float], low: float, high: float) -> Verdict:
    if not citations or any(c <= low for c in checks):
        return "fails"
    if all(c >= high for c in checks) and any(c.status == "holds" for c in citations):
        return "holds"
    return "review"
