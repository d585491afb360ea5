"""The "up to date" rule: a finished judgment on identical inputs is not paid for twice.

After a run takes the session's lock it asks `decide` whether the judge.json in place was
written by a *completed* run (`.judge/run.json` says model-written or repaired, or the
no-findings fallback, which needs no model) on identical inputs, and is still exactly
the file that run wrote. If so, the run reports "up to date" without calling the model;
`--force` redoes it. A second run that waited on the lock therefore neither pays again
nor demotes the first run's fresh judgment, and `judge batch` resumes on this rule.

Identical inputs: the session digest (every file of the session but judge.json and
`.judge/`), the brief template's digest, the model and the judging options, i.e. every
`RunOptions` field except where output goes and how long to wait for the lock
(`record`, `transcript`, `lock_timeout`), the transport settings that cannot change a
completed judgment (`timeout`, `max_retries`) and the audit's requests in flight
(`cite_concurrency`: its report is the same at any concurrency). A replay file stands
in for a model, so it counts by its content's sha256, not by its path.

The completed run stores what it judged in run.json's `upToDate`:
`{"inputs": "sha256:…", "judgeSha256": "sha256:…"}`.

Nothing under the session is trusted unless this installation wrote it for this session:
run.json is read by its one reader (`harness.artifacts.read.read_run`) and counts only with
this installation's proof of origin (harness.fs.origin, a MAC over the whole record, the
digests it vouches for included) and only when it names this session's folder; a record
without one — edited or planted — or sealed for another session and copied here is
treated as absent, and the run says so once ("ignored a run record this installation did
not write", "ignored a run record written for another session"). The inputs cover
every file of the session and the audit's fetched-text cache (`.judge/sources/`); a
digest that could not cover everything (a cap, the time limit) is never "up to date".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.artifacts.read import read_run
from harness.artifacts.record import RunRecord, UpToDateStamp
from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.fs.confined import SessionReader
from harness.fs.files import open_regular
from harness.run.digests import input_digests
from harness.run.options import RunOptions

COMPLETED = ("model-written", "repaired")
NO_FINDINGS = "no-findings"  # the completed fallback's marker in `upToDate.complete`

# What does not change a completed judgment: where output goes, how long to wait, and
# the audit's requests in flight (RunOptions' fields whose `Flag` says not an input).
_NOT_INPUTS = RunOptions.not_inputs()


@dataclass(frozen=True, slots=True)
class UpToDate:
    """The judge.json in place is the one a completed run wrote on identical inputs."""

    record: RunRecord  # that run's run.json
    check: JudgeCheck  # judge.json, read and valid
    when: str  # when that run ended (ISO 8601)

    def note(self) -> str:
        return (
            f"up to date: judge.json was written by the run of {local_time(self.when)} on "
            "identical inputs; --force redoes it"
        )


def local_time(when: str) -> str:
    """An ISO 8601 instant as a person reads it: local time, to the second, with its zone
    (`2026-12-01 20:15:40 CET`); the text as it is when it is not such an instant."""
    try:
        instant = datetime.fromisoformat(when)
    except ValueError:
        return when
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=UTC)
    return instant.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z").rstrip()


def _file_digest(path: Path | None) -> str | None:
    if path is None:
        return None
    digest = hashlib.sha256()
    try:
        with open_regular(path) as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return f"unreadable:{path}"  # the run itself reports it; here it only must differ
    return "sha256:" + digest.hexdigest()


def inputs_digest(
    opts: RunOptions, session_digest: str, brief_digest: str, cache_digest: str = ""
) -> str:
    """One digest of everything that decides the judgment (see the module's docstring)."""
    options = opts.model_dump(mode="json", exclude=_NOT_INPUTS | {"replay", "cite_replay"})
    document = {
        "sessionDigest": session_digest,
        "cacheDigest": cache_digest,
        "briefDigest": brief_digest,
        "model": opts.model,
        "options": options,
        "replay": _file_digest(opts.replay),
        "citeReplay": _file_digest(opts.cite_replay),
    }
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def stamp(inputs: str, written: str | None, *, no_findings: bool = False) -> UpToDateStamp | None:
    """run.json's `upToDate` for a completed run: the inputs and the digest of the
    judge.json it left (None: it left none it could read)."""
    if written is None:
        return None
    return UpToDateStamp(
        inputs=inputs, judgeSha256=written, complete=NO_FINDINGS if no_findings else None
    )


def read_record(
    folder: Path, reader: SessionReader | None = None
) -> tuple[RunRecord | None, str | None]:
    """The last run's record if this installation wrote it for this session
    (`harness.artifacts.read.read_run`), and why not if one is there but cannot be used
    (an absent record is no problem)."""
    read = read_run(folder, reader)
    return read.value, None if read.absent else read.problem


def _completed(
    record: RunRecord | None, problem: str | None, judge: JudgeCheck
) -> tuple[RunRecord | None, str | None]:
    """The last run's record if it completed and `judge` (judge.json as read) is still the
    file it wrote, and why an artifact it needs was refused or unusable (`problem`: the
    record's; a plain mismatch is no problem)."""
    stamp_ = _reusable(record)
    if stamp_ is None:
        return None, problem
    if judge.sha256 is None or judge.sha256 != stamp_.judgeSha256:
        return None, judge.unread
    return record, None


def _reusable(record: RunRecord | None) -> UpToDateStamp | None:
    """`record`'s stamp when its run's judgment may be reused (completed, or the
    no-findings fallback): what is asked before judge.json is read or the session hashed."""
    if record is None or record.upToDate is None or record.outcome is None:
        return None
    kind = record.outcome.kind
    if kind in COMPLETED or (kind == "fallback" and record.upToDate.complete == NO_FINDINGS):
        return record.upToDate
    return None


def decide(
    record: RunRecord | None, problem: str | None, judge: JudgeCheck, inputs: str
) -> tuple[UpToDate | None, str | None]:
    """`UpToDate` if `record` (the last run's, as `read_record` gave it with `problem`)
    completed on `inputs` and `judge` (judge.json as read, once) is still its valid file;
    and when the judgment cannot be reused because an artifact it needs was refused or
    unusable, why (the run records it; a plain mismatch is no problem). Reads nothing."""
    completed, why = _completed(record, problem, judge)
    return _on_inputs(completed, judge, inputs, why)


def check_why(folder: Path, inputs: str) -> tuple[UpToDate | None, str | None]:
    """`decide` for `folder`: its run.json and judge.json each read once."""
    record, problem = read_record(folder)
    return decide(record, problem, check_session_judge(folder), inputs)


def _on_inputs(
    record: RunRecord | None, judge: JudgeCheck, inputs: str, problem: str | None = None
) -> tuple[UpToDate | None, str | None]:
    """`decide` for the record `_completed` gave: the same inputs, a valid judge.json."""
    if record is None or record.upToDate is None or record.upToDate.inputs != inputs:
        return None, problem
    if not judge.valid or judge.judgment is None:
        return None, None
    return UpToDate(record, judge, record.ended or record.started), None


def is_fresh(folder: Path, opts: RunOptions) -> bool:
    """Whether a run of `folder` with `opts` would find it up to date, asked without the
    lock (a planner's question, e.g. which sessions a batch's audit must cover; the run
    asks again under the lock). A session whose last run did not complete, or whose
    judge.json is not that run's, is not hashed: only the others pay for the digest."""
    from harness.contract.brief import render_for_session
    from harness.errors import JudgeError
    from harness.resources import DEFAULT_BRIEF

    folder = folder.resolve()
    previous, problem = read_record(folder)
    if _reusable(previous) is None:
        return False
    judge = check_session_judge(folder)
    record = _completed(previous, problem, judge)[0]
    if record is None:
        return False
    session_id = folder.name if opts.session_id is None else opts.session_id
    try:
        rendered = render_for_session(opts.brief or DEFAULT_BRIEF, session_id, folder, opts.cli)
    except JudgeError:
        return False
    digests = input_digests(folder)
    if digests is None:
        return False  # a cap or the time limit: never "unchanged"
    brief = "sha256:" + rendered.template_digest
    inputs = inputs_digest(opts, digests[0], brief, digests[1])
    return _on_inputs(record, judge, inputs)[0] is not None  # neither file read again


__all__ = [
    "UpToDate",
    "check_why",
    "decide",
    "inputs_digest",
    "is_fresh",
    "read_record",
    "stamp",
]
