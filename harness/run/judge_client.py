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
    from harness.model.client import BuiltClient
    from harness.model.seam import ModelAPI

CLOSE_SECONDS = 2.0


@runtime_checkable
class ChannelledTurns(Protocol):
    """A judge client that knows the channel of each turn it answered (the `judge batch
    --batch-api` lockstep client, harness.batch.lockstep): run.json's `channels.judge`."""

    def channel_use(self) -> Channels | None: ...


@dataclass(frozen=True, slots=True)
class JudgeModel:
    built: BuiltClient
    stream: bool  # large outputs are read as a stream
    owned: bool  # built by this run: closed when it ends

    def api(self) -> ModelAPI:
        from harness.model.messages import AnthropicModel

        return AnthropicModel(self.built, stream=self.stream)

    def close(self) -> None:
        # Its connection pool would otherwise hold sockets until the garbage collector
        # gets to it: a process that runs many sessions would pile them up.
        if self.owned:
            close_within(self.built.client, CLOSE_SECONDS)


def judge_model(
    opts: RunOptions, client: Any, session_digest: str, brief_digest: str
) -> JudgeModel:
    """The caller's `client`, else one built from the options; a missing key is a
    configuration error (exit 2), a replay recorded for other inputs a loud exit 1."""
    from harness.model.client import BuiltClient, ClientSettings, build_client

    stream = opts.max_output_tokens > config.STREAM_ABOVE_OUTPUT_TOKENS and opts.record is None
    if client is not None:
        return JudgeModel(BuiltClient(client), stream, owned=False)
    from harness.model.replay import check_binding, replay_meta

    bound = replay_meta(session_digest, brief_digest, opts.model)
    if opts.replay is not None and not opts.replay_any:
        check_binding(opts.replay, bound)  # another session's replay: a loud exit 1
    settings = ClientSettings(
        timeout=opts.timeout,
        max_retries=opts.max_retries,
        replay=opts.replay,
        record=opts.record,
        record_meta=bound,
    )
    return JudgeModel(build_client(settings), stream, owned=True)


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
