"""One side of `judge compare`, read: a folder of judged sessions, or a results file.

The one place `judge compare` reads a side, through the artifacts' own readers
(`harness.artifacts.read.read_run` and `read_citations`: this installation's seal, and the
session the artifact was written for) and `harness.contract.judgment.check_judge_text`. A
session counts only when

- its `.judge/run.json` carries this installation's seal, was written for this session
  (the reader's rule) and names this session's current contents (`sessionDigest`);
- that run completed (model-written, repaired, the no-findings fallback, or up to date:
  a completed run on identical inputs), and
- the `judge.json` in place is the file that record vouches for (its sha256 against the
  record's `artifacts.judge` and `upToDate.judgeSha256`).

Its audit (`.judge/citations.json`) counts only sealed, in the report format, and of the
same run set (`runId` and sha256 against the record's `artifacts.citations`). Everything
left out is named with why; nothing is read from a file this installation did not seal.

A results file (`judge batch --results` / `--merge-results`, CSV or JSON Lines) is read
strictly: anything but the columns and values those commands write is a usage error naming
the file, the line and the fix.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from harness.artifacts.read import read_citations, read_run
from harness.artifacts.record import RunRecord
from harness.audit.report import CHECKS, VERDICTS, CitationReport
from harness.batch.table import COLUMNS, RESULT_FORMATS, csv_untext, result_format
from harness.compare.sides import Claims, ComparedSession, Judging, Score, SessionCost, Side
from harness.contract.judgment import check_session_judge
from harness.contract.rubric import DIMENSIONS, UNKNOWN
from harness.errors import UsageError
from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.digest import digest_session
from harness.fs.files import open_regular
from harness.fs.names import ARTIFACT_DIR, CITATIONS_REL, PAGE_FILE, RUN_REL
from harness.run.options import RunOptions
from harness.session.discover import discover, holds_session_files

CITATIONS = CITATIONS_REL
PAGE = f"{ARTIFACT_DIR}/{PAGE_FILE}"
COMPLETED = ("model-written", "repaired", "up-to-date")
MAX_QUESTION_BYTES = 16 * 1024
MAX_RESULTS_BYTES = 256 * 1024 * 1024
# Options that do not change a judgment (where output goes, waits, transport: RunOptions
# says which, for the up-to-date rule), the replay each session has, and what is compared on
# its own (models, brief).
NOT_JUDGING = frozenset(RunOptions.not_inputs()) | {
    "replay",
    "cite_replay",
    "replay_any",
    "session_id",
    "cli",
    "model",
    "cite_model",
    "brief",
}


def read_side(path: Path) -> Side:
    """A folder of judged sessions, or a results file, as one side."""
    path = Path(path).expanduser()
    neither = f"{path} is neither a folder of judged sessions nor a results file"
    fix = "pass a folder `judge batch` judged, or a file `judge batch --results` wrote"
    if path.is_dir():
        return read_root(path)
    if path.is_file():
        if path.suffix.lower() not in RESULT_FORMATS:
            ends = ", ".join(RESULT_FORMATS)
            raise UsageError(f"{neither} (the extension of a results file is one of {ends}); {fix}")
        return read_results(path)
    if not os.path.lexists(path):
        raise UsageError(f"{path} does not exist; {fix}")
    raise UsageError(f"{neither}; {fix}")


# -- a folder of sessions ------------------------------------------------------------------


def read_root(root: Path) -> Side:
    root = Path(root).expanduser().resolve()
    side = Side(str(root), "root")
    folders = discover(root)
    if not folders and holds_session_files(root):
        side.hint = "it is one session's folder itself: point at the folder that holds it"
    for folder in folders:
        session, audit = read_session(folder)
        if isinstance(session, str):
            side.left_out.append((folder.name, session))
        else:
            side.sessions[session.id] = session
            if audit is not None:
                side.audits_left_out.append((folder.name, audit))
    return side


def read_session(folder: Path) -> tuple[ComparedSession | str, str | None]:
    """The session as its sealed artifacts tell it, or why it is left out; and why its
    audit is left out, when it is."""
    session = _session(folder)
    if isinstance(session, str):
        return session, None
    return session[0], session[1]


def _session(folder: Path) -> tuple[ComparedSession, str | None] | str:
    read = read_run(folder)
    record = read.value
    if record is None:
        return read.said("judge it again") or (
            f"no {RUN_REL}: not judged by this installation; run `judge batch` on it"
        )
    why = _not_this_session(folder, record)
    if why is not None:
        return why
    kind = record.outcome.kind if record.outcome is not None else "interrupted"
    no_findings = record.upToDate is not None and record.upToDate.complete == "no-findings"
    if kind not in COMPLETED and not (kind == "fallback" and no_findings):
        return f"its last run ended `{kind}`: no judgment of a completed run to compare"
    check = check_session_judge(folder)
    question = _question(folder)
    sha = check.sha256
    if sha is None:
        return "judge.json is missing or unreadable"
    vouched = [record.artifacts.judge.sha256] if record.artifacts and record.artifacts.judge else []
    if record.upToDate is not None:
        vouched.append(record.upToDate.judgeSha256)
    if not vouched or any(v != sha for v in vouched):
        return (
            "judge.json is not the file its sealed run record vouches for (changed, replaced "
            "or copied since); judge it again"
        )
    if check.judgment is None:
        return "judge.json is not valid (judge validate says why)"
    report = _report(folder, record)
    audit_note = report if isinstance(report, str) else None
    if report is None and record.citations is not None and record.citations.skipped:
        audit_note = "no audit ran (--no-cite)"
    session = ComparedSession(
        id=folder.name,
        question=question,
        scores=dict(check.judgment.scores.model_dump()),
        claims=None if report is None or isinstance(report, str) else _claims(report),
        cost=_cost(record),
        judging=_judging(record),
        samples=tuple(dict(s.scores) for s in record.samples.made) if record.samples else (),
        page=str(folder / PAGE),
    )
    return session, audit_note


def _not_this_session(folder: Path, record: RunRecord) -> str | None:
    """Why the sealed record does not describe this session as it is now (the reader has
    checked that it was written for this session): an interrupted run's, or the session's
    contents changed since it was judged (a root moved or mounted elsewhere keeps its
    records, as every reader of run.json does)."""
    if record.sessionDigest is None:
        return f"{ARTIFACT_DIR}/run.json is of a run interrupted before it read the session"
    now = digest_session(folder, skip=(ARTIFACT_DIR,))
    if now.value != record.sessionDigest:
        return (
            f"{ARTIFACT_DIR}/run.json was written for other session contents (its "
            "sessionDigest is not this session's: copied from another session, or the "
            "session changed since); judge it again"
        )
    return None


def _question(folder: Path) -> str | None:
    """The session's question: the first line of answer.md when it is a Markdown heading
    (None otherwise, or when answer.md cannot be read)."""
    try:
        with SessionReader(folder) as reader:
            answer = reader.read_bytes("answer.md", MAX_QUESTION_BYTES).data
    except ConfinedError:
        return None
    return question_of(answer.decode("utf-8", errors="replace"))


def question_of(answer: str) -> str | None:
    """The question a session answers: answer.md's first non-blank line when it is a
    Markdown heading, without its `#`s, spaces folded; None otherwise."""
    for line in answer.splitlines():
        if not line.strip():
            continue
        text = line.strip()
        if not text.startswith("#"):
            return None
        words = text.lstrip("#").split()
        return " ".join(words) or None
    return None


def _claims(report: CitationReport) -> Claims:
    """Claims per verdict, and claims with each deterministic problem."""
    verdicts: dict[str, int] = dict.fromkeys(VERDICTS, 0)
    problems: dict[str, int] = dict.fromkeys(CHECKS, 0)
    for claim in report.claims:
        verdicts[claim.verdict] += 1
        for check in {p.check for p in claim.problems}:
            problems[check] += 1
    return Claims(verdicts, problems)


def _report(folder: Path, record: RunRecord) -> CitationReport | str | None:
    """The sealed citation report of the record's set, or why not (None: no audit ran)."""
    if record.citations is not None and record.citations.skipped:
        return None
    fix = "run `judge run` on it"
    read = read_citations(folder)
    if read.value is None:
        return read.said(fix) or f"no {CITATIONS}; {fix}"
    report = read.value.report
    ref = record.artifacts.citations if record.artifacts else None
    if ref is None or ref.runId is None or report.runId != ref.runId:
        return f"{CITATIONS} is not of the run set its run record names; {fix}"
    if ref.sha256 is not None and ref.sha256 != read.value.sha256:
        return f"{CITATIONS} is not the file its run record vouches for; {fix}"
    return report


def _cost(record: RunRecord) -> SessionCost:
    audit = record.citations
    judge = record.usage
    use = audit.usage if audit is not None else None
    tokens = {
        "input": (judge.input_tokens if judge else 0) + (use.input_tokens if use else 0),
        "output": (judge.output_tokens if judge else 0) + (use.output_tokens if use else 0),
        "cacheWrite": (judge.cache_creation_input_tokens if judge else 0)
        + (use.cache_creation_input_tokens if use else 0),
        "cacheRead": (judge.cache_read_input_tokens if judge else 0)
        + (use.cache_read_input_tokens if use else 0),
    }
    requests = record.turns + (audit.requests if audit is not None else 0)
    channels = None
    if record.channels is not None:
        both = (record.channels.judge, record.channels.audit)
        channels = {
            "batchRequests": sum(c.batch.requests for c in both),
            "batchTokens": sum(c.batch.tokens for c in both),
            "ordinaryRequests": sum(c.ordinary.requests for c in both),
            "ordinaryTokens": sum(c.ordinary.tokens for c in both),
        }
    return SessionCost(requests, tokens, record.seconds, channels)


def _judging(record: RunRecord) -> Judging:
    options = {k: v for k, v in sorted(record.options.items()) if k not in NOT_JUDGING}
    audit = record.citations
    return Judging(
        model=record.model,
        auditModel=audit.model if audit is not None and not audit.skipped else None,
        brief=record.brief.digest if record.brief is not None else None,
        options=json.dumps(options, sort_keys=True, separators=(",", ":"), default=str),
        recordVersion=record.version,
        rubricVersion=record.rubricVersion,
        harnessVersion=record.harnessVersion,
    )


# -- a results file --------------------------------------------------------------------------

RESULTS_FIX = (
    "a results file is exactly what `judge batch --results FILE` or `--merge-results FILE` "
    "writes; write it again with that command"
)
COUNTED = ("supported", "uncertain", "unsupported")  # the verdict columns a results file has


def _bad(path: Path, line: int, what: str) -> UsageError:
    return UsageError(f"{path}:{line}: {what}; {RESULTS_FIX}", path=str(path), line=line)


def read_results(path: Path) -> Side:
    kind = result_format(path, "results file")
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_RESULTS_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read the results file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_RESULTS_BYTES:
        raise _bad(path, 0, f"larger than {MAX_RESULTS_BYTES:,} bytes")
    try:
        # A spreadsheet saving the file again may put a byte-order mark first: not a cell.
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise _bad(path, text_line(data, exc.start), "bytes that are not UTF-8") from None
    rows = _csv_rows(path, text) if kind == "csv" else _jsonl_rows(path, text)
    side = Side(str(Path(path).expanduser().resolve()), "results")
    for line, row in rows:
        name = row["session"]
        if name in side.sessions or any(n == name for n, _ in side.left_out):
            raise _bad(path, line, f"session {name!r} is named twice")
        if row["outcome"] not in COMPLETED:
            side.left_out.append((name, f"its run ended `{row['outcome']}` (results file)"))
            continue
        scores = {d: row[d] for d in DIMENSIONS if row[d] is not None}
        if len(scores) != len(DIMENSIONS):
            side.left_out.append((name, "the results file has no judgment for it"))
            continue
        counts = [row[v] for v in COUNTED]
        claims = (
            Claims({v: row[v] for v in COUNTED}, None)
            if all(isinstance(c, int) for c in counts)
            else None
        )
        side.sessions[name] = ComparedSession(name, None, scores, claims)
    return side


def text_line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        header = next(reader, None)
        if header != COLUMNS:
            raise _bad(path, 1, f"the header must be exactly {','.join(COLUMNS)}")
        for cells in reader:
            line = reader.line_num
            if len(cells) != len(COLUMNS):
                raise _bad(path, line, f"{len(cells)} cells, not {len(COLUMNS)}")
            raw = dict(zip(COLUMNS, cells, strict=True))
            out.append((line, _csv_row(path, line, raw)))
    except csv.Error as exc:
        raise _bad(path, reader.line_num, f"not CSV ({exc})") from None
    return out


def _int_cell(path: Path, line: int, column: str, cell: str, top: int | None) -> int | None:
    if cell == "":
        return None
    if not (cell.isascii() and cell.isdigit()) or (top is not None and int(cell) > top):
        want = f"an integer 0 to {top}" if top is not None else "a non-negative integer"
        raise _bad(path, line, f"column {column}: {cell[:40]!r} is not {want} or empty")
    return int(cell)


def _csv_row(path: Path, line: int, raw: dict[str, str]) -> dict[str, Any]:
    row: dict[str, Any] = {"session": csv_untext(raw["session"]), "outcome": raw["outcome"]}
    for dim in DIMENSIONS:
        cell = raw[dim]
        row[dim] = UNKNOWN if cell == UNKNOWN else _int_cell(path, line, dim, cell, 5)
    row["unknowns"] = _int_cell(path, line, "unknowns", raw["unknowns"], len(DIMENSIONS))
    for verdict in COUNTED:
        row[verdict] = _int_cell(path, line, verdict, raw[verdict], None)
    if raw["disagrees"] not in ("", "yes", "no"):
        raise _bad(
            path, line, f"column disagrees: {raw['disagrees'][:40]!r} is not yes, no or empty"
        )
    return _checked(path, line, row)


def _jsonl_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            raise _bad(path, number, "not one JSON object") from None
        if not isinstance(row, dict) or list(row) != COLUMNS:
            raise _bad(path, number, f"an object with exactly the keys {', '.join(COLUMNS)}")
        for dim in DIMENSIONS:
            value = row[dim]
            if value is not None and value != UNKNOWN and not _small_int(value, 5):
                raise _bad(path, number, f'{dim}: not an integer 0 to 5, "Unknown" or null')
        if row["unknowns"] is not None and not _small_int(row["unknowns"], len(DIMENSIONS)):
            raise _bad(path, number, "unknowns: not an integer 0 to 5 or null")
        for verdict in COUNTED:
            if row[verdict] is not None and not _small_int(row[verdict], None):
                raise _bad(path, number, f"{verdict}: not a non-negative integer or null")
        if row["disagrees"] is not None and not isinstance(row["disagrees"], bool):
            raise _bad(path, number, "disagrees: not true, false or null")
        if not isinstance(row["session"], str) or not isinstance(row["outcome"], str):
            raise _bad(path, number, "session and outcome must be text")
        out.append((number, _checked(path, number, row)))
    return out


def _small_int(value: object, top: int | None) -> bool:
    return (
        type(value) is int and value >= 0 and (top is None or value <= top)  # not bool
    )


def _checked(path: Path, line: int, row: dict[str, Any]) -> dict[str, Any]:
    """What both formats must hold: a session name, an outcome word, and `unknowns` equal
    to the number of Unknown scores when there is a judgment."""
    name = row["session"]
    if not name or name in (".", "..") or "/" in name or os.sep in name:
        raise _bad(path, line, "session: not the name of a session folder")
    outcome = row["outcome"]
    if not outcome or not all(c.islower() or c == "-" for c in outcome):
        raise _bad(path, line, "outcome: not an outcome word (model-written, up-to-date, …)")
    scores: list[Score | None] = [row[d] for d in DIMENSIONS]
    if all(s is not None for s in scores):
        unknown = sum(1 for s in scores if s == UNKNOWN)
        if row["unknowns"] != unknown:
            raise _bad(
                path, line, f"unknowns is {row['unknowns']}, but {unknown} score(s) are Unknown"
            )
    elif any(s is not None for s in scores):
        raise _bad(path, line, "some scores are empty and others are not")
    return row


__all__ = ["question_of", "read_results", "read_root", "read_session", "read_side"]
