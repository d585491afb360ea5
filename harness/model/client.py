"""Build the Anthropic client so that the SDK's own environment rules apply.

`ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`, or an SDK profile) and
`ANTHROPIC_BASE_URL` are read by the SDK itself: the harness never passes its
own key or URL unless replaying.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx2

from harness import clock, config
from harness.clock import Deadline
from harness.errors import ConfigError, ModelUnavailable, OutOfTime, RateLimited, UsageError
from harness.model.pacing import Pacer
from harness.model.replay import RecordingTransport, ReplayTransport, load_replay

REPLAY_BASE_URL = "http://replay.invalid"


@dataclass(frozen=True, slots=True)
class ClientSettings:
    timeout: float = config.TIMEOUT.default
    max_retries: int = int(config.MAX_RETRIES.default)
    replay: Path | None = None
    record: Path | None = None
    # The first line of a recording: what it was made for (see replay.replay_meta).
    record_meta: dict[str, Any] | None = None
    # Requests the caller may have in flight at once (a batch: its sessions plus its
    # audit pool): the pool keeps that many connections alive instead of the SDK's 100,
    # and allows at least that many (the SDK's 1,000 otherwise). 0: the SDK's limits.
    connections: int = 0
    # One rate-limit pacer for every request of this client (harness.model.pacing): a
    # batch's sessions slow down together. None: the SDK's own retries only.
    pacer: Pacer | None = None
    # Whether a redirect is followed (the SDK's default). `judge doctor` follows none: a key
    # "accepted" by whatever a 307 led to says nothing of the endpoint configured.
    follow_redirects: bool = True


def _limits(connections: int) -> dict[str, Any]:
    if connections <= 0:
        return {}
    sdk = anthropic.DEFAULT_CONNECTION_LIMITS
    most = max(sdk.max_connections or 0, connections)
    alive = max(sdk.max_keepalive_connections or 0, connections)
    limits = httpx2.Limits(
        max_connections=most, max_keepalive_connections=alive, keepalive_expiry=sdk.keepalive_expiry
    )
    return {"limits": limits}


class _ShardedTransport(httpx2.BaseTransport):
    """Several connection pools behind one client: each thread keeps to one pool.

    httpx's pool scans every connection it holds twice per request (to hand out and take
    back a connection), so its CPU per request grows with the connections in use; a batch
    with 160 requests in flight spent a third of each audit request's CPU there. Split
    into pools of `config.CONNECTIONS_PER_POOL`, each scan is that much shorter. The
    requests are the same bytes; a thread's requests always use its own pool, so its
    connections are reused as before.
    """

    def __init__(self, shards: list[httpx2.BaseTransport], keep: list[httpx2.Client]) -> None:
        self._shards = shards
        self._keep = keep  # the clients that built the other pools: never collected
        self._mine = threading.local()
        self._next = itertools.count()  # next() on a count is atomic under the GIL

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        shard = getattr(self._mine, "shard", None)
        if shard is None:
            shard = self._mine.shard = self._shards[next(self._next) % len(self._shards)]
        return shard.handle_request(request)

    def close(self) -> None:
        for shard in self._shards:
            shard.close()


def _pools(connections: int) -> int:
    """Connection pools for `connections` requests in flight (1 up to CONNECTIONS_PER_POOL)."""
    return max(1, math.ceil(connections / config.CONNECTIONS_PER_POOL))


@dataclass(slots=True)
class BuiltClient:
    client: anthropic.Anthropic
    replay: ReplayTransport | None = None
    deadline: Deadline = field(default_factory=Deadline)

    def bound_replies(self, seconds: float, timeout: float) -> None:
        """No response body may still be arriving `seconds` from now, plus one request's
        timeout (at most 30 s) of grace."""
        self.deadline.at = time.monotonic() + seconds + min(timeout, 30.0)

    def check_replay(self) -> None:
        """Re-raise a replay failure that the SDK wrapped as a connection error."""
        if self.replay is not None and self.replay.failure is not None:
            raise self.replay.failure


class _DeadlineStream(httpx2.SyncByteStream):
    def __init__(
        self, inner: httpx2.SyncByteStream, deadline: Deadline, sent: Deadline = clock.NEVER
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._sent = sent  # the deadline of the thread that sent the request (harness.clock)

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._deadline.expired or self._sent.expired:
                raise httpx2.ReadTimeout("the response was still arriving at the run's time limit")
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _deadline_hooks(deadline: Deadline) -> dict[str, list[Callable[[Any], None]]]:
    """httpx event hooks that bound a response body by the run's deadline.

    The per-request timeout is a *read* timeout: a server that sends a byte (or an SSE
    ping) more often than that would otherwise keep one call, and the run, going for
    ever. The response hook runs after the headers and before the body is read, in
    both the streaming and the plain path.
    """

    def on_request(request: httpx2.Request) -> None:
        # Each attempt waits at most for the time its thread has left: a reply that would
        # come after the run's (or its phase's) end is not waited for.
        left = clock.current().left()
        timeouts = request.extensions.get("timeout")
        if left is None or not isinstance(timeouts, dict):
            return
        bound = max(MIN_ATTEMPT_SECONDS, left)
        request.extensions["timeout"] = {
            name: bound if value is None else min(float(value), bound)
            for name, value in timeouts.items()
        }

    def on_response(response: httpx2.Response) -> None:
        if isinstance(response.stream, httpx2.SyncByteStream):
            response.stream = _DeadlineStream(response.stream, deadline, clock.current())

    return {"request": [on_request], "response": [on_response]}


# The shortest wait given to an attempt sent with (almost) no time left: it fails at once.
MIN_ATTEMPT_SECONDS = 0.01


class _BoundedAnthropic(anthropic.Anthropic):
    """The SDK's client with every retry wait bounded by the time its thread has left.

    The SDK honours `retry-after` in full (up to 49 days) and retries a timed-out
    request as if time were free. Here, when a deadline is set (harness.clock),
    a wait that would pass it is not slept: the request ends at once, as `RateLimited`
    when the API asked for the wait (retry-after), as `OutOfTime` when the time is up,
    else as `ModelUnavailable`. Without a deadline the SDK's own rule applies.
    """

    def _sleep_for_retry(
        self,
        *,
        retries_taken: int,
        max_retries: int,
        options: Any,
        response: httpx2.Response | None,
    ) -> None:
        left = clock.current().left()
        if left is None:
            super()._sleep_for_retry(
                retries_taken=retries_taken,
                max_retries=max_retries,
                options=options,
                response=response,
            )
            return
        headers = response.headers if response is not None else None
        asked = self._parse_retry_after_header(headers)
        wait = self._calculate_retry_timeout(max_retries - retries_taken, options, headers)
        if wait < left:
            time.sleep(wait)
            return
        raise _gave_up(response, asked, wait, left, sys.exc_info()[1])


def _gave_up(
    response: httpx2.Response | None,
    asked: float | None,
    wait: float,
    left: float,
    failure: BaseException | None,
) -> ModelUnavailable:
    """Why a request was not retried: the wait it needed is past its thread's deadline."""
    what = clock.current().what
    if response is not None:
        status = f"HTTP {response.status_code}"
        if asked is not None and asked > 0:
            return RateLimited(
                f"rate limited: {status} asked to wait {asked:g} s before a retry "
                f"(retry-after) and {left:.1f} s of {what} were left"
            )
        if response.status_code == 429:
            return RateLimited(f"rate limited: {status} and {left:.1f} s of {what} left")
        return ModelUnavailable(
            f"{status} and {left:.1f} s of {what} left, too little for a retry "
            f"(next in {wait:.1f} s)"
        )
    timed_out = isinstance(failure, anthropic.APITimeoutError)
    if timed_out or left <= MIN_ATTEMPT_SECONDS:
        kind = "the request timed out" if timed_out else "the request failed"
        return OutOfTime(f"{kind} at the end of {what}")
    return ModelUnavailable(
        f"could not connect ({_cause(failure)}) and {left:.1f} s of {what} were left, too "
        "little for a retry",
        fault="connection",
    )


def _cause(failure: BaseException | None) -> str:
    if failure is None:
        return "no detail"
    return str(failure.__cause__ or failure)[:200] or type(failure).__name__


def build_client(settings: ClientSettings) -> BuiltClient:
    if settings.replay is not None and settings.record is not None:
        raise UsageError(config.REPLAY_WITH_RECORD)
    if settings.replay is not None:
        transport = ReplayTransport(load_replay(settings.replay), source=str(settings.replay))
        client = anthropic.Anthropic(
            api_key="replay-no-key",
            base_url=REPLAY_BASE_URL,
            max_retries=0,
            timeout=settings.timeout,
            http_client=httpx2.Client(transport=transport),
        )
        return BuiltClient(client, transport)
    deadline = Deadline()
    hooks: dict[str, list[Callable[[Any], None]]] = dict(_deadline_hooks(deadline))
    if settings.pacer is not None:  # its hooks first: the limit is read before the body
        for event, added in settings.pacer.hooks().items():
            hooks[event] = [*added, *hooks.get(event, [])]
    if settings.record is not None:
        secret = os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        recorder = RecordingTransport(
            httpx2.HTTPTransport(), settings.record, secret, settings.record_meta
        )
        http_client = httpx2.Client(transport=recorder, timeout=settings.timeout, event_hooks=hooks)
    else:
        pools = _pools(settings.connections)
        # Several pools share one TLS context, the one each would build (`verify=True`,
        # the environment's certificates): building one is 37 ms of CPU.
        tls: dict[str, Any] = {}
        if pools > 1:
            tls["verify"] = httpx2.create_ssl_context(verify=True, trust_env=True)
        # The SDK's own defaults (proxies from the environment, keep-alive), plus the hook.
        http_client = anthropic.DefaultHttpxClient(
            timeout=settings.timeout,
            event_hooks=hooks,
            follow_redirects=settings.follow_redirects,
            **tls,
            **_limits(settings.connections),
        )
        if pools > 1:
            # Each pool is the SDK's own default transport (its socket options and
            # limits); a proxy from the environment is still mounted as it was.
            extra = [
                anthropic.DefaultHttpxClient(
                    timeout=settings.timeout, **tls, **_limits(settings.connections)
                )
                for _ in range(pools - 1)
            ]
            shards = [http_client._transport, *(c._transport for c in extra)]
            http_client._transport = _ShardedTransport(shards, keep=extra)
    try:
        client = _BoundedAnthropic(
            max_retries=settings.max_retries, timeout=settings.timeout, http_client=http_client
        )
    except anthropic.AnthropicError as exc:
        raise ConfigError(f"cannot configure the Anthropic client: {exc}") from exc
    if not _has_credentials(client):
        raise ConfigError(
            "no API key: set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL), "
            "or pass --replay FILE to replay a recorded run",
            missing_key=True,  # a command without --replay words its own way out
        )
    return BuiltClient(client, deadline=deadline)


def _has_credentials(client: anthropic.Anthropic) -> bool:
    return bool(client.api_key or client.auth_token or getattr(client, "credentials", None))
