"""`judge batch ROOT --merge-results FILE`: the results of every session under ROOT, in one
table, whichever process (shard, machine, earlier batch) judged it.

Nothing is judged and nothing is sent. Each session's result is read from the session
itself, the one place every shard writes to: its `judge.json` (checked as `judge validate`
checks it) and `.judge/run.json` (the run's record), both through the session's confined
reader (no link followed, byte caps). The record is read by its one reader
(`harness.artifacts.read.read_run`, the up-to-date rule's): only under this installation's
seal (`harness.fs.origin`; every shard and the merge share one key, `JUDGE_KEY_FILE`) and
only if it was written for this session, so one that came with the session, or was copied
from another, is named, never used. A session with no run.json is named as
not judged yet (`not-judged`). The rows are those of a batch's `--results` (CSV or JSON
Lines by extension); `judge batch --merge-results` (harness.cli.batch) prints one JSON
line per session to stdout and the table to stderr; the exit code is 0 when every
session has a valid judge.json, 1 otherwise.
"""

from __future__ import annotations

from pathlib import Path

from harness.artifacts.read import read_run
from harness.artifacts.record import RunRecord
from harness.batch.discover import discover
from harness.batch.result import FAILED_OUTCOMES, BatchResult, SessionResult
from harness.batch.shard import parse_shard
from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.errors import EXIT_FAILED, EXIT_OK
from harness.fs.digest import digest_session
from harness.fs.names import ARTIFACT_DIR


def _stale(folder: Path, record: RunRecord, judge: JudgeCheck) -> str | None:
    """Why the record no longer describes the session as it is now, or None: the
    judge.json in place (`judge`, as read) is not the one the run left, or the session's
    own files changed since (their digest against the record's `sessionDigest`, when both
    are whole)."""
    if record.upToDate is not None:
        now = judge.sha256
        if now is not None and now != record.upToDate.judgeSha256:
            return "judge.json is not the one its run left (changed or replaced since)"
    if record.sessionDigest and not record.sessionDigestCut:
        digest = digest_session(folder, skip=(ARTIFACT_DIR,))
        if digest.complete and digest.value != record.sessionDigest:
            return "the session's files changed since its run judged them"
    return None


def merged_result(folder: Path) -> SessionResult:
    """One session's result as its files tell it."""
    read = read_run(folder)  # the up-to-date rule's reader: sealed, this session's only
    record, problem = read.value, None if read.absent else read.problem
    check = check_session_judge(folder)
    judgment = check.judgment if check.valid else None
    if record is None:
        note = problem or "not judged yet: no .judge/run.json (its shard has not judged it)"
        outcome = "not-judged" if problem is None else "error"
        if judgment is not None:
            note += "; a judge.json is there, but no run of this harness recorded it"
        return SessionResult(folder.name, folder, outcome, False, note, False, EXIT_FAILED)
    kind: str = record.outcome.kind if record.outcome is not None else "interrupted"
    note = record.receipt.note if record.receipt is not None else ""
    ok = judgment is not None and kind not in FAILED_OUTCOMES and kind != "interrupted"
    if judgment is None:
        note = f"{note}; judge.json is missing or invalid now".lstrip("; ")
    elif (why := _stale(folder, record, check)) is not None:
        # Not the judgment its run left: named, and its scores enter no row or mean.
        kind, ok, judgment = "stale", False, None
        note = f"{why}; judge it again (its last run: {note})"
    return SessionResult(
        folder.name,
        folder,
        kind,
        record.receipt.wroteJudge if record.receipt is not None else False,
        note,
        False,
        EXIT_OK if ok else EXIT_FAILED,
        judgment,
        record,
        record.seconds or 0.0,
        halted=record.outcome.halted if record.outcome is not None else None,
    )


def merge_results(
    root: Path, names: list[str] | None = None, shard: str | None = None
) -> BatchResult:
    """Every session's result under `root` (or only `names`, or one `shard`'s)."""
    folders = discover(root, names)
    if shard is not None:
        mine = parse_shard(shard)
        folders = [f for f in folders if mine.holds(f.name)]
    results = [merged_result(f) for f in folders]
    requests = sum(
        (r.record.citations.requests if r.record and r.record.citations else 0)
        + (r.record.turns if r.record else 0)
        for r in results
    )
    tokens = sum(
        r.record.usage.total_tokens if r.record is not None and r.record.usage else 0
        for r in results
    )
    return BatchResult(Path(root).expanduser().resolve(), results, 0.0, requests, tokens)


__all__ = ["merge_results", "merged_result"]
