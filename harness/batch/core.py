"""`judge_batch`: every session under a root, judged in one process.

Each session gets exactly what `judge run` gives it: `judge_session` with the same
options (its judge.json, `.judge/` artifacts, lock, atomic writes and fallback). What
the batch adds is shared: one HTTP client (its connections spread over pools of about
`config.CONNECTIONS_PER_POOL`, harness.model.client) for the judge and audit, one
`CitePool` bounding audit requests in flight across all sessions, a pool of `sessions`
threads, and one `Budget` of tokens and wall-clock time. A session's failure
of any kind (a configuration fault of its own, a replay that ran dry, an unexpected
exception) ends that session only; the others go on.

Resume is the up-to-date rule (harness.run.uptodate): a session whose judge.json a completed
run wrote on identical inputs is skipped, without a model call, unless `force`. A batch
killed at any moment and started again therefore does only what is left.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import clock, config
from harness.batch.admission import Admission, Pass
from harness.batch.batchapi import Answering
from harness.batch.discover import discover
from harness.batch.limits import BatchLimits, Budget
from harness.batch.progress import Tracker
from harness.batch.result import BatchResult, SessionResult
from harness.batch.shard import Shard, parse_shard
from harness.errors import EXIT_FAILED, JudgeError, ReplayError, UsageError, exit_code_for
from harness.events import Event, Halt
from harness.interrupt import Interrupted, as_interrupted, deferred
from harness.model.seam import ModelReply
from harness.run import RunHooks, RunOptions, judge_session
from harness.session.file_problems import summary

# `judge run` options that name one file per run: in a batch they are per session.
_PER_SESSION = RunOptions.per_session()


class _MissingReplay:
    """The judge's model (a `ModelAPI`) for a session with no replay in `replay_dir`: the
    first model call is a loud ReplayError for that session (a session with no findings
    needs none)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply:
        raise ReplayError(
            f"no replay for this session: {self._path} does not exist; record one with "
            "`judge run SESSION --record FILE`, or judge this session without --replay-dir"
        )


@dataclass(slots=True)
class _Shared:
    """What every session of a live batch shares: one SDK client, one cite client."""

    client: Any = None
    cite_client: Any = None
    owned: list[Any] = field(default_factory=list)
    lockstep: Any = None  # harness.batch.lockstep.Lockstep with --batch-api
    # --record-dir: each session records through clients of its own (the recording is
    # made at the HTTP layer), or with --batch-api what the batches answered it.
    record_dir: Path | None = None
    pacer: Any = None  # harness.model.pacing.Pacer of the shared client (a live batch)
    # Sessions prepare a few at a time, each up to its first phase (harness.batch.admission).
    # Looked up when a batch starts, not when this class is made: a test narrows it.
    admission: Admission | None = field(default_factory=lambda: Admission())

    def close(self) -> None:
        for item in self.owned:
            with contextlib.suppress(Exception):
                item.close()


def _shared_clients(opts: RunOptions, client: Any, cite_client: Any, in_flight: int = 0) -> _Shared:
    """The clients every session shares: the caller's, or one SDK client (and its pacer)
    built here, with the audit's client over it (harness.model.resolve)."""
    if client is not None:
        return _Shared(client, cite_client)
    from harness.model import client as sdk_clients
    from harness.model.pacing import Pacer
    from harness.model.resolve import resolve_cite

    # Raises ConfigError (exit 2) without a key, before any session is touched. One
    # connection kept alive per request the batch may have in flight; one pacer: every
    # session waits while the API's rate limit is closed. Each session's run puts its own
    # judge model over this client (harness.model.resolve.resolve_judge): its own deadline.
    pacer = Pacer()
    settings = sdk_clients.ClientSettings(
        timeout=opts.timeout, max_retries=opts.max_retries, connections=in_flight, pacer=pacer
    )
    built = sdk_clients.build_client(settings)
    cite = cite_client
    if cite is None and opts.cite:
        # One audit request finds out a refused key for the whole batch: the others wait
        # for its answer instead of going out at --cite-requests at once.
        cite = resolve_cite(model=opts.cite_model, sdk=built.client).client
    return _Shared(built.client, cite, [built.client], pacer=pacer)


def judge_batch(
    root: str | Path,
    sessions: list[str] | None = None,
    *,
    limits: BatchLimits | None = None,
    replay_dir: str | Path | None = None,
    record_dir: str | Path | None = None,
    force: bool = False,
    on_result: Callable[[SessionResult], None] | None = None,
    tracker: Tracker | None = None,
    client: Any = None,
    cite_client: Any = None,
    batch_api: bool = False,
    batch_poll: float = config.BATCH_POLL_SECONDS,
    shard: Shard | str | None = None,
    **options: Any,
) -> BatchResult:
    """Judge the sessions under `root` (or only `sessions`, by folder name).

    `options` are `judge_session`'s (`judge run`'s), applied to every session, except
    those naming one file per run (`replay`, `record`, `transcript`...): `replay_dir`
    answers each session from `DIR/<name>.jsonl` and its audit from `DIR/<name>.cite.jsonl`
    (offline without one, as `judge run --replay` does); `record_dir` records each session
    as `judge run --record` does, to `DIR/<name>.jsonl` and `DIR/<name>.cite.jsonl` (so
    `replay_dir=DIR` replays it), through clients of each session's own (with `batch_api`,
    what the batches answered it: harness.batch.recording). `client` /
    `cite_client` replace the shared clients (tests). `on_result` is called on this thread
    as each session ends, with its whole result (judgment and run record); the returned
    `BatchResult` keeps each session's table row instead of those (`SessionResult.slim`);
    `tracker` receives every session's progress events. Raises `UsageError` /
    `ConfigError` only for the batch's own usage or configuration, before any session.
    With `batch_api`, the audit of every session that is not up to date goes through the
    Message Batches API first (harness.batch.batchapi), polled every `batch_poll` s.
    With `shard` (`Shard`, or `K/N` / `auto/N`), only the sessions of that shard are
    judged (harness.batch.shard), and `--batch-api` keeps its state in the shard's folder.
    """
    limits = limits or BatchLimits()
    for name, instead in _PER_SESSION.items():
        if options.get(name) is not None:
            raise UsageError(f"judge batch: `{name}` names one file per run; use {instead}")
    try:
        opts = RunOptions(**options)
    except Exception as exc:
        raise UsageError(f"invalid run options: {exc}") from exc
    if isinstance(shard, str):
        shard = parse_shard(shard)

    too_many = config.run_limit_refusal(
        opts.model, opts.max_output_tokens, opts.cite_model if opts.cite else None
    )
    if too_many is not None:
        raise UsageError(f"judge batch: {too_many}")  # before any session is judged
    folders = discover(Path(root), sessions)
    if shard is not None:  # directly under ROOT: the path relative to it is the name
        folders = [f for f in folders if shard.holds(f.name)]
    replays = Path(replay_dir).expanduser() if replay_dir is not None else None
    if replays is not None and not replays.is_dir():
        raise UsageError(f"--replay-dir {replays} does not exist or is not a folder")
    records = _record_dir(record_dir, replays, client, cite_client)
    # A recording answers everything (a --batch-api recording holds what the batches
    # answered): with --replay-dir there is nothing to send, and --batch-api is moot.
    moot = batch_api and replays is not None
    batch_api = batch_api and not moot
    if batch_api and (cite_client is not None or not opts.cite):
        raise UsageError(
            "--batch-api sends the citation audit through the Message Batches API: it needs "
            "the audit (no --no-cite)"
        )
    if batch_api and opts.max_output_tokens > 16_000:
        raise UsageError(
            "--batch-api sends each agent turn in a Message Batch, which is not streamed: "
            "use --max-output-tokens 16000 or less"
        )
    shared = _Shared(client, cite_client) if replays is not None else None
    if shared is None:
        shared = _shared_clients(opts, client, cite_client, limits.sessions + limits.cite_requests)
    if records is not None:  # created once the key is known to be there
        try:
            records.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"--record-dir {records} cannot be created: {exc.strerror or exc}; "
                "name a folder you can write"
            ) from exc
    shared.record_dir = records
    top = Path(root).expanduser().resolve()
    with contextlib.ExitStack() as held:
        try:
            state_dir = _state_folder(top, shard, held) if batch_api else None
        except JudgeError:
            shared.close()
            raise
        return _judge_all(
            folders,
            top,
            state_dir,
            opts,
            options,
            limits,
            shared,
            replays,
            tracker,
            force,
            on_result,
            moot,
            batch_poll,
        )


def _judge_all(
    folders: list[Path],
    top: Path,
    state_dir: Path | None,
    opts: RunOptions,
    options: dict[str, Any],
    limits: BatchLimits,
    shared: _Shared,
    replays: Path | None,
    tracker: Tracker | None,
    force: bool,
    on_result: Callable[[SessionResult], None] | None,
    moot: bool,
    batch_poll: float,
) -> BatchResult:
    """`judge_batch` past its checks, its state folder held (with --batch-api)."""
    tracker = tracker or Tracker()
    # Past every usage and configuration check: the batch begins (its display starts now,
    # so an error before this prints no progress), the Message Batches planning included.
    tracker.begin(len(folders))
    if moot:
        tracker.say("judge batch: --replay-dir answers every session; --batch-api sends nothing")
    # Before any submission: the batches are checked against it, and every request paid
    # for (and only those) is counted on the progress display as it is paid.
    budget = Budget(limits, on_paid=tracker.paid, on_replayed=tracker.replayed)
    if shared.pacer is not None:  # a wait for the rate limit ends at the batch's limits
        shared.pacer.stop = budget.reason
    answering: Any = None
    stats: Any = None
    if state_dir is not None:  # --batch-api
        from harness.batch.batchapi import plan_audits
        from harness.run.uptodate import is_fresh

        todo = [f for f in folders if force or not is_fresh(f, opts)]
        answering, stats = plan_audits(
            todo,
            state_dir,
            opts,
            shared.client,
            poll=batch_poll,
            say=tracker.say,
            budget=budget,
        )
        shared.cite_client = answering
        from harness.batch.lockstep import Lockstep, prune_conversations

        pruned = prune_conversations(state_dir, top)
        if pruned:
            tracker.say(
                f"judge batch: removed {pruned} saved conversation file(s) of sessions no "
                "longer under ROOT (or left by a killed write)"
            )
        shared.lockstep = Lockstep(
            shared.client,
            state_dir,
            poll=batch_poll,
            say=tracker.say,
            budget=budget,
            afresh=force,
        )
    from harness.cite import CitePool

    results: list[SessionResult] = []
    try:
        with CitePool(limits.cite_requests) as pool:

            def one(folder: Path) -> SessionResult:
                return _judge_one(
                    folder, options, shared, replays, pool, budget, tracker, force=force
                )

            # With --batch-api a session joins the lockstep when it is handed to a thread,
            # and leaves it once the session handed out in its place has joined: no round
            # leaves out a session that has not reached its first turn yet.
            step = shared.lockstep
            joins = (step.enter, step.leave) if step is not None else None

            def each(result: SessionResult) -> None:
                results.append(result.slim())
                tracker.finished(result.session, result)
                if on_result is not None:
                    on_result(result)

            stopped = _run_all(folders, one, limits.sessions, budget, each, joins)
    finally:
        shared.close()
    order = {f.name: i for i, f in enumerate(folders)}
    results.sort(key=lambda r: order.get(r.session, len(order)))
    api_stats: dict[str, Any] | None = None
    if stats is not None:
        stats.from_book, stats.fallbacks = answering.from_book, answering.fallbacks
        api_stats = {**stats.as_dict(), **shared.lockstep.stats.as_dict()}
        api_stats["channels"] = {
            "audit": answering.channels.model_dump(),
            "judge": shared.lockstep.stats.channels.model_dump(),
        }
    batch = BatchResult(
        top,
        results,
        time.monotonic() - budget.started,
        tracker.requests,  # counted as paid (Budget.add -> Tracker.paid)
        budget.tokens,
        api_stats,
        shared.pacer.stats().as_dict() if shared.pacer is not None else None,
        replayed=tracker.replayed_requests,
    )
    if stopped is not None:  # every session has its result: now the interrupt goes on
        raise BatchInterrupted(stopped.signum, batch)
    return batch


class BatchInterrupted(Interrupted):
    """The batch was interrupted (Ctrl-C, SIGTERM, or a KeyboardInterrupt in `on_result`)
    and wound down: `result` holds every session's result (those in flight ended as their
    limits end them, the others were not started)."""

    def __init__(self, signum: int, result: BatchResult) -> None:
        super().__init__(signum)
        self.result = result


def _state_folder(top: Path, shard: Shard | None, held: contextlib.ExitStack) -> Path:
    """`ROOT/.judge-batch` (or its `shard-K-of-N/`), where --batch-api keeps its state,
    made if need be and locked in `held` (harness.batch.shard); a `UsageError` if it is not
    a folder it can use, `BatchBusy` if another batch holds it."""
    from harness.batch.shard import held as holding
    from harness.batch.shard import one_count
    from harness.batch.state import STATE_DIR

    folder = _made(top / STATE_DIR)
    if shard is None:
        held.enter_context(holding(folder))
        return folder
    held.enter_context(holding(folder, shared=True, what=f"shard {shard}"))
    held.enter_context(one_count(folder, shard))  # shards of another N: refused at once
    mine = _made(folder / shard.folder)
    held.enter_context(holding(mine, what=f"shard {shard}"))
    return mine


def _made(folder: Path) -> Path:
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise UsageError(
            f"{folder} is not a folder: --batch-api keeps its batch ids and answers there; "
            "remove or rename it"
        )
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{folder} cannot be created: {exc.strerror or exc}; --batch-api keeps its "
            "state there, so ROOT must be writable"
        ) from exc
    return folder


def _record_dir(
    record_dir: str | Path | None,
    replays: Path | None,
    client: Any,
    cite_client: Any,
) -> Path | None:
    """The folder `--record-dir` names; a `UsageError` for what it cannot do."""
    if record_dir is None:
        return None
    if replays is not None:
        raise UsageError("--record-dir and --replay-dir cannot be used together; choose one")
    if client is not None or cite_client is not None:
        raise UsageError("record_dir records at the HTTP layer: it cannot record a given client")
    folder = Path(record_dir).expanduser()
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--record-dir {folder} is not a folder; name a folder to record into")
    return folder


def _run_all(
    folders: list[Path],
    one: Callable[[Path], SessionResult],
    width: int,
    budget: Budget,
    each: Callable[[SessionResult], None],
    joins: tuple[Callable[[], None], Callable[[], None]] | None = None,
) -> Interrupted | None:
    """Run `one` on every folder, `width` at once; give each result to `each` (on this
    thread) as it ends.

    Sessions are handed out one at a time as threads free up, so a session that has not
    started when a limit is reached is never started. `joins` (enter, leave) counts the
    sessions handed out: every session handed out enters before any starts, and a session
    that ended leaves only after the one handed out in its place entered, so the count
    never drops between them (the lockstep's rounds wait for both).

    An interrupt (Ctrl-C, SIGTERM) halts the budget, so the sessions in flight stop at
    their next turn or audit request and end as a run ends when its limits do (the
    advisory judge.json, saying why); their results are still given out, and each session
    never handed out gets one saying it was not started. The interrupt is then returned,
    to be raised once the batch's account is complete. It lands only while the batch
    waits for a session: the bookkeeping around is `deferred` (harness.interrupt), and a
    second signal is ignored."""
    queue = list(reversed(folders))
    running: set[Future[SessionResult]] = set()
    enter, leave = joins if joins is not None else (None, None)
    stopped: Interrupted | None = None

    def hand_out(ended: set[Future[SessionResult]]) -> None:
        free = width - len(running) if stopped is None else 0
        hand = [queue.pop() for _ in range(min(len(queue), free))]
        if enter is not None and leave is not None:
            for _ in hand:
                enter()
            for _ in ended:  # the sessions that ended, once those in their place entered
                leave()
        running.update(executor.submit(one, folder) for folder in hand)

    ready: list[Future[SessionResult]] = []  # ended, their results not yet given out
    with ThreadPoolExecutor(width, thread_name_prefix="judge-batch") as executor:
        begun = False
        while running or ready or not begun:
            try:
                if not begun:
                    begun = True
                    with deferred():
                        hand_out(set())
                if not ready and running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    with deferred():
                        running.difference_update(done)
                        hand_out(done)  # before the results go out: their reader may block
                        ready.extend(done)
                with deferred():
                    while ready:
                        each(ready.pop(0).result())  # taken first: each is given out once
            except (Interrupted, KeyboardInterrupt) as exc:
                if stopped is not None:
                    raise
                stopped = as_interrupted(exc)
                budget.halt("the batch was interrupted")
            except BaseException:  # a fault of the caller's `each`: stop the sessions too
                budget.halt("the batch was interrupted")
                raise
        with deferred():
            for folder in reversed(queue):
                halt = budget.reason() or "the batch was interrupted"
                each(_not_started(folder, halt, "interrupted"))
    return stopped


def _is_file(path: Path) -> bool:
    """Whether a replay is there; a name the file system cannot hold (a session folder of
    250 bytes makes `<name>.cite.jsonl` longer than 255) is no replay, never a crash."""
    try:
        return path.is_file()
    except OSError:
        return False


def _not_started(folder: Path, halt: str, halted: Halt) -> SessionResult:
    note = f"not judged: {halt} before this session started; run the batch again"
    return SessionResult(
        folder.name, folder, "not-started", False, note, True, EXIT_FAILED, halted=halted
    )


def _halted(budget: Budget) -> Halt:
    """Why the batch stops what it stops: its interrupt (the one halt of its budget) or,
    without one, a limit."""
    return "interrupted" if budget.halted() is not None else "limit"


def _judge_one(
    folder: Path,
    options: dict[str, Any],
    shared: _Shared,
    replays: Path | None,
    pool: Any,
    budget: Budget,
    tracker: Tracker,
    *,
    force: bool,
) -> SessionResult:
    name = folder.name
    prepared = Pass(shared.admission)
    prepared.enter()  # its turn to prepare: a limit reached meanwhile is seen below
    started = time.monotonic()
    halt = budget.reason()
    if halt:
        prepared.leave()
        return _not_started(folder, halt, _halted(budget))
    tracker.started(name)
    # The batch's limits reach a session through `stop` (before each turn and each audit
    # request), never through its options: those are the inputs of the up-to-date rule,
    # and a restarted batch must find its finished sessions up to date.
    run_options = dict(options)
    client, cite_client = shared.client, shared.cite_client
    if replays is not None:
        judge_replay = replays / f"{name}.jsonl"
        cite_replay = replays / f"{name}.cite.jsonl"
        if _is_file(judge_replay):
            run_options["replay"] = judge_replay
        else:
            client = _MissingReplay(judge_replay)
        if _is_file(cite_replay):
            run_options["cite_replay"] = cite_replay
    lockstep = shared.lockstep.client(name) if shared.lockstep is not None else None
    if isinstance(cite_client, Answering):  # counts this session's requests by channel
        cite_client = cite_client.for_session()
    recording: Any = None
    if shared.record_dir is not None and lockstep is not None:  # what the batches answered
        from harness.batch.recording import SessionRecording

        recording = SessionRecording(shared.record_dir, name, cite_client)
        cite_client, lockstep.given = recording.cite, recording.messages
    elif shared.record_dir is not None:  # `judge run --record`: the audit's beside the judge's
        run_options["record"] = shared.record_dir / f"{name}.jsonl"
        client, cite_client = None, None

    def on_event(event: Event) -> None:
        tokens = event.get("tokens")
        kind = event.get("event")
        # --batch-api: the batches count what they pay as they read it (a saved answer
        # replayed is not paid again), so the events' tokens are not counted twice.
        # --replay-dir: every turn and audit answer comes from a recording, sent nowhere;
        # its tokens count against the batch's budget as the recorded run's did.
        if kind in ("turn", "audit-request") and isinstance(tokens, int) and lockstep is None:
            budget.add(tokens, replayed=replays is not None)
        tracker.event(name, event)

    # The run's milestones steer the batch (its events above are for display and budget):
    # its audit or its judge begins, the preparation is over; --batch-api: its turns are
    # saved under the run's inputs.
    stopped: list[Halt] = []  # why the batch first stopped this session, as its run was told

    def stop() -> str | None:
        reason = budget.reason()
        if reason is not None and not stopped:  # asked before every turn and audit request
            stopped.append(_halted(budget))
        return reason

    def halted() -> Halt | None:
        if stopped:
            return stopped[0]
        if lockstep is not None and lockstep.halted:  # a turn not sent
            return _halted(budget)
        return None

    hooks = RunHooks(on_prepared=prepared.leave, halted=halted)
    if lockstep is not None:
        hooks = RunHooks(on_prepared=prepared.leave, on_inputs=lockstep.bind, halted=halted)

    if lockstep is not None:  # --batch-api: this session's turns go out in rounds
        client = lockstep

    try:
        # Every read and request of the session ends at the batch's limit too (a slow
        # snapshot, a reply still arriving): its own deadlines nest inside (harness.clock).
        with clock.scope(budget.deadline):
            result = judge_session(
                folder,
                client=client,
                cite_client=cite_client,
                force=force,
                progress=on_event,
                stop=stop,
                cite_pool=pool,
                hooks=hooks,
                **run_options,
            )
    except JudgeError as exc:
        return SessionResult(
            name,
            folder,
            "not-written",
            False,
            exc.message,
            False,
            exit_code_for(exc),
            seconds=time.monotonic() - started,
        )
    except Exception as exc:  # a fault of ours, for this session only
        note = f"internal error: {type(exc).__name__}: {str(exc)[:300]}"
        failed = SessionResult(name, folder, "error", False, note, False, EXIT_FAILED)
        failed.seconds = time.monotonic() - started
        return failed
    finally:
        prepared.leave()
    if lockstep is not None:
        lockstep.finished(result.outcome)
    if recording is not None and result.outcome != "up-to-date":
        recording.save(result.record)
    return SessionResult(
        name,
        folder,
        result.outcome,
        result.receipt.wroteJudge,
        result.receipt.note,
        result.outcome == "up-to-date",
        result.exit_code,
        result.judgment,
        result.record,
        time.monotonic() - started,
        files=summary(result.session_problems),
        files_count=len(result.session_problems),
        halted=halted(),
    )


__all__ = ["BatchInterrupted", "BatchLimits", "BatchResult", "SessionResult", "judge_batch"]
