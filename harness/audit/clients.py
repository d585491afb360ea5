"""The client that answers the audit's requests: a replay, or Claude (optionally recorded)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import config
from harness.cite import CiteClient, RecordingCiteClient, ReplayCiteClient
from harness.cite.client import Reply, Request
from harness.config import SCREEN_MODEL
from harness.errors import ConfigError

DEFAULT_CITE_MODEL = SCREEN_MODEL


def _nothing() -> None:
    return None


@dataclass(slots=True)
class CiteClientHandle:
    client: CiteClient
    model: str
    kind: str  # "replay" or "live"
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


def build_cite_client(
    *,
    model: str = DEFAULT_CITE_MODEL,
    replay: Path | None = None,
    record: Path | None = None,
    timeout: float = float(config.TIMEOUT.default),
    max_retries: int = int(config.MAX_RETRIES.default),
    max_seconds: float | None = None,
    record_meta: dict[str, Any] | None = None,
) -> CiteClientHandle:
    """`ReplayCiteClient` for `replay`; otherwise `AnthropicCiteClient` over the SDK client
    built as for the judge (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL as the SDK reads them),
    wrapped in a `RecordingCiteClient` when `record` is given. `ConfigError` without a key.
    With `max_seconds`, no response body may still be arriving after that long (+ grace).
    """
    if replay is not None and record is not None:
        raise ConfigError("--replay and --record cannot be used together; choose one")
    if replay is not None:
        return CiteClientHandle(ReplayCiteClient.load(replay), model, "replay")
    from harness.model.client import ClientSettings, build_client

    built = build_client(ClientSettings(timeout=timeout, max_retries=max_retries))
    if max_seconds is not None:
        built.bound_replies(max_seconds, timeout)
    live = live_cite_client(built.client, model)
    if record is None:
        return CiteClientHandle(live, model, "live", built.client.close)
    recorder = RecordingCiteClient(live)
    target = record

    def save_and_close() -> None:
        try:
            recorder.save(target, record_meta)
        finally:
            built.client.close()

    return CiteClientHandle(recorder, model, "live", save_and_close)
