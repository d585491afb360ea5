"""`judge run` as one library call: `judge_session(path, **options)`.

load → (citation audit) → render brief → agent loop → final check → receipt.
Whatever happens, at the end judge.json is valid or absent, the session's own
files are untouched, and the receipt says what happened.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness import redact
from harness.brief import render_for_session
from harness.defaults import JUDGE_MODEL, SCREEN_MODEL
from harness.errors import (
    EXIT_FAILED,
    EXIT_OK,
    JudgeError,
    ModelUnavailable,
    UsageError,
    WriteError,
)
from harness.files import NotRegularFile, open_regular, replace_atomically
from harness.interrupt import Interrupted
from harness.judgment import (
    DIMENSIONS,
    RUBRIC_VERSION,
    JudgeCheck,
    Judgment,
    check_judge_file,
    fallback_judgment,
    write_judgment_atomic,
)
from harness.lock import session_lock
from harness.resources import DEFAULT_BRIEF
from harness.session import ARTIFACT_DIR, Session, load_session

if TYPE_CHECKING:
    from harness.model.client import BuiltClient

OutcomeKind = Literal[
    "model-written", "repaired", "fallback", "kept-previous", "not-written", "interrupted"
]


class RunOptions(BaseModel):
    """Every knob of a run; the CLI's options map onto these one to one."""

    model_config = ConfigDict(extra="forbid")

    model: str = JUDGE_MODEL
    brief: Path | None = None
    cli: str = "judge"
    session_id: str | None = None
    cite: bool = True
    cite_model: str = SCREEN_MODEL
    cite_replay: Path | None = None
    cite_concurrency: int = Field(8, ge=1, le=256)
    # None: "stored" when the judge is replayed (a replay never touches the network
    # unless `fetch="live"` is asked for), else "live".
    fetch: Literal["live", "stored", "off"] | None = None
    max_turns: int = Field(40, ge=1)
    max_output_tokens: int = Field(8192, ge=256, le=128_000)
    max_total_tokens: int = Field(400_000, ge=1000)
    max_seconds: float = Field(600.0, gt=0)
    max_fetches: int = Field(5, ge=0)
    max_reasks: int = Field(2, ge=0)
    max_retries: int = Field(2, ge=0)
    timeout: float = Field(120.0, gt=0)
    lock_timeout: float = Field(30.0, ge=0)
    replay: Path | None = None
    # Replay a recording made for another session, brief or model (or one without metadata).
    replay_any: bool = False
    record: Path | None = None
    transcript: Path | None = None

    @model_validator(mode="after")
    def _replay_fetches_stored(self) -> RunOptions:
        if self.fetch is None:
            self.fetch = "stored" if self.replay is not None else "live"
        return self


class Receipt(BaseModel):
    """The contract's receipt: exactly these two keys."""

    model_config = ConfigDict(extra="forbid")

    wroteJudge: bool
    note: str

    def line(self) -> str:
        # One line of ASCII-safe JSON whatever the note holds: U+2028, U+0085 and lone
        # surrogates are escaped, so a consumer splitting lines sees exactly one.
        return redact.artifact_text(self.model_dump(), indent=None)


@dataclass(slots=True)
class RunResult:
    receipt: Receipt
    exit_code: int
    outcome: OutcomeKind
    reason: str
    judgment: Judgment | None = None
    record: dict[str, Any] = field(default_factory=dict)
    record_path: Path | None = None


def judge_session(
    path: str | Path, *, client: Any = None, cite_client: Any = None, **options: Any
) -> RunResult:
    """Run the whole audit on one session folder. Never raises for model behaviour;
    raises `JudgeError` subclasses only for usage/configuration faults.

    `client` replaces the Anthropic client (an object with `.messages.create`),
    for tests and for callers that build their own; `cite_client` (a `CiteClient`)
    answers the citation audit. With `client` but no `cite_client` the audit runs offline.
    """
    try:
        opts = RunOptions(**options)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise UsageError(f"invalid run options: {problems}") from exc
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UsageError(f"session folder {folder} does not exist or is not a folder")
    folder = folder.resolve()
    not_session = not_a_session(folder)
    if not_session is not None:
        raise UsageError(not_session)  # exit 2, and nothing is written into the folder
    artifacts = folder / ARTIFACT_DIR
    if artifacts.is_symlink():
        # Following it would put the lock, run.json and copies wherever the link points.
        reason = (
            f"{artifacts} is a symbolic link; the judge writes its artifacts only inside the "
            "session folder and will not follow it (remove the link)"
        )
        return RunResult(Receipt(wroteJudge=False, note=reason), EXIT_FAILED, "not-written", reason)
    try:
        artifacts.mkdir(exist_ok=True)
    except OSError as exc:
        reason = (
            f"cannot write in the session folder {folder} ({exc.strerror or exc}); "
            "make it writable to let the judge write judge.json"
        )
        return RunResult(Receipt(wroteJudge=False, note=reason), EXIT_FAILED, "not-written", reason)
    with session_lock(artifacts / "lock", opts.lock_timeout):
        run = _Run(folder, artifacts, opts, client, cite_client)
        try:
            return run.execute()
        except Interrupted as exc:
            return run.interrupted(exc)
        finally:
            run.close()


class _Run:
    def __init__(
        self, folder: Path, artifacts: Path, opts: RunOptions, client: Any, cite_client: Any = None
    ) -> None:
        self.client = client
        self.cite_client = cite_client
        self.audit: Any = None  # harness.audit.RunAudit once the audit has run
        self.folder = folder
        self.artifacts = artifacts
        self.opts = opts
        self.judge_path = folder / "judge.json"
        self.started = datetime.now(UTC)
        self.clock = time.monotonic()
        self.record: dict[str, Any] = {}
        redact.register_client(client)  # a caller's client may hold a key of its own
        self.owned: list[Any] = []  # clients this run built, closed when it ends
        self.tools: Any = None  # the agent's ToolBox once the loop starts

    def execute(self) -> RunResult:
        opts = self.opts
        session = load_session(self.folder, opts.session_id)
        brief_path = opts.brief or DEFAULT_BRIEF
        rendered = render_for_session(brief_path, session.session_id, self.folder, opts.cli)
        before = self._check_judge()
        had_file = os.path.lexists(self.judge_path)
        if had_file:
            self._keep_copy_of_previous()
        self.record = {
            "harness": "judge",
            "rubricVersion": RUBRIC_VERSION,
            "sessionId": session.session_id,
            "sessionDir": str(self.folder),
            "sessionDigest": session_digest(self.folder),
            "brief": {
                "path": str(brief_path),
                "digest": "sha256:" + rendered.template_digest,
                "warnings": rendered.warnings(),
            },
            "model": opts.model,
            "options": opts.model_dump(mode="json", exclude={"replay", "record", "transcript"}),
            "replay": str(opts.replay) if opts.replay else None,
            "started": self.started.isoformat(),
            "sessionSummary": session.summary(),
            "previousJudge": {"present": had_file, "valid": before.valid},
        }

        if not any(f.claims for f in session.findings):
            reason = (
                "no findings to score: the findings are absent or empty, so every dimension "
                "is Unknown (escalation rule); no model was called"
            )
            # Nothing has touched judge.json since `before` was read.
            return self._fallback(reason, before, current=before)

        # The judge's client first: a missing key is a configuration error (exit 2)
        # that should not wait for the audit's model calls.
        built = self._judge_client()
        first = first_message(session, self.opts.cli, self._cite(session))
        return self._agent(built, session, rendered.text, first, before)

    # -- pieces -------------------------------------------------------------

    def _cite(self, session: Session) -> dict[str, Any] | None:
        """The citation audit (never blocks the run, except a ReplayError); its summary."""
        if not self.opts.cite:
            self.record["citations"] = {"skipped": "--no-cite"}
            return None
        from harness.audit import audit_for_run

        self.audit = audit_for_run(
            session,
            self.artifacts,
            self.opts,
            cite_client=self.cite_client,
            judge_client_given=self.client is not None,
            session_digest=self.record["sessionDigest"],
        )
        self.record["citations"] = self.audit.record
        prompt: dict[str, Any] | None = self.audit.prompt()
        return prompt

    def _judge_client(self) -> BuiltClient:
        from harness.model.client import BuiltClient, ClientSettings, build_client

        opts = self.opts
        if self.client is not None:
            return BuiltClient(self.client)
        from harness.model.replay import check_binding, replay_meta

        bound = replay_meta(
            self.record["sessionDigest"], self.record["brief"]["digest"], opts.model
        )
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

        opts = self.opts
        tools = ToolBox(
            session_dir=self.folder,
            session_id=session.session_id,
            fetcher=make_fetcher(opts.fetch or "live", session, opts.max_fetches),
            cli=opts.cli,
            temp_dir=self.artifacts,
        )
        self.tools = tools
        transcript = self._transcript_writer()
        stream = opts.max_output_tokens > 16_000 and opts.record is None
        # No response body may still be arriving after the loop's own time limit (+ grace).
        built.deadline.start(opts.max_seconds, opts.timeout)

        def call(params: dict[str, Any], timeout: float) -> Any:
            import anthropic

            from harness.model.auth import credentials_refused

            # Everything the model is sent passes the one choke point: the first message
            # (with the audit's summary), tool results, re-asks.
            params = redact.outbound(params)
            try:
                if stream:
                    with built.client.messages.stream(**params, timeout=timeout) as events:
                        return events.get_final_message()
                return built.client.messages.create(**params, timeout=timeout)
            except anthropic.APIConnectionError:
                built.check_replay()  # a dry replay is a loud error, never a fallback
                raise
            except anthropic.APIStatusError as exc:
                refused = credentials_refused(exc, "the judge")
                if refused is not None:
                    raise refused from exc  # a wrong key: exit 2, like a missing one
                raise
            except (anthropic.APIError, JudgeError):
                raise
            except Exception as exc:
                # Not an APIError, yet raised inside the SDK call: a reply that is not a
                # message (truncated JSON, an HTML page, events out of order) or a stream
                # cut mid-event. For the run it is an unusable reply, never a traceback.
                built.check_replay()
                raise ModelUnavailable(
                    f"the API's reply could not be read as a message "
                    f"({type(exc).__name__}: {str(exc)[:200] or 'no detail'})"
                ) from exc

        result = run_loop(
            call=call,
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
                max_seconds=opts.max_seconds,
                max_reasks=opts.max_reasks,
                request_timeout=opts.timeout,
            ),
            transcript=transcript,
        )
        built.check_replay()
        self.record.update(
            {
                "turns": result.turns,
                "reasks": result.reasks,
                "stopReasons": result.stop_reasons,
                "models": result.models,
                "usage": result.usage.as_dict(),
                "toolCalls": [call.as_dict() for call in tools.calls],
                "writes": {"valid": tools.writes_ok, "refused": tools.writes_refused},
                "finalText": result.final_text,
            }
        )
        if tools.writes_refused:
            # A judge that broke the format is kept visible, never silently scored.
            self.record["formatErrors"] = [
                c.detail for c in tools.calls if c.name == "Write" and not c.ok
            ]
            self.record["refusedWrites"] = tools.refused_writes
        if result.done and result.final is not None:
            check = result.final  # the loop's last check, just read: not read again
            repaired = tools.writes_refused > 0 or result.reasks > 0
            kind: OutcomeKind = "repaired" if repaired else "model-written"
            judgment = check.judgment
            assert judgment is not None
            note = (
                f"{', '.join(result.models) or opts.model} wrote a valid judge.json in "
                f"{result.turns} turn(s){' after repairs' if repaired else ''}: "
                f"{score_text(judgment)}"
            )
            return self._finish(kind, result.reason, note, True, EXIT_OK, judgment)
        prefix = "the model was unavailable" if result.unavailable else "the judge did not finish"
        # An API or proxy may quote the key in an error; the reason goes to the receipt,
        # judge.json's note and run.json.
        reason = self._scrub(f"{prefix}: {result.reason}")
        return self._fallback(reason, before)

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
            write_judgment_atomic(self.judge_path, judgment.to_json(), temp_dir=self.artifacts)
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
        if self.audit is not None:  # only the model's own judgment is compared with the audit
            by_model = judgment is not None and kind in ("model-written", "repaired")
            self.audit.judged(judgment.scores.citationAccuracy if by_model and judgment else None)
        self.record.update(
            {
                "ended": ended.isoformat(),
                "seconds": round(time.monotonic() - self.clock, 3),
                "outcome": {"kind": kind, "reason": reason, "wroteJudge": wrote},
                "judge": judgment.model_dump() if judgment else None,
            }
        )
        self.record.setdefault("turns", 0)
        self.record.setdefault("toolCalls", [])
        self.record.setdefault("usage", None)
        record_path: Path | None = self.artifacts / "run.json"
        try:
            _write_json_atomic(self.artifacts / "run.json", self.record)
        except OSError:
            record_path = None  # the receipt still goes out; the record is best effort
        return RunResult(
            Receipt(wroteJudge=wrote, note=note),
            code,
            kind,
            reason,
            judgment,
            self.record,
            record_path,
        )

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
        self.record.setdefault("sessionDir", str(self.folder))
        self.record["interrupted"] = {"signal": exc.name, "exitCode": exc.exit_code}
        if self.tools is not None:
            self.record["toolCalls"] = [call.as_dict() for call in self.tools.calls]
        return self._finish("interrupted", reason, note, wrote, exc.exit_code, None)

    def close(self) -> None:
        # Its connection pool would otherwise hold sockets until the garbage collector
        # gets to it: a process that runs many sessions would pile them up.
        for client in self.owned:
            with contextlib.suppress(Exception):
                client.close()

    def _scrub(self, text: str) -> str:
        return redact.redact(text)

    def _check_judge(self) -> JudgeCheck:
        # Never through a link planted as judge.json: what it points at stays unread.
        return check_judge_file(self.judge_path, follow_symlinks=False)

    def _keep_copy_of_previous(self) -> None:
        # Nothing is lost: whatever judge.json was there is kept beside the record. Only
        # a regular file is copied (not what a link points at), and the copy replaces
        # previous-judge.json rather than writing through whatever may be there.
        with (
            contextlib.suppress(OSError),
            open_regular(self.judge_path, follow_symlinks=False) as source,
        ):
            replace_atomically(self.artifacts / "previous-judge.json", source)

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


SESSION_MARKERS = ("findings", "sources.json", "answer.md", "trace.jsonl")


def not_a_session(folder: Path) -> str | None:
    """Why `folder` is not a research session (it holds none of the pipeline's files), or
    None. A folder that is not one is never written into: no judge.json, no .judge/."""
    if any(os.path.lexists(folder / name) for name in SESSION_MARKERS):
        return None
    return (
        f"{folder} is not a research session: it holds none of findings/, sources.json, "
        "answer.md or trace.jsonl; pass the session folder the pipeline wrote (nothing was "
        "written into this one)"
    )


def make_fetcher(mode: str, session: Session, max_uses: int) -> Any:
    """The WebFetch backend for `--fetch live|stored|off`."""
    from harness.agent import fetch

    if mode == "off":
        return fetch.DisabledFetcher()
    urls = session.source_urls()
    if mode == "stored":
        return fetch.StoredFetcher(session.dir, urls, max_uses=max_uses)
    from harness.agent.urlguard import AllowList

    return fetch.Fetcher(AllowList(urls.values()), max_uses=max_uses)


def first_message(session: Session, cli: str, citations: dict[str, Any] | None) -> str:
    from harness.agent.read import wrap_untrusted

    files = _listing(session.dir)
    parts = [
        f"Judge research session `{session.session_id}`; its folder is {session.dir}.",
        "You have three tools: Read (files and folders inside the session), Write (only "
        "judge.json) and WebFetch (only the session's own source URLs).",
        "You have no shell. Instead, every Write of judge.json validates the content first "
        f"and then runs the brief's round-trip `{cli} show {session.session_id} --json` for "
        "you, reporting its exit code and errors in the tool result. Invalid content is not "
        "written. When the result says the round-trip exited 0, you are done: end your turn "
        "with the one-line receipt.",
        wrap_untrusted("directory", ".", files),
    ]
    if session.problems:
        shown = "\n".join(f"- {p.line()}" for p in session.problems[:30])
        more = len(session.problems) - 30
        if more > 0:
            shown += f"\n- … and {more} more"
        parts.append(
            "The harness found these problems while loading the session files "
            "(take them into account):\n" + wrap_untrusted("report", "session problems", shown)
        )
    if citations and citations.get("summaryText"):
        parts.append(str(citations["summaryText"]))
    return "\n\n".join(parts)


def _session_files(folder: Path) -> Iterator[tuple[Path, str]]:
    """Every file under `folder` but the artifact folder, in sorted order: (path, relative)."""
    # Its own stack, not os.walk: Python 3.11's walk recurses, and 1,200 nested folders
    # ended the run with a RecursionError. Links to folders are not followed.
    stack = [folder]
    while stack:
        root = stack.pop()
        try:
            with os.scandir(root) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        dirs: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if not (root == folder and entry.name == ARTIFACT_DIR):
                    dirs.append(Path(entry.path))
                continue
            full = Path(entry.path)
            yield full, full.relative_to(folder).as_posix()
        stack.extend(reversed(dirs))


def _listing(folder: Path, limit: int = 300) -> str:
    lines: list[str] = []
    for full, rel in _session_files(folder):
        try:
            size = full.stat().st_size
        except OSError:
            size = -1
        lines.append(f"{rel}  ({size:,} bytes)")
        if len(lines) >= limit:
            lines.append(f"… listing stopped at {limit} entries; Read a folder to see more")
            return "\n".join(lines)
    return "\n".join(lines) or "(the session folder is empty)"


def session_digest(folder: Path) -> str:
    """sha256 over the session's own files (not judge.json, not the artifact folder)."""
    digest = hashlib.sha256()
    for full, rel in _session_files(folder):
        if rel == "judge.json" or full.is_symlink():
            continue
        digest.update(os.fsencode(rel) + b"\0")  # a name that is not UTF-8 as its bytes
        try:
            with open_regular(full) as handle:
                for chunk in iter(functools.partial(handle.read, 1 << 20), b""):
                    digest.update(chunk)
        except NotRegularFile:
            digest.update(b"<not a regular file>")  # a FIFO must not hang the run
        except OSError:
            digest.update(b"<unreadable>")
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def score_text(judgment: Judgment) -> str:
    """The five scores in rubric order: `factualAccuracy 4, citationAccuracy 5, ...`."""
    scores = judgment.scores.model_dump()
    return ", ".join(f"{d} {scores[d]}" for d in DIMENSIONS)


def _write_json_atomic(path: Path, document: Any) -> None:
    # Through the one choke point: redacted, and ASCII-safe (a lone surrogate or U+2028 in
    # a note survives the write).
    replace_atomically(path, redact.artifact_bytes(document))


__all__ = ["JudgeError", "Receipt", "RunOptions", "RunResult", "judge_session"]
