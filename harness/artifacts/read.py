"""The one reader of each artifact a run leaves under a session, typed.

Everything under a session comes from the research pipeline, `.judge/` included. Each
reader here reads its artifact through the session's confined reader (a link anywhere on
the way, a hard link or a special file is refused with its reason), bounded in bytes, and
gives it only when

1. it is JSON (never a crash: not UTF-8, a 5,000-digit number, nesting past the parser);
2. it carries this installation's seal for its kind (harness.fs.origin);
3. it is of this version's format (`RunRecord`, `CitationReport`);
4. it was written for *this* session: a sealed artifact copied from another session is
   named as such and not used.

The session an artifact belongs to is the session folder it was written in, by name
(`sessionDir`; a citation report written before it carried one: its `sessionId`, the
folder's name unless `--session-id` said otherwise). The name, not the whole path, so a
root moved or mounted elsewhere (shards on other machines) keeps its artifacts, and a
session's artifacts copied into another session of the root are never that one's.

Each reader returns a `Read`: the value, or the problem in words (and whether the file
was simply absent). Its users: `judge show`, the report page, `judge agree`, the merge
of a batch's results and the up-to-date rule.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import ValidationError

from harness.contract.judgment import (
    MAX_JUDGE_BYTES,
    JudgeCheck,
    check_judge_text,
    check_session_judge,
)
from harness.fs.confined import ConfinedError, SessionReader, reading
from harness.fs.names import CITATIONS_REL, RUN_REL, SAMPLES_REL
from harness.fs.origin import sealed_by_us

if TYPE_CHECKING:  # the formats' models load when there is a file to check against them:
    # `judge show` of a session no run has judged builds none of them (its start-up)
    from harness.artifacts.record import RunRecord
    from harness.audit.report import CitationReport

__all__ = [
    "MAX_CITATIONS_BYTES",
    "MAX_RUN_BYTES",
    "Provenance",
    "Read",
    "SamplesRead",
    "SavedReport",
    "another_session",
    "not_ours",
    "provenance",
    "read_citations",
    "read_run",
    "read_samples",
]

T = TypeVar("T")
U = TypeVar("U")

MAX_RUN_BYTES = 16 << 20  # a run.json is a few KB; a bigger one is not ours to trust
MAX_CITATIONS_BYTES = 64 * 1024 * 1024  # a citations.json of 2,000 claims is about 2 MB
_MODES = ("auto", "sources", "quotes")


@dataclass(frozen=True, slots=True)
class Read(Generic[T]):
    """An artifact as read: its value, or why there is none (`problem`, in words, naming
    the file; `absent` when there was simply no file). `said(fix)` is the problem with
    what to do about it, joined as each kind of problem has always been joined."""

    value: T | None = None
    problem: str | None = None
    absent: bool = False
    sep: str = "; "

    def said(self, fix: str) -> str | None:
        return None if self.problem is None else f"{self.problem}{self.sep}{fix}"

    def failed(self) -> Read[U]:
        """The same problem, as a read of another type."""
        return Read(None, self.problem, self.absent, self.sep)


def not_ours(rel: str, what: str) -> str:
    """The one wording of an artifact without this installation's proof of origin."""
    return (
        f"ignored {what} this installation did not write ({rel} has no valid proof of "
        "origin; it may have come with the session)"
    )


def another_session(rel: str, what: str, written_for: str) -> str:
    """The one wording of an artifact this installation sealed for another session."""
    return (
        f"ignored {what} written for another session: {rel} names the session "
        f"{written_for!r} (other session contents, copied from there)"
    )


def _session_name(folder: Path, reader: SessionReader | None = None) -> str:
    return reader.root.name if reader is not None else Path(os.path.realpath(folder)).name


def _bytes(folder: Path, rel: str, cap: int, reader: SessionReader | None = None) -> Read[bytes]:
    """`rel`'s bytes, through `reader` (the caller's, left open) or a reader of its own."""
    try:
        with reading(folder, reader) as opened:
            read = opened.read_bytes(rel, cap)
    except ConfinedError as exc:
        if exc.why in ("missing", "notdir"):
            return Read(problem=f"{rel} is absent", absent=True)
        return Read(problem=exc.message, sep=". ")
    if read.cut is not None:
        return Read(problem=f"{rel} is larger than {cap:,} bytes; not read", sep=". ")
    return Read(read.data)


def _sealed(
    folder: Path, rel: str, cap: int, kind: str, what: str, reader: SessionReader | None = None
) -> Read[tuple[bytes, Any]]:
    """The file's bytes and JSON, only under this installation's seal for `kind`."""
    raw = _bytes(folder, rel, cap, reader)
    if raw.value is None:
        return raw.failed()
    try:
        document = json.loads(raw.value.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, a 5,000-digit number
        return Read(problem=f"{rel} is not valid JSON ({str(exc)[:160]})")
    if not sealed_by_us(kind, document):
        return Read(problem=not_ours(rel, what))
    return Read((raw.value, document))


def _mine(
    folder: Path, rel: str, what: str, written_for: str | None, reader: SessionReader | None = None
) -> str | None:
    """None when the artifact was written for this session, else the problem."""
    if written_for is not None and PurePath(written_for).name == _session_name(folder, reader):
        return None
    return another_session(rel, what, PurePath(written_for).name if written_for else "")


# -- run.json -------------------------------------------------------------------------


def read_run(folder: Path, reader: SessionReader | None = None) -> Read[RunRecord]:
    """`.judge/run.json`: the last run's record, if this installation wrote it for this
    session in this version's format (read through `reader`, the run's own, if given)."""
    what = "a run record"
    sealed = _sealed(folder, RUN_REL, MAX_RUN_BYTES, "run", what, reader)
    if sealed.value is None:
        return sealed.failed()
    from harness.artifacts.record import RunRecord

    try:
        record = RunRecord.model_validate(sealed.value[1])
    except ValueError:  # pydantic's ValidationError included
        return Read(problem=f"{RUN_REL} is not a run record of this version")
    problem = _mine(folder, RUN_REL, what, record.sessionDir, reader)
    return Read(record) if problem is None else Read(problem=problem)


# -- citations.json -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SavedReport:
    """`.judge/citations.json` as read: the report and the sha256 of its bytes."""

    report: CitationReport
    sha256: str


def _wrong(data: Any) -> str:
    """What in the fields people read first does not match the report format, if anything
    (said in these words before the whole format is checked)."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("against", "auto") not in _MODES:  # the format's default: auto
        return f"against: expected one of {', '.join(_MODES)}"
    if not isinstance(data.get("offline"), bool):
        return "offline: expected true or false"
    claims = data.get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
        return "claims: expected a list of claims"
    if not isinstance(data.get("models", []), list):
        return "models: expected a list"
    return ""


def read_citations(folder: Path) -> Read[SavedReport]:
    """`.judge/citations.json`: the citation audit's report, if this installation wrote it
    for this session in this version's format."""
    what = "a citation report"
    sealed = _sealed(folder, CITATIONS_REL, MAX_CITATIONS_BYTES, "citations", what)
    if sealed.value is None:
        return sealed.failed()
    data, document = sealed.value
    wrong = _wrong(document)
    if wrong:
        return Read(problem=f"{CITATIONS_REL} is not a citation report ({wrong})")
    from harness.audit.report import CitationReport

    try:
        report = CitationReport.model_validate(document)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = "/".join(str(p) for p in first["loc"])
        return Read(
            problem=f"{CITATIONS_REL} does not match the report format (at /{where}: "
            f"{first['msg']})"
        )
    problem = _mine(folder, CITATIONS_REL, what, report.sessionDir or report.sessionId)
    if problem is not None:
        return Read(problem=problem)
    return Read(SavedReport(report, "sha256:" + hashlib.sha256(data).hexdigest()))


# -- samples --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SamplesRead:
    """The samples a run record lists, each checked against its sha256 there: the scores
    of each that is whole and valid, and what could not be read, one line each (relative
    to the session)."""

    scores: list[dict[str, int | str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "<file>: why"
    refused: str | None = None  # the session's reader refused the folder: why


def read_samples(folder: Path, record: RunRecord) -> SamplesRead:
    """`.judge/samples/*.json` as `record` (read by `read_run`) lists them: a sample file it
    does not list, or one whose bytes changed, is not read as a sample."""
    listed = record.samples.made if record.samples is not None else []
    out = SamplesRead()
    refused: str | None = None
    try:
        with SessionReader(folder) as reader:
            _unlisted(reader, {s.file for s in listed}, out)
            for sample in listed:
                if not sample.file.startswith(f"{SAMPLES_REL}/"):
                    continue
                try:
                    blob = reader.read_bytes(sample.file, MAX_JUDGE_BYTES + 1).data
                except ConfinedError as exc:
                    out.unreadable.append(f"{sample.file}: {exc.reason}")
                    continue
                if "sha256:" + hashlib.sha256(blob).hexdigest() != sample.sha256:
                    out.unreadable.append(f"{sample.file}: not the sample run.json vouches for")
                    continue
                judgment = check_judge_text(blob.decode("utf-8", errors="replace")).judgment
                if judgment is None:
                    out.unreadable.append(f"{sample.file}: not a valid judge.json")
                    continue
                out.scores.append(judgment.scores.model_dump())
    except ConfinedError as exc:
        refused = exc.reason
    return SamplesRead(out.scores, out.unreadable, refused)


def _unlisted(reader: SessionReader, listed: set[str], out: SamplesRead) -> None:
    """Say once how many `.json` files in the samples folder run.json does not list (a
    planted sample, or one left by a run that did not finish): none is read."""
    try:  # no folder (or a link): nothing listed
        found = reader.list_dir(
            SAMPLES_REL, suffix=".json", accept=lambda n: f"{SAMPLES_REL}/{n}" not in listed, cap=1
        )
    except ConfinedError:
        return
    if found.candidates:
        out.unreadable.append(
            f"{SAMPLES_REL}/: {found.candidates} file(s) run.json does not list; "
            "not read as samples"
        )


# -- which run each artifact came from ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Provenance:
    """The run record and the citation report in place (each as its reader gives it) and
    which run each of judge.json and citations.json came from, so that no reader pairs
    artifacts of different runs."""

    run: Read[RunRecord]
    citations: Read[SavedReport]
    judge_sha256: str | None  # of the judge.json in place
    judge_run: str | None  # the run that wrote that judge.json (None: unknown)
    citations_run: str | None  # the run id the citation report carries under its seal

    @property
    def paired(self) -> bool:
        """judge.json and citations.json are known to come from one run."""
        return self.judge_run is not None and self.judge_run == self.citations_run

    @property
    def run_id(self) -> str | None:
        return self.run.value.runId if self.run.value is not None else None

    def ended(self, run_id: str | None) -> str | None:
        """When run `run_id` ended, if run.json says."""
        refs = self.run.value.artifacts if self.run.value is not None else None
        if refs is None or run_id is None:
            return None
        for ref in (refs.judge, refs.citations):
            if ref is not None and ref.runId == run_id:
                return ref.ended
        return None

    def document(self) -> dict[str, Any]:
        """For `judge show --json`: the run of each artifact, and whether they pair."""
        return {
            "run": self.run_id,
            "judge": self.judge_run,
            "citations": self.citations_run,
            "paired": self.paired,
        }


def provenance(folder: Path, judge: JudgeCheck | None = None) -> Provenance:
    """Read run.json and citations.json (each by its reader) and judge.json's digest, and
    say which run each came from: judge.json's is the run run.json names for a file of
    that digest; citations.json's is the run id it carries under its seal. `judge`: the
    check of judge.json a caller already made, so that the bytes vouched for are the
    bytes it checked (one read, no window for a swap between two)."""
    record = read_run(folder)
    citations = read_citations(folder)
    judge_sha = (judge if judge is not None else check_session_judge(folder)).sha256
    refs = record.value.artifacts if record.value is not None else None
    judge_run = None
    if refs is not None and refs.judge is not None and judge_sha is not None:
        judge_run = refs.judge.runId if refs.judge.sha256 == judge_sha else None
    citations_run = citations.value.report.runId if citations.value is not None else None
    return Provenance(record, citations, judge_sha, judge_run, citations_run)
