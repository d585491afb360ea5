"""Pair human labels with what the harness saved for each labelled session (no model request).

Per session under the root it reads, through the session's confined reader, `judge.json` (the
same strict check as `judge show`), `.judge/citations.json` (the audit's report) and, for
`--self`, the saved samples `.judge/samples/*.json`. Whatever cannot be paired is named in
the report's `coverage`: a session no label names, a label naming a missing session or claim,
a session without a valid judgment or a readable audit, a session whose inputs changed after
it was labelled.
"""

from __future__ import annotations

import contextlib
import hashlib
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
from harness.audit.report import CitationReport, ClaimResult, saved_report
from harness.contract.judgment import MAX_JUDGE_BYTES, check_judge_text, check_session_judge
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError
from harness.fs.confined import ConfinedError, SessionReader
from harness.session.discover import discover, is_session
from harness.session.saved import read_sealed

CITATIONS = ".judge/citations.json"
RUN = ".judge/run.json"
SAMPLES = ".judge/samples"


def confidence(claim: ClaimResult) -> float | None:
    """The engine's probability that the claim is supported: the set's `together` answer
    (sources), else the best confirm of its quotes or passages; None when nothing was
    confirmed (no quote matched in screening)."""
    if claim.together is not None:
        return claim.together
    confirms = [q.confirm for q in claim.quotes if q.confirm is not None]
    confirms += [p.confirm for p in claim.passages if p.confirm is not None]
    return max(confirms) if confirms else None


def _folder(root: Path, session: str) -> Path | None:
    """The labelled session's folder, or None for a name that leaves the root."""
    rel = PurePosixPath(session)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or "\\" in session:
        return None
    return root.joinpath(*rel.parts)


def _audit(folder: Path) -> tuple[CitationReport | None, str | None]:
    """The saved audit, only as this installation wrote it (a planted one is absent)."""
    fix = "run `judge run` on it"
    data, problem = read_sealed(folder, CITATIONS, "citations", fix, "a citation report")
    if problem is not None:
        return None, problem
    return saved_report(data, CITATIONS, fix)


def _samples(
    folder: Path, name: str, into: SampleSet, digest: Callable[[Path], str] | None = None
) -> None:
    """The samples run.json (sealed) lists, each read and checked against its sha256 there:
    a sample file it does not list, or one whose bytes changed, is not read as a sample.
    With `digest`, a run.json whose `sessionDigest` is not this session's (a record sealed
    here, but for other contents: copied from another session, or the session changed
    since) lends no samples either."""
    run, problem = read_sealed(
        folder, RUN, "run", "run `judge run --samples K` on it", "a run record"
    )
    listed = ((run or {}).get("samples") or {}).get("made") or []
    if run is None:
        if problem and "absent" not in problem:
            into.unreadable.append(f"{name}: {problem}")
        return
    if listed and digest is not None and run.get("sessionDigest") != digest(folder):
        into.unreadable.append(
            f"{name}/{RUN}: written for other session contents (its sessionDigest is not "
            "this session's: copied from another session, or the session changed since); "
            "its samples are not read; run `judge run --samples K --force` on it"
        )
        return
    rels = {str(e.get("file", "")) for e in listed if isinstance(e, dict)}
    try:
        with SessionReader(folder) as reader:
            _unlisted(reader, name, rels, into)
            for entry in listed:
                rel = str(entry.get("file", "")) if isinstance(entry, dict) else ""
                if not rel.startswith(f"{SAMPLES}/"):
                    continue
                try:
                    blob = reader.read_bytes(rel, MAX_JUDGE_BYTES + 1).data
                except ConfinedError as exc:
                    into.unreadable.append(f"{name}/{rel}: {exc.reason}")
                    continue
                if "sha256:" + hashlib.sha256(blob).hexdigest() != entry.get("sha256"):
                    into.unreadable.append(f"{name}/{rel}: not the sample run.json vouches for")
                    continue
                judgment = check_judge_text(blob.decode("utf-8", errors="replace")).judgment
                if judgment is None:
                    into.unreadable.append(f"{name}/{rel}: not a valid judge.json")
                    continue
                into.by_session.setdefault(name, []).append(judgment.scores.model_dump())
    except ConfinedError as exc:
        into.unreadable.append(f"{name}: {exc.reason}")


def _unlisted(reader: SessionReader, name: str, listed: set[str], into: SampleSet) -> None:
    """Say once how many `.json` files in the samples folder run.json does not list (a
    planted sample, or one left by a run that did not finish): none is read."""
    with contextlib.suppress(ConfinedError):  # no folder (or a link): nothing listed
        found = reader.list_dir(
            SAMPLES, suffix=".json", accept=lambda n: f"{SAMPLES}/{n}" not in listed, cap=1
        )
        if found.candidates:
            into.unreadable.append(
                f"{name}/{SAMPLES}/: {found.candidates} file(s) run.json does not list; "
                "not read as samples"
            )


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
        if check.judgment is not None:
            judged[name] = check.judgment.scores.model_dump()
        else:
            coverage.unjudged.append(name)
        if any(line.session == name for _, line in labels.claims):
            report, problem = _audit(folder)
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
