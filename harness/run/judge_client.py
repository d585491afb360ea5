"""The judge's model: one stage that builds it (the caller's client, or one from the
options: a replay, a recording, the Anthropic API) and closes what it built."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness import config
from harness.audit.record import Channels
from harness.run.options import RunOptions

if TYPE_CHECKING:  # the SDK is imported only by a run that calls a model
    from harness.model.resolve import JudgeClient
    from harness.model.seam import ModelAPI

CLOSE_SECONDS = 2.0


@runtime_checkable
class ChannelledTurns(Protocol):
    """A judge client that knows the channel of each turn it answered (the `judge batch
    --batch-api` lockstep client, harness.batch.lockstep): run.json's `channels.judge`."""

    def channel_use(self) -> Channels | None: ...


@dataclass(frozen=True, slots=True)
class JudgeModel:
    """The judge's `ModelAPI` as the one client resolver gave it (harness.model.resolve)."""

    client: JudgeClient

    def api(self) -> ModelAPI:
        return self.client.model

    def bound_replies(self, seconds: float) -> None:
        """No reply body may still be arriving after the judge's time (+ grace)."""
        self.client.bound_replies(seconds, 0.0)

    def check_replay(self) -> None:
        """A replay that ran dry is a loud error, never a fallback."""
        if self.client.built is not None:
            self.client.built.check_replay()

    def close(self) -> None:
        # Its connection pool would otherwise hold sockets until the garbage collector
        # gets to it: a process that runs many sessions would pile them up.
        for owned in self.client.owned:
            close_within(owned, CLOSE_SECONDS)


def judge_model(
    opts: RunOptions, client: Any, session_digest: str, brief_digest: str
) -> JudgeModel:
    """The caller's `client` (a `ModelAPI` or an SDK-shaped client), else one built from
    the options, through the one resolver of clients (harness.model.resolve); a missing key
    is a configuration error (exit 2), a replay recorded for other inputs a loud exit 1."""
    from harness.model.client import ClientSettings
    from harness.model.replay import replay_meta
    from harness.model.resolve import resolve_judge

    stream = opts.max_output_tokens > config.STREAM_ABOVE_OUTPUT_TOKENS and opts.record is None
    settings = ClientSettings(
        timeout=opts.timeout,
        max_retries=opts.max_retries,
        replay=opts.replay,
        record=opts.record,
        record_meta=replay_meta(session_digest, brief_digest, opts.model),
    )
    return JudgeModel(resolve_judge(client, settings, stream=stream, replay_any=opts.replay_any))


def judge_channels(client: Any) -> Channels | None:
    """--batch-api: the channels of the turns the caller's client answered, if it counts."""
    return client.channel_use() if isinstance(client, ChannelledTurns) else None


def close_within(client: Any, seconds: float) -> None:
    """Close an SDK client, waiting at most `seconds`: a signal (SIGINT/SIGTERM raise
    `Interrupted` anywhere) can land while the client's connection pool holds its own
    lock, and a close that waits on that lock must not keep the process from exiting."""

    def close() -> None:
        with contextlib.suppress(Exception):
            client.close()

    worker = threading.Thread(target=close, name="close-client", daemon=True)
    worker.start()
    worker.join(seconds)


__all__ = ["CLOSE_SECONDS", "ChannelledTurns", "JudgeModel", "close_within", "judge_model"]
