"""The shell: the only part that calls the client.

It validates the options into a `Run`, sends each round's requests (at most `concurrency`
in flight per judgment, and at most the pool's size across judgments sharing a `CitePool`),
halves a round-1 window the provider refuses as too large, checks every reply once, and
assembles the report. Round 2 starts only when round 1 has finished. Results are kept by
window and finding, never by arrival, so the report is the same at any concurrency.

Scheduling is callback-driven: a finished request hands the next one to the pool from its
worker thread, so thousands of judgments need no thread of their own.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from harness.cite import gather as gathering
from harness.cite import screen, verdict
from harness.cite.client import CiteClient, Reply, Request, RequestTooLarge
from harness.cite.concerns import Concerns, as_concerns
from harness.cite.options import CiteOptionsError, Run, as_run
from harness.cite.replies import Checked, Rejected, check
from harness.cite.report import CiteError, ErrorKind, Finding, Report, Usage
from harness.cite.source import Source, as_source
from harness.cite.workers import Workers
from harness.errors import ModelUnavailable

Options = Run | Mapping[str, Any] | None
_TOO_LARGE = "the provider refused the request as too large"


class _Batch:
    """Judgments started together: one abort flag, and one wake-up when all are done."""

    def __init__(self, size: int) -> None:
        self.abort = threading.Event()
        self.done = threading.Event()
        self._left = size
        self._lock = threading.Lock()
        if size == 0:
            self.done.set()

    def finished(self) -> None:
        # One wake-up for the whole batch: waiting on each judgment in turn would wake the
        # caller thousands of times.
        with self._lock:
            self._left -= 1
            if self._left == 0:
                self.done.set()


@dataclass(slots=True)
class _Task:
    round: int
    slot: int  # round 1: the window's first passage index; round 2: the finding index
    request: Request
    window: screen.Window | None = None


@dataclass(slots=True)
class _Outcome:
    reply: Reply | None = None
    scores: screen.Scores | None = None  # round 1
    answers: dict[str, Checked] | None = None  # round 2
    error: tuple[ErrorKind, list[str], str] | None = None


class _Job:
    """One judgment's state machine; every method may run on any pool thread."""

    def __init__(
        self,
        run: Run,
        source: Source,
        concerns: Concerns,
        client: CiteClient,
        workers: Workers,
        batch: _Batch,
    ) -> None:
        self._run, self._source, self._concerns, self._client = run, source, concerns, client
        self._workers, self._batch, self._abort = workers, batch, batch.abort
        self._lock = threading.Lock()
        self._pending: deque[_Task] = deque()
        self._inflight = 0
        self._requests = 0
        self._r1: dict[int, tuple[screen.Window, _Outcome]] = {}
        self._found: list[gathering.Gathered] = []
        self._set_aside: list[str] = []
        self._r2: dict[int, _Outcome] = {}
        self._round = 1
        self.fatal: BaseException | None = None
        self.report: Report | None = None

    # -- scheduling ---------------------------------------------------------------------

    def start(self) -> None:
        windows = screen.windows(self._source, self._run.window)
        if windows:
            self._enqueue([self._window_task(w) for w in windows])
        else:
            self._advance()

    def _window_task(self, w: screen.Window) -> _Task:
        return _Task(1, w.start, screen.request(self._source, self._concerns, w), w)

    def _enqueue(self, tasks: list[_Task]) -> None:
        with self._lock:
            self._pending.extend(tasks)
            ready = self._take()
        self._submit(ready)

    def _take(self) -> list[_Task]:
        """Tasks that may start now; the caller holds the lock."""
        if self._abort.is_set():
            self._pending.clear()
        batch: list[_Task] = []
        while self._pending and self._inflight < self._run.concurrency:
            batch.append(self._pending.popleft())
            self._inflight += 1
        self._requests += len(batch)
        return batch

    def _submit(self, batch: list[_Task]) -> None:
        for task in batch:
            try:
                self._workers.submit(partial(self._work, task))
            except RuntimeError as exc:  # the pool was shut down under us
                self._complete(task, None, exc)

    def _work(self, task: _Task) -> None:
        outcome: _Outcome | list[_Task] | None = None
        fault: BaseException | None = None
        try:
            if not self._abort.is_set():
                outcome = self._ask(task)
        except BaseException as exc:  # anything else is a fault: end this judgment loudly
            fault = exc
        self._complete(task, outcome, fault)

    def _ask(self, task: _Task) -> _Outcome | list[_Task]:
        questions = task.request["questions"]
        try:
            reply = self._client.ask(task.request)
        except RequestTooLarge:
            w = task.window
            if w is not None and len(w) > 1:
                return [self._window_task(h) for h in w.halves()]
            # A fixed message: the provider's wording varies and would make replays differ.
            return _Outcome(error=("request_too_large", list(questions), _TOO_LARGE))
        except ModelUnavailable as exc:
            return _Outcome(error=("unavailable", list(questions), str(exc)))
        checked = check(questions, reply.answers)
        if isinstance(checked, Rejected):
            return _Outcome(reply, error=(checked.kind, checked.keys, ""))
        if task.window is not None:
            scores = screen.scores(self._source, self._concerns, task.window, checked)
            return _Outcome(reply, scores=scores)
        return _Outcome(reply, answers=checked)

    def _complete(
        self, task: _Task, outcome: _Outcome | list[_Task] | None, fault: BaseException | None
    ) -> None:
        with self._lock:
            self._inflight -= 1
            if fault is not None:
                if self.fatal is None:
                    self.fatal = fault
                self._abort.set()
            elif isinstance(outcome, list):
                self._pending.extendleft(reversed(outcome))  # halves go next, in order
            elif outcome is not None and task.window is not None:
                self._r1[task.slot] = (task.window, outcome)
            elif outcome is not None:
                self._r2[task.slot] = outcome
            ready = self._take()
            drained = not self._pending and self._inflight == 0
        self._submit(ready)
        if drained:
            self._advance()

    def _fault(self, exc: BaseException) -> None:
        with self._lock:
            if self.fatal is None:
                self.fatal = exc
            self._abort.set()

    def _advance(self) -> None:
        """Called once per round, by whichever thread finished its last request."""
        try:
            if self._next_round():
                return
            if not self._abort.is_set():
                self.report = self._assemble()
            # Drop what the report no longer needs: thousands of finished judgments can
            # wait for their batch, and every live object makes the collector slower.
            self._r1, self._r2, self._found = {}, {}, []
        except BaseException as exc:  # a fault here must still end the wait for this job
            self._fault(exc)
        self._batch.finished()

    def _next_round(self) -> bool:
        """Start round 2 after round 1; False when there is nothing left to send."""
        if self._round == 1 and not self._abort.is_set():
            self._round = 2
            scores: dict[str, dict[str, float] | None] = {}
            for window, outcome in self._r1.values():
                for pid in window.ids(self._source):
                    scores[pid] = None if outcome.scores is None else outcome.scores[pid]
            self._found, self._set_aside = gathering.gather(
                self._source.ids, self._concerns, scores, self._run.threshold
            )
            tasks = [
                _Task(2, i, verdict.request(self._source, self._concerns, g))
                for i, g in enumerate(self._found)
            ]
            if tasks:
                self._enqueue(tasks)
                return True
        return False

    # -- the report ---------------------------------------------------------------------

    def _assemble(self) -> Report:
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

        findings: list[Finding] = []
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
        )

    def _finding(self, index: int, g: gathering.Gathered, outcome: _Outcome) -> Finding:
        concern = self._concerns.concerns[g.concern]
        base: dict[str, Any] = {
            "concern": concern.name,
            "kind": concern.kind,
            "passages": list(g.passages),
            "roles": dict(g.roles),
        }
        if outcome.error is not None or outcome.answers is None:
            kind, keys, message = outcome.error or ("unavailable", [], "no reply")
            error = CiteError(
                kind=kind, round=2, keys=keys, finding=index, concern=concern.name, message=message
            )
            return Finding(**base, verdict=None, error=error)
        d = verdict.decide(self._concerns, g, outcome.answers, self._run.low, self._run.high)
        return Finding(
            **base,
            verdict=d.verdict,
            citations=d.citations,
            checks=d.checks,
            descriptors=d.descriptors,
        )


# -- public entry points ----------------------------------------------------------------

Item = tuple[Source | Mapping[str, Any], Concerns | Mapping[str, Any]]


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
        self.concurrency = Run(concurrency=concurrency).concurrency
        self._workers = Workers(self.concurrency)

    def judge(
        self,
        source: Source | Mapping[str, Any],
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
        run = as_run(options)
        work = [(as_source(s), as_concerns(c)) for s, c in items]
        batch = _Batch(len(work))
        jobs = [_Job(run, s, c, client, self._workers, batch) for s, c in work]
        for job in jobs:
            job.start()
        batch.done.wait()
        for job in jobs:
            if job.fatal is not None:
                raise job.fatal
        return [_report(job) for job in jobs]

    def close(self) -> None:
        self._workers.close()

    def __enter__(self) -> CitePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _report(job: _Job) -> Report:
    if job.report is None:  # only an aborted job lacks one, and abort always raises above
        raise RuntimeError("cite: judgment ended without a report")
    return job.report


def judge(
    source: Source | Mapping[str, Any],
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
    run = as_run(options)
    if pool is not None:
        return pool.judge_many(items, client, run)
    with CitePool(run.concurrency) as own:
        return own.judge_many(items, client, run)


__all__ = ["CiteOptionsError", "CitePool", "judge", "judge_many"]
