"""Preparing a run: the session loaded, the brief rendered, the inputs digested and the
up-to-date rule asked; then the previous judge.json copied and citations.json set aside."""

from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass

from harness.artifacts.record import BriefInfo, RunRecord
from harness.contract.brief import render_for_session
from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.names import (
    CITATIONS_FILE,
    JUDGE_FILE,
    PREVIOUS_CITATIONS_FILE,
    PREVIOUS_JUDGE_FILE,
)
from harness.resources import DEFAULT_BRIEF
from harness.run import digests, uptodate
from harness.run.start import RunStart
from harness.session.loader import Session, load_session

# The session's files the loader reads whole, kept (up to this many bytes) for the digest:
# it names the bytes this run judged, not a second read of files that may have changed in
# between, and a session is read once. Past it, the digest reads the rest itself.
KEEP_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class Inputs:
    """What the run judges, read once."""

    session: Session
    system: str  # the brief, rendered for this session
    brief: BriefInfo
    digest: str  # the session's digest
    digest_cut: tuple[str, ...]
    inputs: str  # the up-to-date rule's digest of all of it; "" if it could not cover all
    previous: RunRecord | None  # the last run's record, if this installation wrote it
    before: JudgeCheck  # judge.json as it was: read once, for the up-to-date rule and aside
    refused: str | None  # why the last run's judgment cannot be reused, if it says why
    fresh: uptodate.UpToDate | None  # the judgment in place is up to date: nothing to do

    @property
    def has_claims(self) -> bool:
        return any(f.claims for f in self.session.findings)


def read_inputs(run: RunStart) -> Inputs:
    opts, folder, deadline = run.opts, run.folder, run.budget.deadline
    try:  # one reader of the session for all of it, each file read once (see KEEP_BYTES)
        reader: SessionReader | None = SessionReader(folder, deadline=deadline, keep=KEEP_BYTES)
    except ConfinedError:
        reader = None  # each read below opens its own, and says why it could not
    with reader or nullcontext():
        session = load_session(folder, opts.session_id, deadline=deadline, reader=reader)
        brief_path = opts.brief or DEFAULT_BRIEF
        rendered = render_for_session(brief_path, session.session_id, folder, opts.cli)
        digest, cache = digests.read_digests(folder, deadline, reader)
        previous, refused = uptodate.read_record(folder, reader)
        before = check_session_judge(folder, reader=reader)
    brief_digest = "sha256:" + rendered.template_digest
    inputs = ""  # a cap or the time limit: not "unchanged", and never reused later
    if digest.complete and cache.complete:
        inputs = uptodate.inputs_digest(opts, digest.value, brief_digest, cache.value)
    else:
        refused = (
            "the digest of the inputs did not cover everything ("
            + "; ".join([*digest.incomplete, *cache.incomplete][:3])
            + "), so no judgment is reused and this run's will not be"
        )
    fresh, problem = (
        (None, None)
        if run.callers.force or not inputs
        else uptodate.decide(previous, refused, before, inputs)
    )
    return Inputs(
        session=session,
        system=rendered.text,
        brief=BriefInfo(path=str(brief_path), digest=brief_digest, warnings=rendered.warnings()),
        digest=digest.value,
        digest_cut=tuple(digest.cut),
        inputs=inputs,
        previous=previous,
        before=before,
        refused=refused or problem,
        fresh=fresh,
    )


@dataclass(frozen=True, slots=True)
class SetAside:
    """The artifacts in place before this run wrote any."""

    before: JudgeCheck  # judge.json as it was
    had_file: bool  # a judge.json (of any kind) was there: now kept as previous-judge.json
    moved_citations: bool  # citations.json is now previous-citations.json
    # The sha256 of judge.json when a sealed record of this installation, written for this
    # session, says one of its runs wrote those bytes: only such a judgment is kept when
    # this run writes none (harness.run.outcome.fallback). None: nobody here vouches for it.
    vouched: str | None = None


def set_aside(run: RunStart, inputs: Inputs) -> SetAside:
    # judge.json as `read_inputs` read it, under this lock: never through a link (symbolic
    # or hard) planted as judge.json, so what it points at stays unread.
    before = inputs.before
    had_file = os.path.lexists(run.judge_path)
    if had_file:
        _keep_copy_of_previous(run)
    vouched = _vouched(before, inputs.previous) if before.valid else None
    return SetAside(before, had_file, _set_aside_citations(run), vouched)


def _vouched(before: JudgeCheck, previous: RunRecord | None) -> str | None:
    """judge.json's sha256 when `previous` (read by its one reader: sealed here, for this
    session) names a run of this installation that wrote, or kept, exactly the bytes
    `before` checked (one read: no window for a swap between the check and the digest)."""
    ref = previous.artifacts.judge if previous is not None and previous.artifacts else None
    if ref is None or ref.runId is None or ref.sha256 is None:
        return None
    return ref.sha256 if before.sha256 == ref.sha256 else None


def _keep_copy_of_previous(run: RunStart) -> None:
    # Nothing is lost: whatever judge.json was there is kept beside the record. Only
    # the session's own regular file is copied (not what a link, symbolic or hard,
    # leads to), and the copy replaces previous-judge.json rather than writing
    # through whatever may be there. A disk fault while copying (EIO, ENOSPC) ends
    # the run before anything could replace judge.json without its copy.
    try:
        run.artifacts.copy_from_session(JUDGE_FILE, PREVIOUS_JUDGE_FILE)
    except OSError as exc:
        exc.filename = str(run.artifacts / PREVIOUS_JUDGE_FILE)
        raise


def _set_aside_citations(run: RunStart) -> bool:
    """Move the previous citations.json aside (a rename: no space needed), so this
    run's audit never overwrites the audit of a judgment it may keep."""
    fd = run.artifacts.fd
    try:
        os.rename(CITATIONS_FILE, PREVIOUS_CITATIONS_FILE, src_dir_fd=fd, dst_dir_fd=fd)
    except FileNotFoundError:
        return False
    except OSError as exc:
        exc.filename = str(run.artifacts / CITATIONS_FILE)
        raise
    return True


__all__ = ["Inputs", "SetAside", "read_inputs", "set_aside"]
