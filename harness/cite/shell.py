"""The shell: the only part that calls the client.

It validates the options into a `CiteOptions`, sends each round's requests (at most `concurrency`
in flight per judgment, and at most the pool's size across judgments sharing a `CitePool`),
halves a round-1 window the provider refuses as too large, sends one round-2 request per
finding (one refused as too large is that finding's error, never split), checks every
reply once, and assembles the report. Round 2 starts only when round 1 has finished.
Results are kept by window and finding, never by arrival, so the report is the same at any
concurrency.

Scheduling is callback-driven: a finished request hands the next one to the pool from its
worker thread, so thousands of judgments need no thread of their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from harness.cite import gather as gathering
from harness.cite import screen, verdict
from harness.cite.client import CiteClient, Reply, Request, RequestTooLarge
from harness.cite.concerns import Concerns, as_concerns
from harness.cite.options import CiteOptions, CiteOptionsError, as_options
from harness.cite.replies import Checked, Rejected, check
from harness.cite.report import CiteError, CiteFinding, ErrorKind, Report
from harness.cite.source import CiteSource, as_source
from harness.cite.workers import Workers
from harness.errors import ModelUnavailable, OutOfTime
from harness.usage import Usage

Options = CiteOptions | Mapping[str, Any] | None
_TOO_LARGE = "the provider refused the request as too large"


class _Batch:
    """Judgments started together: one abort flag, and one wake-up when all are done.

    A streamed batch (`CitePool.stream`) starts open: judgments join it as they are drawn,
    and it can be done only once it is sealed."""

    __slots__ = ("_left", "_lock", "_on_done", "aborted", "done")

    def __init__(
        self, size: int, on_done: Callable[[], None] | None = None, *, open: bool = False
    ) -> None:
        # A plain flag, read by every request: an Event's is_set() is a method call each time.
        self.aborted = False
        self.done = threading.Event()
        self._left = size + open  # an open batch holds one count until it is sealed
        self._lock = threading.Lock()
        self._on_done = on_done  # told once per finished judgment (progress displays)
        if self._left == 0:
            self.done.set()

    def join(self) -> None:
        """One more judgment (an open batch only, before it is sealed)."""
        with self._lock:
            self._left += 1

    def seal(self) -> None:
        """No judgment joins any more: the batch is done once those it has are."""
        self._release()

    def finished(self) -> None:
        # One wake-up for the whole batch: waiting on each judgment in turn would wake the
        # caller thousands of times.
        if self._on_done is not None:
            with contextlib.suppress(Exception):  # a display may never stop a judgment
                self._on_done()
        self._release()

    def _release(self) -> None:
        with self._lock:
            self._left -= 1
            last = self._left == 0
        if last:
            self.done.set()


@dataclass(slots=True)
class _Task:
    slot: int  # round 1: the window's first passage index; round 2: the finding's index
    request: Request
    window: screen.Window | None = None  # round 1 only


@dataclass(slots=True)
class _Outcome:
    reply: Reply | None = None
    scores: screen.Scores | None = None  # round 1
    questions: Mapping[str, Any] | None = None  # round 2: checked when the report is built
    error: tuple[ErrorKind, list[str], str] | None = None


class _Job:
    """One judgment's state machine; every method may run on any pool thread.

    A worker runs as little as it can after its reply arrives (it has just woken from the
    network, when the same Python runs several times slower than in a warm loop): it checks
    a round-1 reply and, after the last one, gathers and sends round 2. Round-2 replies are
    read, and the report built, by the caller once the whole batch is done.
    """

    __slots__ = (
        "_batch",
        "_client",
        "_concerns",
        "_found",
        "_inflight",
        "_lock",
        "_pending",
        "_r1",
        "_r2",
        "_requests",
        "_round",
        "_run",
        "_set_aside",
        "_source",
        "_strongest",
        "_workers",
        "done",
        "fatal",
    )

    def __init__(
        self,
        run: CiteOptions,
        source: CiteSource,
        concerns: Concerns,
        client: CiteClient,
        workers: Workers,
        batch: _Batch,
    ) -> None:
        self._run, self._source, self._concerns, self._client = run, source, concerns, client
        self._workers, self._batch = workers, batch
        self._lock = threading.Lock()
        self._pending: deque[_Task] = deque()
        self._inflight = 0
        self._requests = 0
        self._r1: dict[int, tuple[screen.Window, _Outcome]] = {}
        self._found: list[gathering.Gathered] = []
        self._set_aside: list[str] = []
        self._strongest: dict[str, float] = {}
        self._r2: dict[int, _Outcome] = {}
        self._round = 1
        self.fatal: BaseException | None = None
        self.done = threading.Event()  # set once this judgment has finished (`as_ready`)

    # -- scheduling ---------------------------------------------------------------------

    def start(self) -> None:
        windows = screen.windows(self._source, self._run.window)
        if windows:
            self._enqueue([self._window_task(w) for w in windows])
        else:
            self._advance()

    def _window_task(self, w: screen.Window) -> _Task:
        return _Task(w.start, screen.request(self._source, self._concerns, w), w)

    def _enqueue(self, tasks: list[_Task]) -> None:
        with self._lock:
            self._pending.extend(tasks)
            ready = self._take()
            # Nothing sent and nothing in flight: the batch was aborted (another judgment's
            # fault) before this one could ask anything. It must still finish, or the
            # caller waits for it forever.
            drained = not ready and not self._pending and self._inflight == 0
        if ready:
            self._submit(ready)
        elif drained:
            self._advance()

    def _take(self) -> list[_Task]:
        """Tasks that may start now; the caller holds the lock."""
        pending = self._pending
        if self._batch.aborted:
            pending.clear()
            return []
        room = self._run.concurrency - self._inflight
        if room <= 0 or not pending:
            return []
        batch = [pending.popleft() for _ in range(min(room, len(pending)))]
        self._inflight += len(batch)
        self._requests += len(batch)
        return batch

    def _submit(self, batch: list[_Task]) -> None:
        for task in batch:
            try:
                self._workers.submit(self._work, task)
            except RuntimeError as exc:  # the pool was shut down under us
                self._complete(task, None, exc)

    def _work(self, task: _Task) -> None:
        outcome: _Outcome | list[_Task] | None = None
        fault: BaseException | None = None
        try:
            if not self._batch.aborted:
                outcome = self._ask(task)
        except BaseException as exc:  # anything else is a fault: end this judgment loudly
            fault = exc
        self._complete(task, outcome, fault)

    def _ask(self, task: _Task) -> _Outcome | list[_Task]:
        request = task.request
        try:
            reply = self._client.ask(request)
        except RequestTooLarge:
            w = task.window
            if w is not None and len(w) > 1:
                return [self._window_task(h) for h in w.halves()]
            # A lone passage over the cap, or a round-2 request: a finding is never split,
            # since each confirm reads its passage beside all the others (the seed).
            # A fixed message: the provider's wording varies and would make replays differ.
            keys = list(request["questions"])
            return _Outcome(error=("request_too_large", keys, _TOO_LARGE))
        except OutOfTime as exc:  # the time limit, not an unavailable model
            return _Outcome(error=("time_limit", list(request["questions"]), str(exc)))
        except ModelUnavailable as exc:
            return _Outcome(error=("unavailable", list(request["questions"]), str(exc)))
        if task.window is None:
            # Round 2: nothing waits on its answers, so they are checked with the report.
            return _Outcome(reply, questions=request["questions"])
        checked = check(request["questions"], reply.answers)
        if isinstance(checked, Rejected):
            return _Outcome(reply, error=(checked.kind, checked.keys, ""))
        scores = screen.scores(self._source, self._concerns, task.window, checked)
        return _Outcome(reply, scores=scores)

    def _complete(
        self, task: _Task, outcome: _Outcome | list[_Task] | None, fault: BaseException | None
    ) -> None:
        with self._lock:
            self._inflight -= 1
            if fault is not None:
                self._record_fault(fault)
            elif isinstance(outcome, list):
                self._pending.extendleft(reversed(outcome))  # halves go next, in order
            elif outcome is not None:
                if task.window is not None:
                    self._r1[task.slot] = (task.window, outcome)
                else:
                    self._r2[task.slot] = outcome
            ready = self._take() if self._pending else []
            drained = not self._pending and self._inflight == 0
        if ready:
            self._submit(ready)
        if drained:
            self._advance()

    def _advance(self) -> None:
        """Called once per round, by whichever thread finished its last request."""
        try:
            if self._next_round():
                return
        except BaseException as exc:  # a fault here must still end the wait for this job
            with self._lock:
                self._record_fault(exc)
        self.done.set()
        self._batch.finished()

    def _record_fault(self, exc: BaseException) -> None:
        """Keep the first fault and stop the batch; the caller holds the lock."""
        if self.fatal is None:
            self.fatal = exc
        self._batch.aborted = True

    def _next_round(self) -> bool:
        """Start round 2 after round 1; False when there is nothing left to send."""
        if self._round != 1 or self._batch.aborted:
            return False
        self._round = 2
        scores: dict[str, dict[str, float] | None] = {}
        for window, outcome in self._r1.values():
            if outcome.scores is not None:
                scores.update(outcome.scores)
            else:
                scores.update(dict.fromkeys(window.ids(self._source)))
        self._found, self._set_aside = gathering.gather(
            self._source.ids, self._concerns, scores, self._run.threshold
        )
        self._strongest = gathering.strongest(self._source.ids, self._concerns, scores)
        if not self._found:
            return False
        # One request per finding, always: each holds that finding's questions and nothing
        # else, so no confirm reads another finding's passages.
        self._enqueue(
            [
                _Task(i, verdict.request(self._source, self._concerns, g))
                for i, g in enumerate(self._found)
            ]
        )
        return True

    # -- the report ---------------------------------------------------------------------

    def assemble(self) -> Report:
        """The report, once every request has finished; built by the waiting caller."""
        errors: list[CiteError] = []
        tokens = [0, 0, 0, 0]
        models: dict[str, None] = {}

        def read(outcome: _Outcome) -> None:
            if outcome.reply is not None:
                u = outcome.reply.usage
                tokens[0] += u.input_tokens
                tokens[1] += u.output_tokens
                tokens[2] += u.cache_creation_input_tokens
                tokens[3] += u.cache_read_input_tokens
                if outcome.reply.model:
                    models.setdefault(outcome.reply.model)

        for start in sorted(self._r1):
            window, outcome = self._r1[start]
            read(outcome)
            if outcome.error is not None:
                kind, keys, message = outcome.error
                ids = window.ids(self._source)
                errors.append(CiteError(kind=kind, round=1, keys=keys, window=ids, message=message))

        findings: list[CiteFinding] = []
        for i, g in enumerate(self._found):
            outcome = self._r2[i]
            read(outcome)
            findings.append(self._finding(i, g, outcome))
        errors += [f.error for f in findings if f.error is not None]
        return Report(
            findings=findings,
            errors=errors,
            set_aside=self._set_aside,
            usage=Usage(
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                cache_creation_input_tokens=tokens[2],
                cache_read_input_tokens=tokens[3],
            ),
            models=list(models),
            requests=self._requests,
            strongest=self._strongest,
        )

    def _finding(self, index: int, g: gathering.Gathered, outcome: _Outcome) -> CiteFinding:
        concern = self._concerns.concerns[g.concern]
        base: dict[str, Any] = {
            "concern": concern.name,
            "kind": concern.kind,
            "passages": list(g.passages),
            "roles": dict(g.roles),
        }
        checked = _round2_answers(outcome)
        if not isinstance(checked, dict):
            kind, keys, message = checked
            error = CiteError(
                kind=kind, round=2, keys=keys, finding=index, concern=concern.name, message=message
            )
            return CiteFinding(**base, verdict=None, error=error)
        d = verdict.decide(self._concerns, g, checked, self._run.low, self._run.high)
        return CiteFinding(
            **base,
            verdict=d.verdict,
            citations=d.citations,
            checks=d.checks,
            descriptors=d.descriptors,
            confirms=d.confirms,
        )


def _round2_answers(outcome: _Outcome) -> dict[str, Checked] | tuple[ErrorKind, list[str], str]:
    """A finding's round-2 answers, checked now, or the error that left it without them."""
    if outcome.error is not None:
        return outcome.error
    # Reports are built only for a batch that ended without a fault or a cancel, so a
    # request that did not fail has its reply.
    assert outcome.reply is not None and outcome.questions is not None
    checked = check(outcome.questions, outcome.reply.answers)
    if isinstance(checked, Rejected):
        return (checked.kind, checked.keys, "")
    return checked


# -- public entry points ----------------------------------------------------------------

Item = tuple[CiteSource | Mapping[str, Any], Concerns | Mapping[str, Any]]


class CitePool:
    """One limit on requests in flight, shared by every judgment run through it.

    Use one pool for a whole session so claims judged concurrently, from any number of
    threads, stay under a single global concurrency limit:

        with CitePool(16) as pool:
            reports = pool.judge_many([(source, concerns), ...], client)

    Each judgment still honours its own `concurrency` option inside the pool's limit.
    Do not call the pool from inside a client running on it: that would wait on itself.
    """

    def __init__(self, concurrency: int = 4) -> None:
        self.concurrency = CiteOptions(concurrency=concurrency).concurrency
        self._workers = Workers(self.concurrency)

    def judge(
        self,
        source: CiteSource | Mapping[str, Any],
        concerns: Concerns | Mapping[str, Any],
        client: CiteClient,
        options: Options = None,
    ) -> Report:
        return self.judge_many([(source, concerns)], client, options)[0]

    def judge_many(
        self, items: Iterable[Item], client: CiteClient, options: Options = None
    ) -> list[Report]:
        """Judge every (source, concerns) pair; reports come back in input order.

        Everything is validated before the first request. A fault (anything but a refused,
        unavailable or unreadable request) stops the others and is raised.
        """
        return list(self.judge_each(items, client, options))

    def judge_each(
        self, items: Iterable[Item], client: CiteClient, options: Options = None
    ) -> Iterator[Report]:
        """`judge_many`, but each report is built only when the iterator reaches it.

        Every request has been answered when this returns (a fault is raised here). A
        caller that reads the reports one by one never holds them all: for thousands of
        judgments they are most of the memory, and of the garbage collector's work.
        """
        return self.submit(items, client, options).reports()

    def submit(
        self,
        items: Iterable[Item],
        client: CiteClient,
        options: Options = None,
        on_done: Callable[[], None] | None = None,
    ) -> Pending:
        """Validate and start every judgment, and return at once; see `Pending`.

        `on_done` is called (from a pool thread) each time one judgment has finished."""
        run = as_options(options)
        work = [(as_source(s), as_concerns(c)) for s, c in items]
        batch = _Batch(len(work), on_done)
        jobs = deque(_Job(run, s, c, client, self._workers, batch) for s, c in work)
        for job in jobs:
            job.start()
        return Pending(jobs, batch)

    def stream(
        self,
        items: Iterable[Item],
        client: CiteClient,
        options: Options = None,
        on_done: Callable[[], None] | None = None,
    ) -> Pending:
        """`submit`, but each judgment is validated and started as soon as it is drawn.

        For a caller whose items take work to make (the audit splits and ranks a document
        for each): the first requests go out while the rest are being made. Should drawing
        or validating an item fail, the judgments already started are cancelled (those in
        flight waited for) and the error is raised; nothing of the batch is reported."""
        run = as_options(options)
        batch = _Batch(0, on_done, open=True)
        jobs: deque[_Job] = deque()
        pending = Pending(jobs, batch)
        try:
            for s, c in items:
                job = _Job(run, as_source(s), as_concerns(c), client, self._workers, batch)
                batch.join()
                jobs.append(job)
                job.start()
        except BaseException as exc:
            batch.seal()
            # Interrupted (SIGINT/SIGTERM, not an Exception): no waiting for requests in flight.
            pending.cancel(wait=isinstance(exc, Exception))
            raise
        batch.seal()
        return pending

    def close(self, join: bool = True) -> None:
        self._workers.close(join)

    def __enter__(self) -> CitePool:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        # Stopped by SIGINT/SIGTERM (not an Exception): no waiting for requests in flight.
        self.close(join=exc is None or isinstance(exc, Exception))


class Pending:
    """Judgments running on a pool: the caller may do other work, then read the reports.

    `reports()` waits for the last reply, raises a fault if one ended the batch, and
    builds each report as its iterator reaches it. `cancel()` drops the requests not yet
    sent and waits for those in flight, so no client call outlives it.
    """

    def __init__(self, jobs: deque[_Job], batch: _Batch) -> None:
        self._jobs = jobs
        self._batch = batch
        self._cancelled = False

    def wait(self) -> None:
        self._batch.done.wait()
        for job in self._jobs:
            if job.fatal is not None:
                raise job.fatal
        if self._cancelled:
            raise RuntimeError("cite: the batch was cancelled before it finished; no reports")

    def cancel(self, wait: bool = True) -> None:
        """Drop what is not yet sent and wait for what is; a no-op once the batch is done.
        `wait=False` (the process is being interrupted): do not wait for requests in
        flight; their workers are daemon threads and their replies are dropped."""
        if self._batch.done.is_set():
            return
        self._cancelled = True
        self._batch.aborted = True
        if wait:
            self._batch.done.wait()

    def reports(self) -> Iterator[Report]:
        self.wait()
        return _assembled(self._jobs)

    def as_ready(self) -> Iterator[Report]:
        """The reports in input order, each as soon as its own judgment has finished.

        Unlike `reports()`, the first comes while later judgments are still being asked,
        so a caller can read it during their wait. A fault (or a cancel) is raised when the
        iterator next reaches a report after it, and no report follows it."""
        jobs = self._jobs
        while jobs:
            job = jobs[0]
            if not job.done.is_set():
                job.done.wait()
                # Woken once, read what else ended meanwhile: a thread just woken runs
                # cold, so one wake per judgment was most of the caller's CPU.
                self._batch.done.wait(_COALESCE)
            if self._batch.aborted:
                self.wait()  # raises the fault, or that the batch was cancelled
                raise RuntimeError("cite: the batch was stopped before it finished; no reports")
            jobs.popleft()
            yield job.assemble()


_COALESCE = 0.02  # seconds `as_ready` lets replies gather after a wake (≤ 50 wakes a second)


def _assembled(jobs: deque[_Job]) -> Iterator[Report]:
    # Built by the caller, one after another, rather than by each job's last worker: this
    # loop runs warm, where a worker just woken from waiting on the network runs the same
    # code several times slower (bench/bench_audit.py).
    while jobs:
        yield jobs.popleft().assemble()


def judge(
    source: CiteSource | Mapping[str, Any],
    concerns: Concerns | Mapping[str, Any],
    client: CiteClient,
    options: Options = None,
    *,
    pool: CitePool | None = None,
) -> Report:
    """Judge one source against `concerns` (the port of `Cite.judge/4`).

    Without `pool`, a private pool of `concurrency` threads is used; pass a shared
    `CitePool` to keep many concurrent judgments under one global limit.
    """
    return judge_many([(source, concerns)], client, options, pool=pool)[0]


def judge_many(
    items: Iterable[Item],
    client: CiteClient,
    options: Options = None,
    *,
    pool: CitePool | None = None,
) -> list[Report]:
    """Judge many sources at once, at most `concurrency` requests in flight overall."""
    return list(judge_each(items, client, options, pool=pool))


def judge_each(
    items: Iterable[Item],
    client: CiteClient,
    options: Options = None,
    *,
    pool: CitePool | None = None,
) -> Iterator[Report]:
    """`judge_many`, building each report only when the returned iterator reaches it."""
    run = as_options(options)
    if pool is not None:
        return pool.judge_each(items, client, run)
    with CitePool(run.concurrency) as own:
        return own.judge_each(items, client, run)


__all__ = ["CiteOptionsError", "CitePool", "Pending", "judge", "judge_each", "judge_many"]
