"""The Message Batches API through the SDK: submit, poll, read results (half the price).

The batch layer plans which requests go together and what to do with each result; only
this module knows how the SDK spells them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from anthropic.types import Message

from harness.errors import Halted

__all__ = ["BatchItem", "MessageBatches", "budgeted_tokens", "message_data", "message_of"]


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One request's result: `kind` is succeeded, errored, canceled or expired."""

    custom_id: str
    kind: str
    message: Any = None  # the SDK's Message when `kind` is succeeded


class MessageBatches:
    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def submit(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Create one batch of (custom_id, Messages params); its id."""
        batch = self._sdk.messages.batches.create(
            requests=[{"custom_id": cid, "params": params} for cid, params in requests]
        )
        return str(batch.id)

    def wait(
        self, batch_id: str, poll: float, stop: Callable[[], str | None] | None = None
    ) -> None:
        """Poll until the batch has ended (results are then complete). Between polls,
        `stop` is asked every 0.2 s: a reason raises `Halted` at once (an interrupt, the
        batch's time limit). The batch goes on at the API; a restarted run polls it again."""
        while self._sdk.messages.batches.retrieve(batch_id).processing_status != "ended":
            until = time.monotonic() + poll
            while (left := until - time.monotonic()) > 0:
                reason = stop() if stop is not None else None
                if reason:
                    raise Halted(f"{reason} while message batch {batch_id} was in progress")
                time.sleep(min(left, 0.2))

    def results(self, batch_id: str) -> Iterator[BatchItem]:
        for item in self._sdk.messages.batches.results(batch_id):
            result = item.result
            message = result.message if result.type == "succeeded" else None
            yield BatchItem(item.custom_id, result.type, message)

    def create(self, params: dict[str, Any]) -> Any:
        """One ordinary Messages call (a request the batch could not answer)."""
        return self._sdk.messages.create(**params)


def message_data(message: Any) -> dict[str, Any]:
    """A message as the JSON the API sent (to be saved, and read back by `message_of`)."""
    data: dict[str, Any] = message.model_dump(mode="json")
    return data


def message_of(data: dict[str, Any]) -> Message:
    """The SDK's Message from `message_data`'s JSON, as the agent loop expects it."""
    return Message.model_validate(data)


def budgeted_tokens(message: Any) -> int:
    """What a token budget counts of one reply: input + cache writes + output (a run's
    `Usage.budgeted`: cache reads re-read the same prefix at a tenth of the price)."""
    usage = getattr(message, "usage", None)
    if usage is None:
        return 0
    names = ("input_tokens", "output_tokens", "cache_creation_input_tokens")
    return sum(int(getattr(usage, name, 0) or 0) for name in names)
