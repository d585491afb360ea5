"""Pair human labels with what the harness saved for each labelled session (no model request).

Per session under the root it reads, through the session's confined reader, `judge.json` (the
same strict check as `judge show`), `.judge/citations.json` (the audit's report) and, for
`--self`, the saved samples `.judge/samples/*.json`. Whatever cannot be paired is named in
the report's `coverage`: a session no label names, a label naming a missing session or claim,
a session without a valid judgment or a readable audit, a session whose inputs changed after
it was labelled.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from harness.agree.compute import (
    ClaimRow,
    RatingRow,
    SampleSet,
    Score,
    claim_agreement,
    score_agreement,
    self_agreement,
)
from harness.agree.labels import Labels
from harness.agree.report import AgreementReport, Coverage
from harness.agree.stats import BOOTSTRAP_RESAMPLES
from harness.artifacts.read import (
    Read,
    SavedReport,
    provenance,
    read_citations,
    read_run,
    read_samples,
)
from harness.audit.report import CitationReport, ClaimResult
from harness.contract.judgment import check_session_judge
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError
from harness.fs.names import RUN_REL
from harness.session.discover import discover, is_session


def confidence(claim: ClaimResult) -> float | None:
    """The probability that decided the claim's verdict, as the audit recorded it by one
    rule in both modes (`ClaimResult.confidence`, docs/citation-audit.md); None for a claim
    with no verdict the model decided (an error, unchecked, or never asked)."""
    return claim.confidence


def _folder(root: Path, session: str) -> Path | None:
    """The labelled session's folder, or None for a name that leaves the root."""
    rel = PurePosixPath(session)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or "\\" in session:
        return None
    return root.joinpath(*rel.parts)


def _audit(
    folder: Path, read: Read[SavedReport] | None = None
) -> tuple[CitationReport | None, str | None]:
    """The saved audit, only as this installation wrote it for this session (`read`: the
    read already made, when the session's provenance was asked for)."""
    if read is None:
        read = read_citations(folder)
    if read.value is None:
        return None, read.said("run `judge run` on it")
    return read.value.report, None


def _samples(
    folder: Path, name: str, into: SampleSet, digest: Callable[[Path], str] | None = None
) -> None:
    """The samples run.json (sealed, this session's) lists, each read and checked against
    its sha256 there (`harness.artifacts.read.read_samples`). With `digest`, a run.json
    whose `sessionDigest` is not this session's (a record sealed here, but for other
    contents: the session changed since) lends no samples either."""
    run = read_run(folder)
    record = run.value
    if record is None:
        if not run.absent:
            fix = "run `judge run --samples K` on it"
            into.unreadable.append(f"{name}/{RUN_REL}: {run.said(fix)}")
        return
    listed = record.samples.made if record.samples is not None else []
    if listed and digest is not None and record.sessionDigest != digest(folder):
        into.unreadable.append(
            f"{name}/{RUN_REL}: written for other session contents (its sessionDigest is not "
            "this session's: copied from another session, or the session changed since); "
            "its samples are not read; run `judge run --samples K --force` on it"
        )
        return
    samples = read_samples(folder, record)
    into.unreadable += [f"{name}/{line}" for line in samples.unreadable]
    if samples.refused is not None:
        into.unreadable.append(f"{name}: {samples.refused}")
    for scores in samples.scores:
        into.by_session.setdefault(name, []).append(scores)


def agreement(
    labels: Labels,
    root: Path,
    *,
    with_self: bool = False,
    digest: Callable[[Path], str] | None = None,
) -> AgreementReport:
    """The whole report. `digest(folder)` is the session digest for `sessionDigest` checks
    (harness.run's, passed in: the run layer is a sibling of this one)."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a folder; pass the folder holding the sessions")
    root = root.resolve()
    named = labels.sessions()
    coverage = Coverage(
        labelledSessions=len(named),
        claimLabels=len(labels.claims),
        ratings=len(labels.ratings),
        unlabelled=[],
        missing=[],
        unjudged=[],
        unaudited=[],
        unknownClaims=[],
        changed=[],
    )
    on_disk = {p.relative_to(root).as_posix() for p in discover(root)}
    coverage.unlabelled = sorted(on_disk - set(named))
    judged: dict[str, dict[str, Score]] = {}
    audits: dict[str, dict[str, ClaimResult]] = {}
    samples = SampleSet()
    digests: dict[Path, str] = {}

    def digest_of(folder: Path) -> str:  # each session hashed once, whoever asks first
        assert digest is not None
        if folder not in digests:
            digests[folder] = digest(folder)
        return digests[folder]

    wanted_digest = {
        line.session: line.sessionDigest
        for _, line in (*labels.claims, *labels.ratings)
        if line.sessionDigest
    }
    for name in named:
        folder = _folder(root, name)
        if folder is None or not is_session(folder):  # batch's and report's rule: no links
            coverage.missing.append(name)
            continue
        check = check_session_judge(folder)
        # Which run wrote judge.json: asked only of a valid one; its citations read is kept.
        known = provenance(folder, check) if check.judgment is not None else None
        if known is not None and known.judge_run is None:
            coverage.problems.append(
                f"{name}: judge.json is valid, but no run of this installation wrote it: not "
                "counted (run `judge run` on it)"
            )
            coverage.unjudged.append(name)
        elif check.judgment is not None:
            judged[name] = check.judgment.scores.model_dump()
        else:
            coverage.unjudged.append(name)
        if any(line.session == name for _, line in labels.claims):
            report, problem = _audit(folder, known.citations if known is not None else None)
            if report is None:
                coverage.unaudited.append(name)
                coverage.problems.append(f"{name}: {problem}")
            else:
                audits[name] = {c.claimId: c for c in report.claims}
        if with_self:
            _samples(folder, name, samples, digest_of if digest is not None else None)
        if (
            name in wanted_digest
            and digest is not None
            and digest_of(folder) != wanted_digest[name]
        ):
            coverage.changed.append(name)
    claim_rows: list[ClaimRow] = []
    for _, label in labels.claims:
        claims = audits.get(label.session)
        if claims is None:
            continue
        claim = claims.get(label.claimId)
        if claim is None:
            coverage.unknownClaims.append(f"{label.session}#{label.claimId}")
            continue
        claim_rows.append(
            ClaimRow(
                session=label.session,
                claim_id=label.claimId,
                rater=label.rater,
                human=label.support,
                verdict=claim.verdict,
                problems=tuple(sorted({p.check for p in claim.problems})),
                confidence=confidence(claim),
            )
        )
    rating_rows = [
        RatingRow(label.session, label.rater, d, score, judged[label.session][d])
        for _, label in labels.ratings
        if label.session in judged
        for d, score in label.given().items()
        if d in DIMENSIONS
    ]
    return AgreementReport(
        labels=str(labels.path),
        root=str(root),
        coverage=coverage,
        claims=claim_agreement(claim_rows),
        scores=score_agreement(rating_rows),
        self_=self_agreement(samples) if with_self else None,
        resamples=BOOTSTRAP_RESAMPLES,
    )


__all__ = ["agreement", "confidence"]
