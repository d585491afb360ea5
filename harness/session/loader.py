"""Load a session directory into typed models, listing problems instead of raising.

Every file is read with a byte cap (memory stays bounded whatever the pipeline
left behind), parsed strictly, and validated piece by piece so that one bad
claim or finding never hides the rest. Problems carry file, JSON pointer and
reason; the judge still runs on whatever could be read.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.clock import Deadline
from harness.errors import UsageError
from harness.fs.confined import (
    HARDLINK_REASON,
    ConfinedError,
    Entry,
    Refused,
    SessionReader,
    kind_words,
    shown_name,
)
from harness.session.models import Claim, Finding, FindingHeader, Source, TraceLine
from harness.session.snapshots import SnapshotStore
from harness.text.jsonstrict import (
    describe,
    loads_strict,
    pointer_join,
    replace_lone_surrogates,
)

ENV_ROOT = "JUDGE_SESSIONS_ROOT"


@dataclass(frozen=True, slots=True)
class LoadLimits:
    """Caps on what the loader reads; beyond them a problem says what was skipped."""

    file_bytes: int = 64 * 1024 * 1024
    finding_files: int = 5_000  # findings loaded at most (junk files do not count)
    examine_files: int = 20_000  # *.json files of findings/ examined at most, in name order
    examine_bytes: int = 256 * 1024 * 1024  # bytes read while examining them, at most
    trace_bytes: int = 16 * 1024 * 1024
    trace_lines: int = 100_000
    snapshot_files: int = 20_000
    claims: int = 20_000  # claims loaded at most, over all findings (the rest: said, unscored)


@dataclass(frozen=True, slots=True)
class LoadProblem:
    file: str
    pointer: str
    reason: str
    code: str

    def as_dict(self) -> dict[str, str]:
        return {
            "file": self.file,
            "pointer": self.pointer,
            "reason": self.reason,
            "code": self.code,
        }

    def line(self) -> str:
        where = f"{self.file}{'#' + self.pointer if self.pointer else ''}"
        return f"{where}: {self.reason}"


@dataclass(slots=True)
class TraceInfo:
    calls: int = 0
    failed: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    truncated: bool = False


@dataclass(slots=True)
class Session:
    dir: Path
    session_id: str
    findings: list[Finding] = field(default_factory=list)
    finding_files: dict[str, str] = field(default_factory=dict)  # finding id -> first file
    finding_paths: list[str] = field(default_factory=list)  # file of each finding, in order
    # Valid entries of sources.json; None when it is absent or unusable as a whole.
    sources: list[Source] | None = None
    # Every id sources.json lists, valid entry or not: what "cited but not in
    # sources.json" is checked against, so a source with a bad url is not "dangling".
    # Set together with `sources`: None exactly when `sources` is.
    listed_source_ids: set[str] | None = None
    snapshots: dict[str, Path] = field(default_factory=dict)
    # Every snapshot's text, built once (the loader, the audit and WebFetch share it).
    texts: SnapshotStore | None = field(default=None, repr=False)
    answer_bytes: int | None = None
    trace: TraceInfo | None = None
    problems: list[LoadProblem] = field(default_factory=list)
    # id(claim) -> index in its file (see claim_position). Kept here rather than on the
    # model: a pydantic private attribute costs more per claim than validating it.
    claim_positions: dict[int, int] = field(default_factory=dict, repr=False)

    @property
    def claims(self) -> Iterator[tuple[Finding, Claim]]:
        for finding in self.findings:
            for claim in finding.claims:
                yield finding, claim

    @property
    def source_ids(self) -> set[str]:
        """The source set: sources.json when present, else ids read off the findings."""
        if self.sources is not None:
            return {s.id for s in self.sources}
        return self.cited_source_ids()

    def claim_position(self, claim: Claim) -> int | None:
        """Index of a loaded claim in its finding file's `claims` array.

        Not its index in `finding.claims`: claims that failed to load keep their place.
        """
        return self.claim_positions.get(id(claim))

    def claim_pointer(self, claim: Claim) -> str:
        """JSON pointer of a loaded claim in its finding file."""
        position = self.claim_position(claim)
        return "/claims" if position is None else f"/claims/{position}"

    def cited_source_ids(self) -> set[str]:
        ids: set[str] = set()
        for _, claim in self.claims:
            ids.update(claim.sourceIds)
            ids.update(q.sourceId for q in claim.quotes)
        return ids

    def source_urls(self) -> dict[str, str]:
        """Source id -> URL, from sources.json and any `url` the findings carry."""
        urls: dict[str, str] = {}
        for finding in self.findings:
            for raw in (finding.model_extra or {}).get("sources", []) or []:
                if (
                    isinstance(raw, dict)
                    and isinstance(raw.get("id"), str)
                    and isinstance(raw.get("url"), str)
                ):
                    urls.setdefault(raw["id"], raw["url"])
        for source in self.sources or []:
            urls[source.id] = source.url
        return urls

    def summary(self) -> dict[str, Any]:
        claims = [c for _, c in self.claims]
        return {
            "findings": len(self.findings),
            "claims": len(claims),
            "quotes": sum(len(c.quotes) for c in claims),
            "sources": len(self.source_ids),
            "sourcesJson": self.sources is not None,
            "snapshots": len(self.snapshots),
            "answer": self.answer_bytes is not None,
            "trace": self.trace is not None,
            "traceCalls": self.trace.calls if self.trace else 0,
            "problems": len(self.problems),
        }


def resolve_session(arg: str, root: str | Path | None = None) -> Path:
    """SESSION is a folder if one exists, else an id under --root, $JUDGE_SESSIONS_ROOT, or cwd."""
    if not arg.strip():
        # Path("") is ".": an empty SESSION (an unset shell variable) would silently
        # audit whatever folder the command happened to run in.
        raise UsageError("SESSION is empty; pass a session folder or id")
    direct = Path(arg).expanduser()
    if direct.is_dir():
        return _not_too_long(direct.resolve())
    if root is not None:
        base, source = Path(root).expanduser(), "--root"
    elif os.environ.get(ENV_ROOT):
        base, source = Path(os.environ[ENV_ROOT]).expanduser(), f"${ENV_ROOT}"
    else:
        base, source = Path.cwd(), "the current folder"
    if "/" not in arg and arg not in ("", ".", ".."):
        candidate = base / arg
        if candidate.is_dir():
            return _not_too_long(candidate.resolve())
    if direct.exists():
        raise UsageError(f"{arg} is not a directory; SESSION must be a session folder or id")
    raise UsageError(
        f"no session {arg!r}: it is not a folder, and there is no {arg!r} under {base} "
        f"({source}); pass the session folder's path or set --root"
    )


def _not_too_long(folder: Path) -> Path:
    from harness.session.discover import too_long

    why = too_long(folder)
    if why is not None:
        raise UsageError(why)
    return folder


def load_session(
    path: Path,
    session_id: str | None = None,
    limits: LoadLimits = LoadLimits(),
    *,
    deadline: Deadline | None = None,
    reader: SessionReader | None = None,
) -> Session:
    """Load everything readable from a session folder. Never raises on bad content.

    Every file is read through one :class:`SessionReader` (no links followed in any
    component, no hard links, no special files; byte caps and ``deadline`` honoured):
    ``reader``, the caller's reader of ``path`` left open for its next reads, if given.
    """
    path = reader.root if reader is not None else path.resolve()
    session = Session(dir=path, session_id=path.name if session_id is None else session_id)
    opened: SessionReader | None = None  # a reader of its own, closed at the end
    if reader is None:
        try:
            reader = opened = SessionReader(path, deadline=deadline)
        except ConfinedError as exc:
            if path.is_dir():
                _problem(session, ".", "", exc.reason, "unreadable")
            else:  # as for any folder without findings: nothing to score
                reason = "no such folder: nothing to score (every dimension will be Unknown)"
                _problem(session, "findings/", "", reason, "missing_findings")
            return session
    with opened or nullcontext():
        _load_findings(session, reader, limits)
        _load_sources(session, reader, limits)
        _load_answer(session, reader)
        _load_trace(session, reader, limits)
        _load_snapshots(session, reader, limits)
    _cross_check(session)
    return session


# -- reading -----------------------------------------------------------------


def _problem(session: Session, file: str, pointer: str, reason: str, code: str) -> None:
    session.problems.append(LoadProblem(file, pointer, reason, code))


def _refused(session: Session, exc: ConfinedError) -> None:
    """A read the confined reader did not do, as a problem naming the file and the fix."""
    rel = exc.shown
    if exc.why == "symlink":
        reason = "is a symbolic link; the judge reads only the session's own files (not read)"
        _problem(session, rel, "", reason, "unreadable")
    elif exc.why == "hardlink":
        _problem(session, rel, "", f"{exc.reason}; copy it in as a file of its own", "unreadable")
    elif exc.why == "missing":
        _problem(session, rel, "", "disappeared while the session was being read", "unreadable")
    elif exc.why == "denied":
        reason = f"{exc.reason}; check its permissions"
        _problem(session, rel, "", reason, "unreadable")
    else:
        _problem(session, rel, "", exc.reason, "unreadable")


def _read_text(session: Session, reader: SessionReader, rel: str, cap: int) -> str | None:
    """Read a file as UTF-8 with a byte cap; problems recorded, None when unusable."""
    try:
        read = reader.read_bytes(rel, cap)
    except ConfinedError as exc:
        _refused(session, exc)
        return None
    if read.cut is not None:
        reason = f"is larger than the {cap:,}-byte cap; not loaded (split or trim it)"
        if "time" in read.cut:
            reason = f"was not read to its end ({read.cut}); not loaded"
        _problem(session, shown_name(rel), "", reason, "too_large")
        return None
    blob = read.data
    try:
        return blob.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        reason = f"is not UTF-8 (bad byte at offset {exc.start}); re-save it as UTF-8"
        _problem(session, shown_name(rel), "", reason, "not_utf8")
        return None


def _read_json(session: Session, reader: SessionReader, rel: str, cap: int) -> tuple[bool, Any]:
    text = _read_text(session, reader, rel, cap)
    if text is None:
        return False, None
    result = loads_strict(text, max_depth=None, forbid_fractions=False)
    if any("surrogate" in issue.found for issue in result.issues):
        # Reported below with their pointers; the data goes on with U+FFFD in their place
        # (no model, writer or validator can take a lone surrogate).
        result.value = replace_lone_surrogates(result.value)
    for issue in result.issues:
        code = "invalid_json" if not result.parsed else issue.rule
        if issue.found == "nesting too deep for the parser":
            code = "too_deep"
        found = f"{issue.found}; expected {issue.expected}"
        _problem(session, shown_name(rel), issue.pointer, found, code)
    return result.parsed, result.value


def _validate(
    session: Session, rel: str, base: str, model: type[BaseModel], data: Any
) -> BaseModel | None:
    model_or_none, _ = _validate_fields(session, rel, base, model, data)
    return model_or_none


def _validate_fields(
    session: Session, rel: str, base: str, model: type[BaseModel], data: Any
) -> tuple[BaseModel | None, set[str]]:
    """Validate, listing problems; on failure also say which top-level fields broke."""
    try:
        return model.model_validate(data), set()
    except ValidationError as exc:
        broken: set[str] = set()
        for error in exc.errors(include_url=False):
            pointer = base
            for part in error["loc"]:
                pointer = pointer_join(pointer, part)
            broken.add(str(error["loc"][0]) if error["loc"] else "")
            if error["type"] == "missing":
                reason = "required field is missing"
            else:
                reason = f"{error['msg'].lower()}; found {describe(error.get('input'))}"
            _problem(session, rel, pointer, reason, "wrong_type")
        return None, broken


# -- the files ---------------------------------------------------------------


def _folder(session: Session, reader: SessionReader, rel: str) -> bool | None:
    """True: ``rel`` is the session's own folder; False: absent; None: refused (reported)."""
    try:
        entry = reader.stat(rel)
    except ConfinedError as exc:
        _refused(session, exc)
        return None
    if entry is None:
        return False
    if entry.kind == "dir":
        return True
    if entry.kind == "symlink":
        reason = (
            "is a symbolic link; the judge reads only the session's own folders, so it was "
            "not followed (replace it with the folder itself)"
        )
        _problem(session, f"{rel}/", "", reason, "unreadable")
        return None
    return False


def _load_findings(session: Session, reader: SessionReader, limits: LoadLimits) -> None:
    present = _folder(session, reader, "findings")
    if present is None:
        return
    if not present:
        reason = "no such folder: nothing to score (every dimension will be Unknown)"
        _problem(session, "findings/", "", reason, "missing_findings")
        return
    try:
        # Only *.json names are candidates: a flood of other names costs a scan, never a
        # place among the files examined. The first `examine_files` in name order are
        # kept; of those, only files that parse as findings count toward `finding_files`.
        listing = reader.list_dir(
            "findings",
            suffix=".json",
            key=_natural,
            cap=max(limits.examine_files, limits.finding_files),
        )
    except ConfinedError as exc:
        _problem(session, "findings/", "", f"cannot be listed ({exc.reason})", "unreadable")
        return
    for cut in listing.cut:
        if "scanning stopped" in cut:
            _problem(session, "findings/", "", cut, "too_large")
    if not listing.entries:
        reason = "holds no *.json file: nothing to score"
        _problem(session, "findings/", "", reason, "empty_findings")
        return
    _examine_findings(session, reader, limits, listing.entries, listing.candidates)


# Junk files (not findings) get a problem each up to this many; the rest are counted.
JUNK_LISTED = 20
_FINDING_FIELDS = ("id", "subQuestion", "claims")


def _examine_findings(
    session: Session,
    reader: SessionReader,
    limits: LoadLimits,
    entries: list[Entry],
    candidates: int,
) -> None:
    """Read the candidates in name order until `finding_files` findings are loaded, or
    the examination's caps (files, bytes) or the run's deadline stop it; junk files (not
    readable, not JSON, not an object with a finding's fields) are skipped, not counted
    toward the finding cap, and what was skipped or not examined is said."""
    found = junk = examined = spent = 0
    stop = ""
    for entry in entries:
        if found >= limits.finding_files:
            stop = f"the {limits.finding_files:,}-finding cap was reached"
        elif examined >= limits.examine_files:
            stop = f"the examination cap of {limits.examine_files:,} files was reached"
        elif spent + min(entry.size, limits.file_bytes) > limits.examine_bytes and examined:
            stop = f"the examination cap of {limits.examine_bytes:,} bytes was reached"
        elif reader.deadline.expired:
            stop = "the run's time limit was reached"
        if stop:
            break
        examined += 1
        spent += min(entry.size, limits.file_bytes)
        before = len(session.problems)
        ok, data = _read_json(session, reader, entry.rel, limits.file_bytes)
        if ok and isinstance(data, dict) and any(k in data for k in _FINDING_FIELDS):
            found += 1
            _load_finding(
                session, entry.shown, entry.name.removesuffix(".json"), data, limits, reader
            )
            continue
        junk += 1
        if ok and isinstance(data, dict):
            reason = (
                "is a JSON object with none of a finding's fields (id, subQuestion, claims); "
                "skipped as not a finding"
            )
            _problem(session, entry.shown, "", reason, "wrong_type")
        elif ok:
            reason = f"a finding must be a JSON object; found {describe(data)}"
            _problem(session, entry.shown, "", reason, "wrong_type")
        if junk > JUNK_LISTED:  # counted below, not listed one by one
            del session.problems[before:]
    if junk > JUNK_LISTED:
        reason = (
            f"{junk:,} of the {examined:,} *.json files examined are not findings (unreadable, "
            f"not JSON, or not a finding object) and were skipped; the first {JUNK_LISTED} "
            f"are listed, the other {junk - JUNK_LISTED:,} only counted"
        )
        _problem(session, "findings/", "", reason, "junk_findings")
    left = candidates - examined
    if left > 0:
        upto = f"up to {entries[examined - 1].shown}: " if examined else ""
        why = stop or (
            f"the examination cap of {len(entries):,} files was reached"
            if candidates > len(entries)
            else "the listing was cut"
        )
        reason = (
            f"holds {candidates:,} *.json files; only the first {examined:,} in name order "
            f"were read ({upto}{found:,} findings, {junk:,} skipped as not findings) "
            f"before {why}; the other {left:,} were not examined and not scored"
        )
        _problem(session, "findings/", "", reason, "too_large")


def _natural(name: str) -> list[str | int]:
    # sq2.json before sq10.json, as the pipeline numbers them. ASCII digits only: `²1`
    # is a name, not a number; the split alternates text and numbers, so keys compare.
    parts: list[str | int] = []
    for i, token in enumerate(re.split(r"([0-9]+)", name)):
        parts.append(int(token) if i % 2 else token)
    return parts


# A claim whose optional parts are broken is kept without them (the problems are listed):
# one bad vote must not make the claim, its citations and its id vanish.
_OPTIONAL_CLAIM_FIELDS = frozenset({"sourceIds", "quotes", "verification"})


_CLAIM_CLOCK = 256  # claims validated between two looks at the clock


def _load_finding(
    session: Session,
    rel: str,
    stem: str,
    data: Any,
    limits: LoadLimits = LoadLimits(),
    reader: SessionReader | None = None,
) -> None:
    if not isinstance(data, dict):
        reason = f"a finding must be a JSON object; found {describe(data)}"
        _problem(session, rel, "", reason, "wrong_type")
        return
    header = _validate(session, rel, "", FindingHeader, data)
    if header is None:
        # Keep the finding under what can be read of it: its sub-question still counts
        # for completeness even when its claims are unusable.
        raw_claims = data.get("claims")
        fields = {k: v for k, v in data.items() if k != "claims"}
        if not isinstance(fields.get("id"), str) or not fields["id"]:
            fields["id"] = stem
        if not isinstance(fields.get("subQuestion"), str):
            fields["subQuestion"] = ""
        claims_list = raw_claims if isinstance(raw_claims, list) else []
        header = FindingHeader.model_validate({**fields, "claims": claims_list})
    assert isinstance(header, FindingHeader)
    claims: list[Claim] = []
    room = limits.claims - sum(len(f.claims) for f in session.findings)
    stop = ""
    for index, raw in enumerate(header.claims):
        if index >= room:
            stop = f"the session's cap of {limits.claims:,} claims was reached"
        elif index % _CLAIM_CLOCK == 0 and reader is not None and reader.deadline.expired:
            stop = "the run's time limit was reached"
        if stop:
            reason = (
                f"holds {len(header.claims):,} claims; only the first {index:,} were loaded "
                f"before {stop}; the other {len(header.claims) - index:,} are not scored"
            )
            _problem(session, rel, "/claims", reason, "too_large")
            break
        claim = _load_claim(session, rel, index, raw)
        if claim is not None:
            claims.append(claim)
    extra = header.model_extra or {}
    finding = Finding.model_construct(
        id=header.id, subQuestion=header.subQuestion, claims=claims, **extra
    )
    if finding.id in session.finding_files:
        first = session.finding_files[finding.id]
        reason = f"finding id {finding.id!r} is also used by {first}; ids must be unique"
        _problem(session, rel, "/id", reason, "duplicate_finding_id")
    session.finding_files.setdefault(finding.id, rel)
    session.findings.append(finding)
    session.finding_paths.append(rel)


def _load_claim(session: Session, rel: str, index: int, raw: Any) -> Claim | None:
    claim, broken = _validate_fields(session, rel, f"/claims/{index}", Claim, raw)
    if claim is None and isinstance(raw, dict) and broken <= _OPTIONAL_CLAIM_FIELDS:
        trimmed = {k: v for k, v in raw.items() if k not in broken}
        try:
            claim = Claim.model_validate(trimmed)
        except ValidationError:
            claim = None
    if not isinstance(claim, Claim):
        return None
    session.claim_positions[id(claim)] = index
    return claim


def _load_sources(session: Session, reader: SessionReader, limits: LoadLimits) -> None:
    # An unusable sources.json leaves `sources` None, as if absent: the source set is
    # then read off the findings, rather than every citation being called dangling.
    rel = "sources.json"
    if not _present(reader, rel):
        return
    ok, data = _read_json(session, reader, rel, limits.file_bytes)
    if not ok:
        return
    if not isinstance(data, dict):
        reason = f'expected an object {{"sources": [...]}}; found {describe(data)}'
        _problem(session, rel, "", reason, "wrong_type")
        return
    if not isinstance(data.get("sources"), list):
        found = describe(data["sources"]) if "sources" in data else "nothing (field missing)"
        reason = f"expected an array of sources; found {found}"
        _problem(session, rel, "/sources", reason, "wrong_type")
        return
    sources: list[Source] = []
    seen: set[str] = set()
    session.listed_source_ids = {
        raw["id"]
        for raw in data["sources"]
        if isinstance(raw, dict) and isinstance(raw.get("id"), str)
    }
    for index, raw in enumerate(data["sources"]):
        source = _validate(session, rel, f"/sources/{index}", Source, raw)
        if not isinstance(source, Source):
            continue
        if source.id in seen:
            reason = f"source id {source.id!r} appears more than once; the first is used"
            _problem(session, rel, f"/sources/{index}/id", reason, "duplicate_source_id")
            continue
        seen.add(source.id)
        sources.append(source)
    session.sources = sources


def _load_answer(session: Session, reader: SessionReader) -> None:
    rel = "answer.md"
    try:
        entry = reader.stat(rel)
    except ConfinedError as exc:
        _problem(session, rel, "", f"cannot be read ({exc.reason})", "unreadable")
        return
    if entry is None or entry.kind == "dir":
        return
    if not entry.own:
        # Its size would tell whether a file outside the session exists, and how big.
        _refused(session, _not_own(rel, entry))
        return
    session.answer_bytes = entry.size


def _not_own(rel: str, entry: Entry) -> ConfinedError:
    if entry.kind == "symlink":
        return Refused(rel, "is a symbolic link", "symlink")
    if entry.kind == "file":
        return Refused(rel, HARDLINK_REASON.format(n=entry.nlink), "hardlink")
    return Refused(rel, f"is {kind_words(entry.kind)}, not a regular file; not read", "special")


def _load_trace(session: Session, reader: SessionReader, limits: LoadLimits) -> None:
    rel = "trace.jsonl"
    if not _present(reader, rel):
        return
    info = TraceInfo()
    session.trace = info
    read = number = 0
    try:
        with reader.open_file(rel) as handle:
            while True:
                # readline with a limit: one endless line must not be read whole.
                line = handle.readline(limits.trace_bytes - read + 1)
                if not line:
                    break
                number += 1
                read += len(line)
                if number > limits.trace_lines or read > limits.trace_bytes:
                    info.truncated = True
                    reason = (
                        f"longer than {limits.trace_lines:,} lines or "
                        f"{limits.trace_bytes:,} bytes; the rest was not read"
                    )
                    _problem(session, rel, "", reason, "too_large")
                    break
                if line.strip():
                    _trace_line(session, info, rel, number, line)
                if number % 1024 == 0 and reader.deadline.expired:
                    info.truncated = True
                    reason = f"read to line {number:,} only: the time limit was reached"
                    _problem(session, rel, "", reason, "too_large")
                    break
    except ConfinedError as exc:
        session.trace = None
        _refused(session, exc)
    except OSError as exc:
        _problem(session, rel, "", f"cannot be read ({exc.strerror})", "unreadable")


def _trace_line(session: Session, info: TraceInfo, rel: str, number: int, line: bytes) -> None:
    where = f"{rel}:{number}"
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:  # also an integer too long to convert
        _problem(session, where, "", f"not a JSON line ({str(exc)[:200]})", "invalid_json")
        return
    parsed = _validate(session, where, "", TraceLine, data)
    if isinstance(parsed, TraceLine):
        info.calls += 1
        info.failed += parsed.ok is False
        info.tools[parsed.tool] = info.tools.get(parsed.tool, 0) + 1


def _load_snapshots(session: Session, reader: SessionReader, limits: LoadLimits) -> None:
    """Which file is each source's snapshot, and whether it can become text.

    The rule (and every read) is :mod:`harness.session.snapshots`'; a snapshot that cannot become
    text, and a source with several snapshot files, are problems the session shows.
    """
    if not _folder(session, reader, "sources"):
        return  # absent, or refused (a link: reported)
    store = session.texts = SnapshotStore(session.dir, deadline=reader.deadline, reader=reader)
    selections = list(store.selections().items())
    for source_id, chosen in selections[: limits.snapshot_files]:
        document = store.document(source_id)
        if document is None:
            continue
        ambiguity = chosen.ambiguity()
        if ambiguity is not None:
            _problem(session, document.name, "", ambiguity, "ambiguous_snapshot")
        if document.problem is not None:
            reason = f"cannot become text: {document.problem}"
            _problem(session, document.name, "", reason, "snapshot_unreadable")
        session.snapshots[source_id] = session.dir / document.name
    for rel, why in store.refusals.items():
        code = "outside_session" if "outside the session" in why else "unreadable"
        _problem(session, rel, "", why, code)
    if len(selections) > limits.snapshot_files:
        reason = (
            f"has snapshots of {len(selections):,} sources; only the first "
            f"{limits.snapshot_files:,} (by id) are read"
        )
        _problem(session, "sources/", "", reason, "too_many_snapshots")


def _present(reader: SessionReader, rel: str) -> bool:
    """Has an entry of any kind (a dangling link too: reported, not taken as absent)."""
    try:
        return reader.stat(rel) is not None
    except ConfinedError:
        return True  # the read that follows reports why


def _cross_check(session: Session) -> None:
    seen: dict[str, str] = {}
    known = session.listed_source_ids
    for finding, rel in zip(session.findings, session.finding_paths, strict=True):
        for claim in finding.claims:
            base = session.claim_pointer(claim)
            if claim.id in seen:
                reason = (
                    f"claim id {claim.id!r} is also used in {seen[claim.id]}; ids must be unique"
                )
                _problem(session, rel, f"{base}/id", reason, "duplicate_claim_id")
            else:
                seen[claim.id] = rel
            if known is None:
                continue
            for j, sid in enumerate(claim.sourceIds):
                if sid not in known:
                    reason = f"cites source {sid!r}, which is not in sources.json"
                    _problem(session, rel, f"{base}/sourceIds/{j}", reason, "dangling_source")
            for j, quote in enumerate(claim.quotes):
                if quote.sourceId not in known:
                    reason = f"quotes source {quote.sourceId!r}, which is not in sources.json"
                    _problem(session, rel, f"{base}/quotes/{j}/sourceId", reason, "dangling_source")
