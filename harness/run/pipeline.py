"""`judge run` as one library call: `judge_session(path, **options)`.

load → (citation audit) → render brief → agent loop → final check → receipt.
Whatever happens, at the end judge.json is valid or absent, the session's own
files are untouched, and the receipt says what happened.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import ValidationError

from harness import config, redact
from harness.agent import fetch as fetchers
from harness.agent.opening import first_message
from harness.audit.record import ApiFault, Channels
from harness.contract.brief import render_for_session
from harness.contract.judgment import (
    JudgeCheck,
    Judgment,
    check_session_judge,
    fallback_judgment,
    score_text,
    write_judgment_atomic,
)
from harness.contract.rubric import RUBRIC_VERSION
from harness.errors import (
    EXIT_FAILED,
    EXIT_OK,
    JudgeError,
    UsageError,
    WriteError,
)
from harness.events import OnEvent, ShouldStop, emit
from harness.fs.artifacts import ArtifactDir, NotWritable
from harness.fs.confined import ConfinedError, Deadline, SessionReader
from harness.fs.digest import digest_cache
from harness.fs.origin import sealed_artifact
from harness.interrupt import Interrupted, within
from harness.model import deadline as run_time
from harness.resources import DEFAULT_BRIEF
from harness.run import uptodate
from harness.run.digests import read_digests
from harness.run.options import RunOptions
from harness.run.record import (
    ArtifactRef,
    ArtifactSet,
    BriefInfo,
    Interruption,
    Outcome,
    OutcomeKind,
    PreviousJudge,
    Receipt,
    RefusedWrite,
    RunChannels,
    RunRecord,
    SessionSummary,
    TimeShare,
    TimeShares,
    TokenTotals,
    ToolCallRecord,
    Writes,
)
from harness.session.discover import not_a_session
from harness.session.loader import ARTIFACT_DIR, Session, load_session

RUN_FILE = "run.json"
CITATIONS_FILE = "citations.json"  # harness.audit.CITATIONS_FILE, without importing the audit
PREVIOUS_CITATIONS = "previous-citations.json"
# A fault of the disk ends the run with its receipt, never an internal error.
DISK_FAULTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EIO: "the disk reported an I/O error",
    errno.EROFS: "the file system is read-only",
}

if TYPE_CHECKING:
    from harness.audit import RunAudit
    from harness.model.client import BuiltClient


@runtime_checkable
class ChannelledTurns(Protocol):
    """A judge client that knows the channel of each turn it answered (the `judge batch
    --batch-api` lockstep client, harness.batch.lockstep): run.json's `channels.judge`."""

    def channel_use(self) -> Channels | None: ...


@dataclass(slots=True)
class RunResult:
    receipt: Receipt
    exit_code: int
    outcome: OutcomeKind
    reason: str
    # Read them as attributes; a repr stays one short line (the record is the whole run).
    judgment: Judgment | None = field(default=None, repr=False)
    record: RunRecord | None = field(default=None, repr=False)
    record_path: Path | None = None


def judge_session(
    path: str | Path,
    *,
    client: Any = None,
    cite_client: Any = None,
    force: bool = False,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    cite_pool: Any = None,
    **options: Any,
) -> RunResult:
    """Run the whole audit on one session folder. Never raises for model behaviour;
    raises `JudgeError` subclasses only for usage/configuration faults.

    `client` replaces the Anthropic client (an object with `.messages.create`),
    for tests and for callers that build their own; `cite_client` (a `CiteClient`)
    answers the citation audit. With `client` but no `cite_client` the audit runs offline.
    Without `force`, a judge.json that a completed run wrote on identical inputs is
    reported up to date and no model is called (harness.run.uptodate). `progress` is told
    what the run does and `stop` may end it early (harness.events); `cite_pool` (a
    `harness.cite.CitePool`) is a limit on audit requests in flight shared with other runs.
    """
    try:
        opts = RunOptions(**options)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"invalid run options: {problems}") from exc
    # A max_tokens above the model's output limit is refused by the API: refused here first.
    too_many = config.run_limit_refusal(
        opts.model, opts.max_output_tokens, opts.cite_model if opts.cite else None
    )
    if too_many is not None:
        raise UsageError(too_many)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UsageError(f"session folder {folder} does not exist or is not a folder")
    folder = folder.resolve()
    not_session = not_a_session(folder)
    if not_session is not None:
        raise UsageError(not_session)  # exit 2, and nothing is written into the folder
    try:
        # Opened once, by descriptor and without following links: a `.judge` swapped for
        # a link later cannot send the lock, run.json or the copies anywhere else.
        artifacts = ArtifactDir(folder, ARTIFACT_DIR)
    except NotWritable as exc:
        reason = exc.message
        return RunResult(Receipt(wroteJudge=False, note=reason), EXIT_FAILED, "not-written", reason)
    # The run's time starts before the wait for another run's lock: --max-seconds bounds
    # the wait too, and what the wait took is not given again to the audit or the judge.
    started = time.monotonic()
    with artifacts, contextlib.ExitStack() as held:
        try:
            wait, option = (
                (opts.max_seconds, "--max-seconds (the run's time)")
                if opts.max_seconds < opts.lock_timeout
                else (opts.lock_timeout, "--lock-timeout")
            )
            held.enter_context(artifacts.lock(wait, raise_what=option))
        except Interrupted as exc:
            return _interrupted_waiting(exc)
        run = _Run(folder, artifacts, opts, client, cite_client, clock=started)
        run.force, run.progress, run.stop, run.cite_pool = force, progress, stop, cite_pool
        try:
            return run.execute()
        except Interrupted as exc:
            return run.interrupted(exc)
        except OSError as exc:
            if exc.errno not in DISK_FAULTS:
                raise
            return run.disk_fault(exc)
        except Exception as exc:  # a signal inside a lazy import comes out wrapped
            signalled = within(exc)
            if signalled is None:
                raise
            return run.interrupted(signalled)
        finally:
            run.close()


def _interrupted_waiting(exc: Interrupted) -> RunResult:
    """A signal while waiting for another run's lock: nothing of this run was started, and
    run.json is the lock holder's, so nothing is written; the receipt says so."""
    note = (
        f"{exc} while waiting for the lock held by another run; no run.json written (it "
        "belongs to that run) and judge.json is unchanged"
    )
    return RunResult(Receipt(wroteJudge=False, note=note), exc.exit_code, "interrupted", note)


class _Run:
    def __init__(
        self,
        folder: Path,
        artifacts: ArtifactDir,
        opts: RunOptions,
        client: Any,
        cite_client: Any = None,
        clock: float | None = None,
    ) -> None:
        self.client = client
        self.cite_client = cite_client
        self.audit: RunAudit | None = None  # once the audit has run
        self.folder = folder
        self.artifacts = artifacts
        self.opts = opts
        self.judge_path = folder / "judge.json"
        self.started = datetime.now(UTC)
        # In every artifact of this run: a reader never pairs artifacts of two runs.
        self.run_id = f"{self.started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"
        self.previous: RunRecord | None = None  # the last run's record, if ours
        self.moved_citations = False  # the previous citations.json set aside by this run
        self.write_problems: list[str] = []  # artifacts that could not be written
        now = time.monotonic()
        self.clock = now if clock is None else clock  # when the run's time began
        # Every phase before the model (loading, listing, hashing) sits under the run's time.
        self.deadline = Deadline(at=self.clock + opts.max_seconds)
        # --max-seconds bounds the whole run: the audit gets a share of it, the judge the
        # rest, and writing the outcome keeps a reserve (`time_shares`).
        self.reserve = min(
            config.WRITE_RESERVE_SECONDS, config.WRITE_RESERVE_SHARE * opts.max_seconds
        )
        self.time = TimeShares(
            maxSeconds=opts.max_seconds,
            rule=(
                f"the audit gets at most {config.AUDIT_TIME_SHARE:.0%} of the time left when "
                "it starts, the judge the rest, and writing keeps the reserve"
            ),
            beforeAudit=0.0,
            lockWait=round(now - self.clock, 3),
            reserve=round(self.reserve, 3),
        )
        self.owned_fds: list[SessionReader] = []  # readers this run opened
        self.record: RunRecord | None = None
        redact.register_client(client)  # a caller's client may hold a key of its own
        self.owned: list[Any] = []  # clients this run built, closed when it ends
        self.force = False
        self.progress: OnEvent | None = None
        self.stop: ShouldStop | None = None
        self.cite_pool: Any = None
        self.inputs = ""  # harness.run.uptodate.inputs_digest of this run
        self.no_findings = False
        self.tools: Any = None  # the agent's ToolBox once the loop starts
        self.sampled: list[Any] = []  # --samples K: the loop results of samples 2..K
        self.chosen: JudgeCheck | None = None  # the sample put in judge.json
        self.samples_moved: str | None = None  # what was planted where the samples go
        self.api_fault: ApiFault | None = None  # why the model API gave no usable reply

    def execute(self) -> RunResult:
        opts = self.opts
        session = load_session(self.folder, opts.session_id, deadline=self.deadline)
        brief_path = opts.brief or DEFAULT_BRIEF
        rendered = render_for_session(brief_path, session.session_id, self.folder, opts.cli)
        digest, cache = read_digests(self.folder, self.deadline)
        brief_digest = "sha256:" + rendered.template_digest
        self.previous, refused = uptodate.read_record(self.folder)
        if digest.complete and cache.complete:
            self.inputs = uptodate.inputs_digest(opts, digest.value, brief_digest, cache.value)
        else:  # a cap or the time limit: not "unchanged", and never reused later
            self.inputs = ""
            refused = (
                "the digest of the inputs did not cover everything ("
                + "; ".join([*digest.incomplete, *cache.incomplete][:3])
                + "), so no judgment is reused and this run's will not be"
            )
        fresh, problem = (
            (None, None)
            if self.force or not self.inputs
            else uptodate.check_why(self.folder, self.inputs)
        )
        refused = refused or problem
        if fresh is not None:  # nothing is written: run.json stays the completed run's
            note = fresh.note()
            result = RunResult(Receipt(wroteJudge=False, note=note), EXIT_OK, "up-to-date", note)
            result.judgment, result.record = fresh.check.judgment, fresh.record
            return result
        before = self._check_judge()
        had_file = os.path.lexists(self.judge_path)
        if had_file:
            self._keep_copy_of_previous()
        self._set_aside_citations()
        self.record = RunRecord(
            rubricVersion=RUBRIC_VERSION,
            sessionId=session.session_id,
            sessionDir=str(self.folder),
            sessionDigest=digest.value,
            sessionDigestCut=digest.cut,
            brief=BriefInfo(
                path=str(brief_path),
                digest="sha256:" + rendered.template_digest,
                warnings=rendered.warnings(),
            ),
            model=opts.model,
            options=opts.model_dump(mode="json", exclude={"replay", "record", "transcript"}),
            replay=str(opts.replay) if opts.replay else None,
            started=self.started.isoformat(),
            sessionSummary=SessionSummary(**session.summary()),
            previousJudge=PreviousJudge(present=had_file, valid=before.valid),
            upToDateRefused=refused,
        )

        if not any(f.claims for f in session.findings):
            reason = (
                "no findings to score: the findings are absent or empty, so every dimension "
                "is Unknown (escalation rule); no model was called"
            )
            # Nothing has touched judge.json since `before` was read.
            self.no_findings = True
            return self._fallback(reason, before, current=before)

        # The judge's client first: a missing key is a configuration error (exit 2)
        # that should not wait for the audit's model calls.
        built = self._judge_client()
        first = first_message(session, self.opts.cli, self._cite(session, self.record))
        return self._agent(built, session, rendered.text, first, before)

    # -- pieces -------------------------------------------------------------

    def _cite(self, session: Session, record: RunRecord) -> str | None:
        """The citation audit (never blocks the run, except a ReplayError); its summary."""
        from harness.audit.record import AuditRecord

        if not self.opts.cite:
            record.citations = AuditRecord(skipped="--no-cite")
            return None
        from harness.audit import audit_for_run  # the engine and its models: only when auditing

        emit(self.progress, {"event": "phase", "phase": "audit"})
        now = time.monotonic()
        self.time.beforeAudit = round(now - self.clock, 3)
        share = max(0.0, self._left(now) * config.AUDIT_TIME_SHARE)
        self.time.audit = TimeShare(allowed=round(share, 3), used=0.0)
        # The audit's own limit is its share (its requests end by it, in flight or not).
        audit_opts = self.opts.model_copy(update={"max_seconds": max(share, 0.001)})
        with run_time.until(now + share, "the audit's share of the run's time"):
            self.audit = audit_for_run(
                session,
                self.artifacts,
                audit_opts,
                cite_client=self.cite_client,
                judge_client_given=self.client is not None,
                pool=self.cite_pool,
                progress=self.progress,
                stop=self.stop,
                session_digest=record.sessionDigest,
                live_fetch=fetchers.live_fetcher if self.opts.audit_fetch == "live" else None,
                run_id=self.run_id,
            )
        self.time.audit.used = round(time.monotonic() - now, 3)
        record.citations = self.audit.record
        return self.audit.summary

    def _left(self, now: float) -> float:
        """Seconds the audit and the judge may still use: the run's, less the reserve."""
        assert self.deadline.at is not None
        return self.deadline.at - self.reserve - now

    def _time_text(self, judge_seconds: float) -> str:
        """The judge's time limit in words: how the run's time was shared."""
        opts, audit = self.opts, self.time.audit
        parts = [f"{opts.max_seconds:g} s for the whole run"]
        if audit is not None:
            parts.append(f"the audit used {audit.used:.1f} s of its {audit.allowed:.1f} s share")
        parts.append(f"the judge had {max(judge_seconds, 0.0):.1f} s")
        parts.append(f"{self.reserve:.1f} s kept for writing")
        return ", ".join(parts)

    def _judge_client(self) -> BuiltClient:
        from harness.model.client import BuiltClient, ClientSettings, build_client

        opts = self.opts
        if self.client is not None:
            return BuiltClient(self.client)
        from harness.model.replay import check_binding, replay_meta

        record = self.record  # the full record: the inputs are read before a client is built
        assert record is not None and record.sessionDigest is not None and record.brief is not None
        bound = replay_meta(record.sessionDigest, record.brief.digest, opts.model)
        if opts.replay is not None and not opts.replay_any:
            check_binding(opts.replay, bound)  # another session's replay: a loud exit 1
        settings = ClientSettings(
            timeout=opts.timeout,
            max_retries=opts.max_retries,
            replay=opts.replay,
            record=opts.record,
            record_meta=bound,
        )
        built = build_client(settings)
        self.owned.append(built.client)
        return built

    def _agent(
        self, built: BuiltClient, session: Session, system: str, first: str, before: JudgeCheck
    ) -> RunResult:
        from harness.agent.loop import LoopLimits, run_loop
        from harness.agent.tools import ToolBox
        from harness.model.messages import AnthropicModel

        opts = self.opts
        reader: SessionReader | None = None  # one for every Read of this run
        with contextlib.suppress(ConfinedError):  # unopenable now: each Read opens its own
            reader = SessionReader(self.folder)
            self.owned_fds.append(reader)

        def new_tools() -> ToolBox:
            return ToolBox(
                session_dir=self.folder,
                session_id=session.session_id,
                fetcher=fetchers.make_fetcher(opts.fetch or "live", session, opts.max_fetches),
                cli=opts.cli,
                artifacts=self.artifacts,
                reader=reader,
            )

        tools = new_tools()
        self.tools = tools
        transcript = self._transcript_writer()
        stream = opts.max_output_tokens > config.STREAM_ABOVE_OUTPUT_TOKENS and opts.record is None
        # The judge has the rest of the run's time, less the reserve for writing; no
        # request or reply body outlasts it (the loop bounds its own by it too).
        started = time.monotonic()
        seconds = self._left(started)
        if self.time.audit is None:  # no audit: loading ends where the judge starts
            self.time.beforeAudit = round(started - self.clock, 3)
        self.time.judge = TimeShare(allowed=round(max(seconds, 0.0), 3), used=0.0)
        built.bound_replies(max(seconds, 0.0), 0.0)
        # The up-to-date rule's inputs: a lockstep conversation is saved under them.
        emit(self.progress, {"event": "phase", "phase": "judge", "inputs": self.inputs})

        def one_judgment(tools: Any, seconds: float) -> Any:
            return run_loop(
                model_api=AnthropicModel(built, stream=stream),
                model=opts.model,
                system=system,
                first_message=first,
                tools=tools,
                check=self._check_judge,
                written=lambda: tools.writes_ok > 0,
                limits=LoopLimits(
                    max_turns=opts.max_turns,
                    max_output_tokens=opts.max_output_tokens,
                    max_total_tokens=opts.max_total_tokens,
                    max_seconds=seconds,
                    max_reasks=opts.max_reasks,
                    request_timeout=opts.timeout,
                    time_text=self._time_text(seconds),
                ),
                transcript=transcript,
                on_event=self.progress,
                should_stop=self.stop,
            )

        # --samples K: each judgment gets an equal part of the judge's time still left.
        result = one_judgment(tools, seconds / opts.samples)
        if opts.samples > 1 and result.done and result.final is not None:
            self._more_samples(result, lambda: new_tools(), one_judgment, started + seconds)
        self.time.judge.used = round(time.monotonic() - started, 3)
        built.check_replay()
        record = self.record
        assert record is not None
        record.replyProblems = [redact.redact(p) for p in result.problems]
        usage = result.usage
        for extra in self.sampled:  # every judgment's tokens, not only the first's
            usage.add(extra.usage)
        record.turns = result.turns + sum(extra.turns for extra in self.sampled)
        record.reasks = result.reasks
        record.stopReasons = result.stop_reasons
        record.models = result.models
        record.usage = TokenTotals(**usage.as_dict())
        record.toolCalls = [ToolCallRecord(**call.as_dict()) for call in tools.calls]
        record.writes = Writes(valid=tools.writes_ok, refused=tools.writes_refused)
        record.finalText = result.final_text
        # A judge that broke the format is kept visible, never silently scored.
        record.formatErrors = [c.detail for c in tools.calls if c.name == "Write" and not c.ok]
        record.refusedWrites = [RefusedWrite(**w) for w in tools.refused_writes]
        if result.done and result.final is not None:
            check = result.final  # the loop's last check, just read: not read again
            if self.chosen is not None:  # --samples K: the one nearest the median
                check = self.chosen
            repaired = tools.writes_refused > 0 or result.reasks > 0
            kind: OutcomeKind = "repaired" if repaired else "model-written"
            judgment = check.judgment
            assert judgment is not None
            note = (
                f"{', '.join(result.models) or opts.model} wrote a valid judge.json in "
                f"{result.turns} turn(s){' after repairs' if repaired else ''}: "
                f"{score_text(judgment)}"
            )
            if record.samples is not None:
                made = len(record.samples.made)
                note += (
                    f"; sample {record.samples.chosen} of {made} made "
                    f"({opts.samples} asked), the one nearest their median"
                )
            if self.samples_moved:
                note += f"; {self.samples_moved}"
            return self._finish(kind, result.reason, note, True, EXIT_OK, judgment)
        prefix = "the model was unavailable" if result.unavailable else "the judge did not finish"
        why = result.reason
        if tools.write_failures and tools.writes_ok == 0:
            # The disk, not the model or a limit, is why no judgment is in place.
            failures = len(tools.write_failures)
            why = (
                f"judge.json could not be written ({tools.write_failures[-1]}; "
                f"{failures} Write(s) failed), then {why}"
            )
        # An API or proxy may quote the key in an error; the reason goes to the receipt,
        # judge.json's note and run.json. A request refused as invalid says so itself
        # ("the API refused the request as invalid: ..."): never read as an outage.
        reason = redact.redact(why if result.invalid else f"{prefix}: {why}")
        if result.invalid or result.unavailable:
            self.api_fault = "invalid-request" if result.invalid else "unavailable"
        return self._fallback(reason, before)

    def _more_samples(
        self,
        first: Any,
        new_tools: Callable[[], Any],
        one_judgment: Callable[[Any, float], Any],
        until: float,
    ) -> None:
        """Samples 2..K of `--samples K` after the first; keeps them in .judge/samples/,
        puts the chosen one in judge.json and says in run.json which and why."""
        from harness.run import samples as rule
        from harness.run.record import Sample, Samples

        opts = self.opts
        made = [(first.final, first.turns)]
        cut: str | None = None
        for index in range(2, opts.samples + 1):
            left = until - time.monotonic()
            if left <= 1.0:
                cut = f"the judge's time ran out after {index - 1} of {opts.samples} samples"
                break
            if self.stop is not None and self.stop():
                cut = f"the run was asked to stop after {index - 1} of {opts.samples} samples"
                break
            extra = one_judgment(new_tools(), left / (opts.samples - index + 1))
            self.sampled.append(extra)
            if not (extra.done and extra.final is not None):
                cut = f"sample {index} ended without a valid judgment ({extra.reason})"
                continue
            made.append((extra.final, extra.turns))
        scores = [check.judgment.scores.model_dump() for check, _ in made]
        chosen = rule.choose(scores)
        texts = {
            f"{i + 1}.json": (check.raw or "").encode("utf-8") for i, (check, _) in enumerate(made)
        }
        moved = self.artifacts.write_samples("samples", texts)
        if moved:  # planted where the samples go: moved aside, said once
            self.samples_moved = (
                f"moved aside {len(moved)} entr{'y' if len(moved) == 1 else 'ies'} in "
                f"{ARTIFACT_DIR}/samples/ this installation did not write (renamed *.not-ours-*)"
            )
        raw = made[chosen][0].raw or ""
        write_judgment_atomic(self.judge_path, raw, artifacts=self.artifacts)
        self.chosen = made[chosen][0]
        assert self.record is not None
        self.record.samples = Samples(
            asked=opts.samples,
            made=[
                Sample(
                    index=i + 1,
                    file=f"{ARTIFACT_DIR}/samples/{i + 1}.json",
                    sha256="sha256:" + hashlib.sha256(texts[f"{i + 1}.json"]).hexdigest(),
                    scores=scores[i],
                    turns=turns,
                )
                for i, (_, turns) in enumerate(made)
            ],
            chosen=chosen + 1,
            rule=rule.RULE,
            cut=cut,
        )

    def _fallback(
        self, reason: str, before: JudgeCheck, *, current: JudgeCheck | None = None
    ) -> RunResult:
        """Keep a valid judge.json that was there before, or write the all-Unknown one."""
        if current is None:
            current = self._check_judge()
        if current.valid and current.judgment is not None and before.valid:
            note = (
                f"advisory fallback not written: {reason}; the valid judge.json that was "
                "already in place was kept"
            )
            return self._finish("kept-previous", reason, note, False, EXIT_OK, current.judgment)
        judgment = fallback_judgment(redact.clean(f"Advisory fallback by the harness: {reason}."))
        try:
            write_judgment_atomic(self.judge_path, judgment.to_json(), artifacts=self.artifacts)
        except WriteError as exc:
            note = f"no judge.json could be written: {exc.message} ({reason})"
            return self._finish("not-written", reason, note, False, EXIT_FAILED, None)
        note = f"advisory all-Unknown judge.json written: {reason}"
        return self._finish("fallback", reason, note, True, EXIT_OK, judgment)

    def _finish(
        self,
        kind: OutcomeKind,
        reason: str,
        note: str,
        wrote: bool,
        code: int,
        judgment: Judgment | None,
    ) -> RunResult:
        ended = datetime.now(UTC)
        record = self.record
        record_path: Path | None = None
        # One run's artifacts belong together: a run that leaves judge.json as it was
        # leaves the previous citations.json with it (and says which run wrote them).
        kept = self._settle_set(wrote)
        if kept:
            note += f"; {kept}"
        ignored = self.audit.ignored if self.audit is not None else None
        if ignored and ignored not in note:
            note += f"; {ignored}"  # a planted cache entry: said once
        if record is not None:
            if self.audit is not None and not kept:  # only the model's own judgment is
                by_model = judgment is not None and kind in ("model-written", "repaired")
                score = judgment.scores.citationAccuracy if by_model and judgment else None
                record.citations = self.audit.judged(score)
            elif self.audit is not None:  # this run's audit is not the one in place
                previous = self.previous.citations if self.previous is not None else None
                record.citations = previous or self.audit.record.model_copy(update={"path": None})
            record.channels = self._channels()
            record.runId = self.run_id
            record.ended = ended.isoformat()
            record.seconds = round(time.monotonic() - self.clock, 3)
            record.time = self.time
            record.outcome = Outcome(
                kind=kind, reason=reason, wroteJudge=wrote, apiFault=self.api_fault
            )
            record.receipt = Receipt(wroteJudge=wrote, note=note)
            record.judge = judgment.model_dump() if judgment else None
            completed = kind in uptodate.COMPLETED or (kind == "fallback" and self.no_findings)
            if completed and self.inputs:
                inputs = self.inputs
                if self.audit is not None:  # the cache as the audit left it (it may fetch)
                    inputs = self._inputs_now() or ""
                if inputs:
                    record.upToDate = uptodate.stamp(
                        inputs, self.judge_path, no_findings=kind == "fallback"
                    )
            record.artifacts = self._artifact_set(wrote, ended.isoformat())
            if record.upToDateRefused and record.upToDateRefused not in note:
                note += f"; {record.upToDateRefused}"  # said once, in the receipt too
            try:
                self.artifacts.write(RUN_FILE, sealed_artifact("run", record.document()))
                record_path = self.artifacts / RUN_FILE
            except OSError as exc:  # the receipt still goes out, and says so
                self.write_problems.append(f"{ARTIFACT_DIR}/{RUN_FILE}: {_fault_words(exc)}")
        from harness.fs.origin import ephemeral_reason

        unkept = ephemeral_reason()
        if unkept is not None and record_path is not None:
            note += (
                f"; no origin key could be kept ({unkept}), so later runs will not trust "
                "this run's artifacts"
            )
        if self.write_problems:
            note += "; not written: " + "; ".join(self.write_problems)
            code = code if code != EXIT_OK else EXIT_FAILED
            record_note = Receipt(wroteJudge=wrote, note=note)
            if record is not None:
                record.receipt = record_note
        return RunResult(
            Receipt(wroteJudge=wrote, note=note),
            code,
            kind,
            reason,
            judgment,
            self.record,
            record_path,
        )

    def _channels(self) -> RunChannels | None:
        """--batch-api: this run's requests by channel, read as the run ends (every turn of
        every sample, the audit's, this run's own even when it keeps the previous set);
        None when neither client counts them."""
        judge = self.client.channel_use() if isinstance(self.client, ChannelledTurns) else None
        audit = self.audit.record.channels if self.audit is not None else None
        if judge is None and audit is None:
            return None
        return RunChannels(audit=audit or Channels(), judge=judge or Channels())

    def interrupted(self, exc: Interrupted) -> RunResult:
        """Record `interrupted` in run.json (atomically) and say so in the receipt. A
        judge.json this run already wrote stays (each write is atomic and was valid);
        otherwise whatever was in place before is left as it was."""
        wrote = self.tools is not None and self.tools.writes_ok > 0
        reason = f"{exc}; the run stopped"
        if wrote:
            note = f"{reason} after the model wrote a valid judge.json"
        else:
            note = f"{reason} before judge.json was written; any judge.json in place is unchanged"
        if self.record is None:  # stopped while loading: the inputs not read yet are absent
            opts = self.opts
            self.record = RunRecord(
                rubricVersion=RUBRIC_VERSION,
                sessionId=opts.session_id or self.folder.name,
                sessionDir=str(self.folder),
                sessionDigest=None,
                brief=None,
                model=opts.model,
                options=opts.model_dump(mode="json", exclude={"replay", "record", "transcript"}),
                replay=str(opts.replay) if opts.replay else None,
                started=self.started.isoformat(),
                sessionSummary=None,
                previousJudge=None,
            )
        self.record.interrupted = Interruption(signal=exc.name, exitCode=exc.exit_code)
        if self.tools is not None:
            self.record.toolCalls = [ToolCallRecord(**c.as_dict()) for c in self.tools.calls]
        return self._finish("interrupted", reason, note, wrote, exc.exit_code, None)

    def close(self) -> None:
        # Its connection pool would otherwise hold sockets until the garbage collector
        # gets to it: a process that runs many sessions would pile them up.
        for client in self.owned:
            _close_within(client, CLOSE_SECONDS)
        for reader in self.owned_fds:
            reader.close()

    def _check_judge(self) -> JudgeCheck:
        # Never through a link (symbolic or hard) planted as judge.json: what it points at
        # stays unread.
        return check_session_judge(self.folder)

    def _keep_copy_of_previous(self) -> None:
        # Nothing is lost: whatever judge.json was there is kept beside the record. Only
        # the session's own regular file is copied (not what a link, symbolic or hard,
        # leads to), and the copy replaces previous-judge.json rather than writing
        # through whatever may be there. A disk fault while copying (EIO, ENOSPC) ends
        # the run before anything could replace judge.json without its copy.
        try:
            self.artifacts.copy_from_session("judge.json", "previous-judge.json")
        except OSError as exc:
            exc.filename = str(self.artifacts / "previous-judge.json")
            raise

    # -- the artifact set (write stage) -------------------------------------------

    def _set_aside_citations(self) -> None:
        """Move the previous citations.json aside (a rename: no space needed), so this
        run's audit never overwrites the audit of a judgment it may keep."""
        try:
            os.rename(
                CITATIONS_FILE,
                PREVIOUS_CITATIONS,
                src_dir_fd=self.artifacts.fd,
                dst_dir_fd=self.artifacts.fd,
            )
        except FileNotFoundError:
            return
        except OSError as exc:
            exc.filename = str(self.artifacts / CITATIONS_FILE)
            raise
        self.moved_citations = True

    def _settle_set(self, wrote: bool) -> str | None:
        """Keep the set together: when judge.json stays as it was, put the previous
        citations.json back in place of this run's (or remove this run's, when there was
        none). What was kept, for the receipt; None when this run's set is in place."""
        if wrote:
            return None
        fd = self.artifacts.fd
        try:
            if self.moved_citations:
                os.rename(PREVIOUS_CITATIONS, CITATIONS_FILE, src_dir_fd=fd, dst_dir_fd=fd)
                self.moved_citations = False
                os.fsync(fd)
            elif self.audit is not None and self.audit.record.path is not None:
                # This run's report, where the set it keeps had none.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(CITATIONS_FILE, dir_fd=fd)
                os.fsync(fd)
        except OSError as exc:
            self.write_problems.append(
                f"the previous {ARTIFACT_DIR}/{CITATIONS_FILE} could not be put back "
                f"({_fault_words(exc)})"
            )
        before = self.previous.artifacts if self.previous is not None else None
        judge_run = before.judge.runId if before is not None and before.judge else None
        if judge_run is None:
            return "judge.json and the citation audit in place were left as they were"
        return f"the judgment and citation audit of run {judge_run} were left in place as they were"

    def _artifact_set(self, wrote: bool, ended: str) -> ArtifactSet:
        """Which run each of judge.json and citations.json in place came from."""
        from harness.session.saved import artifact_set

        now = artifact_set(self.folder)  # citations.json read back under its seal
        mine = ArtifactRef(runId=self.run_id, sha256=now.judge_sha256, ended=ended)
        before = self.previous.artifacts if self.previous is not None else None
        judge: ArtifactRef | None = None
        if now.judge_sha256 is not None:
            if wrote:
                judge = mine
            elif (
                before is not None
                and before.judge is not None
                and (before.judge.sha256 == now.judge_sha256)
            ):
                judge = before.judge
            else:
                judge = ArtifactRef(runId=None, sha256=now.judge_sha256)
        citations: ArtifactRef | None = None
        if now.citations is not None:
            sha = now.citations_sha256
            if now.citations_run == self.run_id:
                citations = ArtifactRef(runId=self.run_id, sha256=sha, ended=ended)
            elif (
                before is not None
                and before.citations is not None
                and (before.citations.runId == now.citations_run)
            ):
                citations = before.citations
            else:
                citations = ArtifactRef(runId=now.citations_run, sha256=sha)
        return ArtifactSet(judge=judge, citations=citations)

    def _inputs_now(self) -> str | None:
        """The inputs digest with the fetched-text cache as it is now (the audit may have
        added to it); None if it cannot cover everything."""
        record = self.record
        if record is None or record.sessionDigest is None or record.brief is None:
            return None
        cache = digest_cache(self.folder)
        if not cache.complete:
            return None
        return uptodate.inputs_digest(
            self.opts, record.sessionDigest, record.brief.digest, cache.value
        )

    def disk_fault(self, exc: OSError) -> RunResult:
        """A full disk or an I/O error: the receipt says which and where; exit 1."""
        wrote = self.tools is not None and self.tools.writes_ok > 0
        reason = f"{_fault_words(exc)}; the run stopped"
        if wrote:
            note = f"{reason} after the model wrote a valid judge.json"
        else:
            note = f"{reason}; judge.json is unchanged"
        return self._finish("not-written", reason, note, wrote, EXIT_FAILED, None)

    def _transcript_writer(self) -> Callable[[str, int, Any], None] | None:
        target = self.opts.transcript
        if target is None:
            return None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write the transcript {target}: {exc.strerror}") from exc

        def write(kind: str, turn: int, body: Any) -> None:
            document = {"type": kind, "turn": turn, "body": body}
            line = redact.artifact_text(document, indent=None)
            with target.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")

        return write


CLOSE_SECONDS = 2.0


def _fault_words(exc: OSError) -> str:
    """`the disk is full (No space left on device) while writing PATH`."""
    what = DISK_FAULTS.get(exc.errno or 0, "it could not be written")
    where = f" while writing {exc.filename}" if exc.filename else ""
    return f"{what} ({exc.strerror or exc}){where}"


def _close_within(client: Any, seconds: float) -> None:
    """Close an SDK client, waiting at most `seconds`: a signal (SIGINT/SIGTERM raise
    `Interrupted` anywhere) can land while the client's connection pool holds its own
    lock, and a close that waits on that lock must not keep the process from exiting."""

    def close() -> None:
        with contextlib.suppress(Exception):
            client.close()

    worker = threading.Thread(target=close, name="close-client", daemon=True)
    worker.start()
    worker.join(seconds)


__all__ = ["JudgeError", "Receipt", "RunOptions", "RunResult", "judge_session"]
