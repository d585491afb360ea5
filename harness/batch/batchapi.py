"""`judge batch --batch-api`: the citation audit of every session through Message Batches.

The engine's requests of one round depend only on the answers of the rounds before, and
its report does not depend on the order answers arrive in. So the audit of all sessions
is planned in passes, with the engine unchanged:

1. Every session's audit runs against a *collecting* client: requests already answered
   are answered from the book; any other is collected and given no answer (the engine
   goes no further with that claim). Pass 1 collects round 1 of every claim of every
   session; pass 2, with round 1 answered, collects round 2.
2. Each pass's collected requests go out as ONE Message Batch (at half the price), with
   the exact parameters `AnthropicCiteClient` would send. The batch id and the mapping of
   each custom_id to its request are saved under `ROOT/.judge-batch/` before polling, and
   every answer as it is read; a batch killed and started again finds the batch it
   submitted and resumes polling it instead of submitting again.
3. The sessions are then judged as usual; their audit's client answers from the book, so
   the audit costs no further request, except for requests whose batch result was
   errored, expired or canceled: those fall back, one by one, to the ordinary API (and
   are counted in the summary).

Submissions therefore equal rounds (two, plus one per pass that had to split a request
the provider found too large: those are refused per request and fall back), not
sessions or claims. The agent loops then run in lockstep (harness.batch.lockstep). With
the batch's `Budget`, a pass is submitted only while its limits hold.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import clock, config
from harness.audit.record import Channels, ChannelUse
from harness.batch.limits import Budget
from harness.batch.state import (
    ANSWERS_FILE,
    AuditBatch,
    BatchState,
    BookLine,
    SavedReply,
    append_line,
    read_book,
    read_state,
    write_state,
)
from harness.cite import CiteClient, Reply, Request
from harness.clock import NEVER
from harness.errors import Halted, JudgeError, ModelUnavailable
from harness.model.batches import MessageBatches

MAX_PASSES = 4  # round 1, round 2, and room for a pass the engine may add
FAILED = ("errored", "expired", "canceled")
UNUSABLE = "not a usable message"  # a succeeded result the audit cannot read (said apart)


def params_key(params: dict[str, Any]) -> str:
    """The identity of one answer: everything sent to the model that shapes it (model,
    max_tokens, system, messages, output format, every other parameter), canonical."""
    canonical = json.dumps(
        params, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=repr
    )
    return "p1:" + hashlib.sha256(canonical.encode()).hexdigest()


class Keys:
    """Request -> its answer's key: the key of the Messages-API parameters the cite client
    sends for it (so another --cite-model, max_tokens or prompt is another answer)."""

    def __init__(self, cite: Any) -> None:  # AnthropicCiteClient: `params(request)`
        self._cite = cite

    def __call__(self, request: Request) -> str:
        params, _ = self._cite.params(request)
        return params_key(params)


@dataclass
class Book:
    """Answers by request key (kept on disk as they come), and what failed in a batch."""

    folder: Path
    answers: dict[str, Reply] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # key -> errored/expired/canceled
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def load(cls, folder: Path) -> Book:
        book = cls(folder)
        for line in read_book(folder):
            if line.reply is not None:
                saved = line.reply
                book.answers[line.key] = Reply(
                    saved.answers,
                    usage=saved.usage,
                    model=saved.model,
                    problems=tuple(saved.problems),
                )
            else:
                book.failed[line.key] = line.failed or "errored"
        return book

    def add(self, key: str, reply: Reply | None, failed: str | None = None) -> None:
        if reply is not None:
            saved = SavedReply(
                answers=dict(reply.answers),
                usage=reply.usage,
                model=reply.model,
                problems=list(reply.problems),
            )
            line = BookLine(key=key, reply=saved)
        else:
            line = BookLine(key=key, failed=failed or "errored")
        with self.lock:
            if reply is not None:
                self.answers[key] = reply
            else:
                self.failed[key] = line.failed or "errored"
            append_line(self.folder / ANSWERS_FILE, line)


class Collecting:
    """A CiteClient for planning: answers what the book holds, collects the rest."""

    def __init__(self, book: Book, key: Callable[[Request], str]) -> None:
        self._book = book
        self._key = key
        self._lock = threading.Lock()
        self.wanted: dict[str, Request] = {}

    def ask(self, request: Request) -> Reply:
        key = self._key(request)
        reply = self._book.answers.get(key)
        if reply is not None:
            return reply
        if key not in self._book.failed:
            with self._lock:
                self.wanted.setdefault(key, request)
        return Reply(answers={})  # no answer: the engine goes no further with this claim


class _Asking:
    """One session's view of a `Collecting` client: counts what it asked unanswered."""

    def __init__(self, collector: Collecting) -> None:
        self._collector = collector
        self._lock = threading.Lock()
        self.unanswered = 0

    def ask(self, request: Request) -> Reply:
        reply = self._collector.ask(request)
        if not reply.answers:
            with self._lock:
                self.unanswered += 1
        return reply


class Answering:
    """The sessions' audit client: the book first, the ordinary API for what failed
    (while the batch's limits hold; what it pays is counted in the budget). Each session
    asks through its own `for_session()` view, which counts its requests and tokens by
    channel for its run.json (`citations.channels`); this counts the batch's."""

    def __init__(
        self,
        book: Book,
        fallback: CiteClient | None,
        budget: Budget | None = None,
        *,
        key: Callable[[Request], str],
    ) -> None:
        self._book = book
        self._key = key
        self._fallback = fallback
        self._budget = budget
        self._lock = threading.Lock()
        self.channels = Channels()

    @property
    def from_book(self) -> int:
        return self.channels.batch.requests

    @property
    def fallbacks(self) -> int:
        return self.channels.ordinary.requests

    def for_session(self) -> SessionAnswering:
        return SessionAnswering(self)

    def ask(self, request: Request) -> Reply:
        return self.answer(request)[0]

    def answer(self, request: Request) -> tuple[Reply, ChannelUse]:
        """The reply, and the channel (of the batch's counts) it came through."""
        reply = self._book.answers.get(self._key(request))
        if reply is not None:
            return reply, self._count(self.channels.batch, reply)
        if self._fallback is None:
            raise ModelUnavailable("no batch result for this request and no API to fall back to")
        halt = self._budget.reason() if self._budget is not None else None
        if halt:
            raise ModelUnavailable(halt)
        reply = self._fallback.ask(request)
        if self._budget is not None:
            self._budget.add(reply.usage.budgeted)
        return reply, self._count(self.channels.ordinary, reply)

    def _count(self, channel: ChannelUse, reply: Reply) -> ChannelUse:
        with self._lock:
            channel.requests += 1
            channel.tokens += reply.usage.budgeted
        return channel


class SessionAnswering:
    """One session's view of `Answering`, counting its own requests by channel."""

    def __init__(self, owner: Answering) -> None:
        self._owner = owner
        self._lock = threading.Lock()
        self._channels = Channels()

    def ask(self, request: Request) -> Reply:
        reply, channel = self._owner.answer(request)
        batched = channel is self._owner.channels.batch
        mine = self._channels.batch if batched else self._channels.ordinary
        with self._lock:
            mine.requests += 1
            mine.tokens += reply.usage.budgeted
        return reply

    def channel_use(self) -> Channels:
        with self._lock:
            return self._channels.model_copy(deep=True)


@dataclass
class BatchStats:
    submissions: int = 0
    resumed: int = 0
    requests: int = 0
    succeeded: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    from_book: int = 0
    fallbacks: int = 0
    halted: int = 0  # requests not submitted: the batch's limits were reached

    def as_dict(self) -> dict[str, Any]:
        return {
            "submissions": self.submissions,
            "resumed": self.resumed,
            "requests": self.requests,
            "succeeded": self.succeeded,
            "failed": dict(self.failed),
            "answeredFromBatches": self.from_book,
            "fellBackToTheAPI": self.fallbacks,
            "notSubmitted": self.halted,
        }


class BatchRunner:
    """Submits one pass's requests as one Message Batch, or resumes the one saved."""

    def __init__(
        self,
        sdk: Any,
        cite: Any,  # AnthropicCiteClient: builds the params and reads the replies
        folder: Path,
        book: Book,
        *,
        poll: float = config.BATCH_POLL_SECONDS,
        stats: BatchStats | None = None,
        say: Callable[[str], None] | None = None,
        budget: Budget | None = None,
    ) -> None:
        deadline = budget.deadline if budget is not None else NEVER
        self._api = MessageBatches(sdk, deadline, say=say)
        self._cite, self._folder, self._book = cite, folder, book
        self._poll = poll
        self._budget = budget
        self.stats = stats or BatchStats()
        self._say = say or (lambda _: None)

    def _state(self) -> BatchState:
        state, problem = read_state(self._folder)
        if problem is not None:
            self._say(f"judge batch: {problem}")
        return state

    def run(self, wanted: dict[str, Request]) -> None:
        keys = sorted(wanted)
        state = self._state()
        entry = next(
            (b for b in state.batches if not b.done and sorted(b.customIds.values()) == keys),
            None,
        )
        names: dict[str, dict[str, str]] = {}
        params: dict[str, dict[str, Any]] = {}
        for key in keys:
            params[key], names[key] = self._cite.params(wanted[key])
        if entry is None:
            ids = {f"r{len(state.batches) + 1}-{i:06d}": key for i, key in enumerate(keys)}
            batch_id = self._api.submit([(cid, params[key]) for cid, key in ids.items()])
            entry = AuditBatch(id=batch_id, customIds=ids)
            state.batches.append(entry)
            write_state(self._folder, state)  # before polling: a killed batch resumes this one
            self.stats.submissions += 1
            self._say(f"judge batch: submitted message batch {batch_id} ({len(ids)} requests)")
        else:
            self.stats.resumed += 1
            self._say(f"judge batch: resuming message batch {entry.id}")
        self.stats.requests += len(keys)
        self._wait(entry.id)
        ids = entry.customIds
        seen: set[str] = set()
        stop = self._budget.halted if self._budget is not None else None
        for item in self._api.results(entry.id, stop):
            found = ids.get(item.custom_id)
            if found is None or found in seen:
                continue
            seen.add(found)
            if item.kind == "succeeded":
                try:
                    reply = self._cite.reply(item.message, names[found])
                except ModelUnavailable:  # not a usable message: asked again directly
                    self._book.add(found, None, "errored")
                    self.stats.failed[UNUSABLE] = self.stats.failed.get(UNUSABLE, 0) + 1
                    continue
                self._book.add(found, reply)
                self.stats.succeeded += 1
                if self._budget is not None:  # paid now (a resumed book's answers were not)
                    self._budget.add(reply.usage.budgeted)
            else:
                self._book.add(found, None, item.kind)
                self.stats.failed[item.kind] = self.stats.failed.get(item.kind, 0) + 1
        for key in set(ids.values()) - seen:  # a result the API never gave: ask it directly
            self._book.add(key, None, "missing")
            self.stats.failed["missing"] = self.stats.failed.get("missing", 0) + 1
        entry.done = True
        write_state(self._folder, state)

    def _wait(self, batch_id: str) -> None:
        stop = self._budget.reason if self._budget is not None else None
        self._api.wait(batch_id, self._poll, stop)


def plan_audits(
    folders: list[Path],
    state_dir: Path,
    opts: Any,  # RunOptions
    sdk: Any,
    *,
    poll: float = config.BATCH_POLL_SECONDS,
    say: Callable[[str], None] | None = None,
    concurrency: int = config.BATCH_PLAN_CONCURRENCY,
    budget: Budget | None = None,
) -> tuple[Answering, BatchStats]:
    """Answer, through Message Batches, every audit request of every session in `folders`;
    return the client the sessions' audits then use, and what it took. `state_dir` is
    `ROOT/.judge-batch`, made by the batch once it is known to be a folder. With `budget`, no
    pass is submitted once the batch's limits are reached (its tokens count what the
    batches returned): the sessions then do not start, each saying why."""
    from harness.audit import audit_arguments, audit_session
    from harness.cite import CitePool
    from harness.fs.names import ARTIFACT_DIR
    from harness.model.cite_client import AnthropicCiteClient
    from harness.session.loader import load_session

    book = Book.load(state_dir)
    cite = AnthropicCiteClient(sdk, model=opts.cite_model)
    keys = Keys(cite)
    runner = BatchRunner(sdk, cite, state_dir, book, poll=poll, say=say, budget=budget)
    # Each session's audit with exactly the options its run will use (one function builds
    # them: --cite-against, --cite-passage-chars, the stored or fetched source texts...).
    # One session in memory at a time, loaded again in each pass (a source fetched live is
    # read from its cache after the first); a session that asked nothing unanswered in a
    # pass is done and not audited again.
    pending = list(folders)
    with CitePool(concurrency) as pool:
        for _ in range(MAX_PASSES):
            collector = Collecting(book, keys)
            still: list[Path] = []
            for folder in pending:
                asking = _Asking(collector)
                # The session's own run will say what failed; a read past the batch's
                # time limit (a slow snapshot) ends there (harness.clock: OutOfTime).
                limit = budget.deadline if budget is not None else NEVER
                with contextlib.suppress(JudgeError), clock.scope(limit):
                    session = load_session(folder, opts.session_id, deadline=limit)
                    options = audit_arguments(session, folder / ARTIFACT_DIR, opts)
                    audit_session(session, client=asking, pool=pool, **options.arguments())
                if asking.unanswered:
                    still.append(folder)
            pending = still
            if not collector.wanted:
                break
            halt = budget.reason() if budget is not None else None
            if halt:
                runner.stats.halted += len(collector.wanted)
                if say is not None:
                    say(f"judge batch: audit batch not submitted: {halt}")
                break
            try:
                runner.run(collector.wanted)
            except Halted as exc:  # out of time while the batch ran: it stays saved, resumable
                runner.stats.halted += len(collector.wanted)
                if say is not None:
                    say(f"judge batch: audit batch not awaited: {exc}")
                break
            except ModelUnavailable as exc:  # the batch itself failed: ask each directly
                failed = runner.stats.failed
                failed["batch failed"] = failed.get("batch failed", 0) + len(collector.wanted)
                if say is not None:
                    say(
                        f"judge batch: audit batch failed ({exc}); its {len(collector.wanted)} "
                        "requests go to the ordinary API, one by one"
                    )
                break
    return Answering(book, cite, budget, key=keys), runner.stats


__all__ = [
    "Answering",
    "BatchRunner",
    "BatchStats",
    "Book",
    "Collecting",
    "Keys",
    "SessionAnswering",
    "params_key",
    "plan_audits",
]
