"""The one place that chooses the model clients of `judge run`, `judge cite` and `judge batch`.

`resolve_judge(given, settings)` turns what the caller handed in into the judge's
`ModelAPI` (harness.model.seam): our own `ModelAPI` as it is (batch's lockstep and
missing-replay models, a test's scripted one); an SDK-shaped client (an object with
`.messages.create`) behind `AnthropicModel`; nothing: a client built from `settings`
(ANTHROPIC_API_KEY, `--replay`, `--record`), which the caller must close (`owned`).

`resolve_cite(given, ...)` does the same for the audit: the caller's `CiteClient` as it
is; a replay (`--cite-replay`); or Claude over an SDK client (built here, or the batch's
shared one), its first request alone (`FirstAlone`: a refused key costs one request), and
recorded when asked (`RecordingCiteClient`). Every `ask()` wrapper an audit request passes
on its way to the API is composed here: the client's own in `resolve_cite`, and those of
one audit (its watch: progress, stop; its guard: deadline, breaker) in `audit_client`,
which the audit (harness.audit.core) calls once per audit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import clock, config
from harness.cite import CiteClient, RecordingCiteClient, ReplayCiteClient
from harness.cite.client import Reply, Request
from harness.errors import (
    ConfigError,
    Fault,
    InvalidRequest,
    JudgeError,
    ModelUnavailable,
    OutOfTime,
    RateLimited,
    UsageError,
)
from harness.events import OnEvent, ShouldStop, emit
from harness.model.seam import ModelAPI

if TYPE_CHECKING:  # the SDK's module: imported where a client is built, never at import
    from harness.model.client import BuiltClient, ClientSettings

DEFAULT_CITE_MODEL = config.SCREEN_MODEL


def _nothing() -> None:
    return None


@dataclass(slots=True)
class JudgeClient:
    """The judge's model and what comes with it."""

    model: ModelAPI
    # The SDK client behind `model` (built here or the caller's), None for a caller's own
    # ModelAPI: its replies are bounded by the run's deadline (`bound_replies`).
    built: BuiltClient | None = None
    # What the caller must close when the run ends (the SDK client built here).
    owned: list[Any] = field(default_factory=list)
    given: bool = False  # the caller handed in the client (no audit client is built then)

    def bound_replies(self, seconds: float, timeout: float) -> None:
        """No reply body may still be arriving `seconds` from now (+ grace); a caller's own
        ModelAPI keeps its own clock."""
        if self.built is not None:
            self.built.bound_replies(seconds, timeout)


def resolve_judge(
    given: object,
    settings: ClientSettings,
    *,
    stream: bool = False,
    replay_any: bool = False,
) -> JudgeClient:
    """The judge's `ModelAPI` for the caller's object (a `ModelAPI`, an SDK-shaped client,
    or None: built from `settings`). With `settings.replay` and its `record_meta`, another
    session's recording is a loud `ReplayError` unless `replay_any`. `stream`: replies are
    read event by event (large outputs; an SDK client only)."""
    from harness.model.client import BuiltClient, build_client
    from harness.model.messages import AnthropicModel

    if isinstance(given, ModelAPI):
        return JudgeClient(given, given=True)
    if given is not None:
        built = BuiltClient(given)  # type: ignore[arg-type]  # SDK-shaped: .messages.create
        return JudgeClient(AnthropicModel(built, stream=stream), built, given=True)
    if settings.replay is not None and settings.record_meta is not None and not replay_any:
        from harness.model.replay import check_binding

        check_binding(settings.replay, settings.record_meta)
    built = build_client(settings)
    return JudgeClient(AnthropicModel(built, stream=stream), built, [built.client])


@dataclass(slots=True)
class CiteClientHandle:
    client: CiteClient
    model: str
    kind: str  # "replay", "live" or "given"
    # Saves a recording, if any, and closes the SDK client it built: call once, at the end.
    finish: Callable[[], None] = field(default=_nothing)


class FirstAlone:
    """The first request goes alone; the others wait until the API has accepted or
    refused it.

    A key the API refuses (401/403, a `ConfigError`) ends the audit and the run; with
    `--cite-concurrency 8` all eight first requests used to be sent before the first
    refusal came back. Now one is: the waiting requests raise the same refusal without
    being sent. A client that can tell when the API has accepted a request (its `ask`
    takes `accepted`: `AnthropicCiteClient` then sends it streamed) lets the others go
    then, as soon as the reply's status is in; any other once the first is answered (or
    failed otherwise). A good key so costs the start of one reply, not a whole answer.
    """

    def __init__(self, inner: CiteClient) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._started = False
        self._settled = threading.Event()  # accepted, refused, answered or failed
        self._refused: str | None = None

    def __getattr__(self, name: str) -> Any:  # the rest is the wrapped client's
        return getattr(self._inner, name)

    def ask(self, request: Request) -> Reply:
        with self._lock:
            first, self._started = not self._started, True
        if not first:
            self._settled.wait()
            if self._refused is not None:
                raise ConfigError(self._refused)
            return self._inner.ask(request)
        try:
            if getattr(self._inner, "tells_accepted", False) is True:
                ask: Callable[..., Reply] = self._inner.ask
                return ask(request, accepted=self._settled.set)
            return self._inner.ask(request)
        except ConfigError as exc:  # raised before the stream opened: never accepted
            self._refused = exc.message
            raise
        finally:
            self._settled.set()


def live_cite_client(sdk_client: Any, model: str) -> CiteClient:
    """The audit's client over an SDK client (its own or a batch's shared one): the first
    request goes alone (`FirstAlone`), so a refused key costs one request."""
    from harness.model.cite_client import AnthropicCiteClient

    return FirstAlone(AnthropicCiteClient(sdk_client, model=model))


def resolve_cite(
    given: CiteClient | None = None,
    *,
    model: str = DEFAULT_CITE_MODEL,
    replay: Path | None = None,
    record: Path | None = None,
    timeout: float = config.TIMEOUT.default,
    max_retries: int = int(config.MAX_RETRIES.default),
    max_seconds: float | None = None,
    record_meta: dict[str, Any] | None = None,
    sdk: Any = None,
) -> CiteClientHandle:
    """The audit's client: `given` as it is; `ReplayCiteClient` for `replay`; otherwise
    `AnthropicCiteClient` (first request alone) over `sdk` (a batch's shared SDK client,
    closed by its owner) or an SDK client built as for the judge (ANTHROPIC_API_KEY /
    ANTHROPIC_BASE_URL as the SDK reads them; `ConfigError` without a key; closed by
    `finish`), wrapped in a `RecordingCiteClient` when `record` is given. With
    `max_seconds`, no response body of a client built here may still be arriving after
    that long (+ grace)."""
    if given is not None:
        return CiteClientHandle(given, model, "given")
    if replay is not None and record is not None:
        raise UsageError(config.REPLAY_WITH_RECORD)
    if replay is not None:
        return CiteClientHandle(ReplayCiteClient.load(replay), model, "replay")
    close: Callable[[], None] = _nothing
    if sdk is None:
        from harness.model.client import ClientSettings, build_client

        built = build_client(ClientSettings(timeout=timeout, max_retries=max_retries))
        if max_seconds is not None:
            built.bound_replies(max_seconds, timeout)
        sdk, close = built.client, built.client.close
    live = live_cite_client(sdk, model)
    if record is None:
        return CiteClientHandle(live, model, "live", close)
    recorder = RecordingCiteClient(live)
    target = record

    def save_and_close() -> None:
        try:
            recorder.save(target, record_meta)
        finally:
            close()

    return CiteClientHandle(recorder, model, "live", save_and_close)


def cite_recording(judge_recording: Path) -> Path:
    """Where `--record FILE` puts the audit's recording, and where `--replay FILE` looks
    for it: `F.jsonl` -> `F.cite.jsonl` (as the fixtures are named), else `FILE.cite.jsonl`."""
    name = judge_recording.name
    stem = name.removesuffix(".jsonl") if name.endswith(".jsonl") else name
    return judge_recording.with_name(stem + ".cite.jsonl")


def resolve_run_cite(
    given: CiteClient | None,
    *,
    model: str,
    judge_given: bool = False,
    cite_replay: Path | None = None,
    judge_replay: Path | None = None,
    record: Path | None = None,
    replay_any: bool = False,
    session_digest: str | None = None,
    timeout: float = config.TIMEOUT.default,
    max_retries: int = int(config.MAX_RETRIES.default),
    max_seconds: float | None = None,
) -> tuple[CiteClientHandle | None, str | None]:
    """The audit's client in `judge run`, or None and why the audit runs offline.

    The caller's `given` client; else `cite_replay`, or the recording beside the judge's
    `judge_replay` (`cite_recording`), checked to be this session's unless `replay_any`;
    else offline when the judge is replayed without one, or was supplied by the caller
    (`judge_given`); else Claude (`model`), recorded beside the judge's `record`. A client
    that cannot be built (no API key) is a reason to run offline, never an error."""
    if given is not None:
        return resolve_cite(given, model=model), None
    from harness.cite.replay import check_cite_binding, cite_meta

    meta = cite_meta(session_digest or "", model)
    replay = cite_replay
    if replay is None and judge_replay is not None and cite_recording(judge_replay).exists():
        replay = cite_recording(judge_replay)  # recorded beside the judge by --record
    if replay is not None:
        if not replay_any and session_digest is not None:
            check_cite_binding(replay, meta)
        return resolve_cite(model=model, replay=replay), None
    if judge_replay is not None:
        return None, (
            f"the judge is replayed (--replay) and neither --cite-replay nor "
            f"{cite_recording(judge_replay).name} beside the replay was given"
        )
    if judge_given:
        return None, "the caller supplied the judge's client and no cite client"
    try:
        handle = resolve_cite(
            model=model,
            timeout=timeout,
            max_retries=max_retries,
            max_seconds=max_seconds,
            # One --record captures the audit too, beside the judge's recording.
            record=None if record is None else cite_recording(record),
            record_meta=meta,
        )
    except ConfigError as exc:
        return None, f"no model client for the audit: {exc.message}"
    return handle, None


# -- the audit's own wrappers, per audit ------------------------------------------------


def audit_client(
    client: CiteClient,
    progress: OnEvent | None = None,
    stop: ShouldStop | None = None,
    deadline: clock.Deadline | None = None,
) -> Guard:
    """`client` as one audit sends its requests through it: watched (`Watched`: each
    answer and failure told to `progress`, new requests refused once `stop` says why)
    when either is given, then guarded (`Guard`: an API that stays down or a spent
    `deadline` fails fast; the replies' problems kept, each once)."""
    watched: CiteClient = client
    if progress is not None or stop is not None:
        watched = Watched(client, progress, stop)
    return Guard(watched, deadline=deadline)


class Guard:
    """Wraps a client so an API that is down, or a spent time budget, fails fast.

    After `trip` unavailable replies in a row, or once `deadline` (monotonic) has passed,
    every further request is refused as unavailable at once: each claim then ends as an
    `error` instead of waiting out the SDK's retries thousands of times. It also keeps
    what the client corrected in the replies (`Reply.problems`), each once (`said`).
    """

    def __init__(self, inner: CiteClient, *, trip: int = 8, deadline: clock.Deadline | None = None):
        self._inner = inner
        self._trip = trip
        self._deadline = deadline
        self._lock = threading.Lock()
        self._row = 0
        self.tripped: str | None = None
        self._said: dict[str, int] = {}  # a reply's problem -> the replies that had it

    def ask(self, request: Request) -> Reply:
        if self.tripped is not None:
            raise ModelUnavailable(self.tripped)
        if self._deadline is not None and self._deadline.expired:
            raise OutOfTime("the citation audit's time limit was reached")
        try:
            # The request runs on a pool's thread: its waits (each attempt, each retry,
            # the reply's body) end by the audit's deadline there too.
            with clock.scope(self._deadline or clock.NEVER):
                reply = self._inner.ask(request)
        except OutOfTime:  # the time limit: says nothing of the API's health
            raise
        except ModelUnavailable as exc:
            with self._lock:
                self._row += 1
                if self._row >= self._trip and self.tripped is None:
                    self.tripped = f"{self._row} requests in a row were unavailable; last: {exc}"
            raise
        if self._row or reply.problems:
            with self._lock:
                self._row = 0
                for problem in dict.fromkeys(reply.problems):
                    self._said[problem] = self._said.get(problem, 0) + 1
        return reply

    def said(self, limit: int = 20) -> list[str]:
        """The replies' problems, each once with how many replies had it (at most `limit`,
        then how many more there were)."""
        with self._lock:
            said = list(self._said.items())
        out = [p if n == 1 else f"{p} (in {n:,} replies)" for p, n in said[:limit]]
        if len(said) > limit:
            out.append(f"and {len(said) - limit:,} other problem(s) of the replies")
        return out


class Watched:
    """A client that tells `progress` of each answered request and of each that failed
    (`failed_words`: why, in a few words), and refuses new ones once `stop` gives a reason
    (as unavailable: the claim ends as an `error` saying why)."""

    def __init__(
        self, inner: CiteClient, progress: OnEvent | None, stop: ShouldStop | None
    ) -> None:
        self._inner, self._progress, self._stop = inner, progress, stop

    def ask(self, request: Request) -> Reply:
        halt = self._stop() if self._stop is not None else None
        if halt:
            raise ModelUnavailable(halt)
        try:
            reply = self._inner.ask(request)
        except JudgeError as exc:
            emit(self._progress, {"event": "audit-failed", "why": failed_words(exc)})
            raise
        u = reply.usage
        tokens = u.input_tokens + u.output_tokens + u.cache_creation_input_tokens
        emit(self._progress, {"event": "audit-request", "tokens": tokens})
        return reply


def failed_words(exc: JudgeError) -> str:
    """Why an audit request failed, in the few words a progress line has room for."""
    if isinstance(exc, ConfigError):  # 401/403: harness.model.auth
        return "the API refused the key"
    if isinstance(exc, InvalidRequest):
        return "the API refused the request as invalid"
    if isinstance(exc, OutOfTime):
        return "the audit's time ran out"
    if isinstance(exc, RateLimited):
        return "the API kept rate limiting"
    if isinstance(exc, ModelUnavailable):  # its kind as harness.model caught it
        return _FAULT_WORDS[exc.fault]
    return "the request failed"


_FAULT_WORDS: dict[Fault, str] = {
    "timeout": "the API did not answer in time",
    "connection": "the API could not be reached",
    "unavailable": "the API was unavailable",
}


__all__ = [
    "DEFAULT_CITE_MODEL",
    "CiteClientHandle",
    "FirstAlone",
    "Guard",
    "JudgeClient",
    "Watched",
    "audit_client",
    "cite_recording",
    "failed_words",
    "live_cite_client",
    "resolve_cite",
    "resolve_judge",
    "resolve_run_cite",
]
