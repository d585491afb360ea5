"""The Message Batches API through the SDK: submit, poll, read results (half the price).

The batch layer plans which requests go together and what to do with each result; only
this module knows how the SDK spells them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
from anthropic.types import Message

from harness.errors import Halted, ModelUnavailable
from harness.model.auth import credentials_refused
from harness.model.messages import describe_api_error

__all__ = ["BatchItem", "MessageBatches", "budgeted_tokens", "message_data", "message_of"]


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One request's result: `kind` is succeeded, errored, canceled or expired."""

    custom_id: str
    kind: str
    message: Any = None  # the SDK's Message when `kind` is succeeded


@contextmanager
def _batches_api(doing: str) -> Iterator[None]:
    """The SDK's errors as ours: refused credentials are a `ConfigError` (exit 2, as on
    the ordinary path); any other API fault is `ModelUnavailable` naming what was being
    done, for the batch layer to fall back on the ordinary API."""
    try:
        yield
    except anthropic.APIError as exc:
        refused = credentials_refused(exc, "the Message Batches API")
        if refused is not None:
            raise refused from exc
        raise ModelUnavailable(f"{doing}: {describe_api_error(exc)}") from exc


class MessageBatches:
    def __init__(self, sdk: Any) -> None:
        self._sdk = sdk

    def submit(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Create one batch of (custom_id, Messages params); its id."""
        with _batches_api("submitting a message batch"):
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
        while self._status(batch_id) != "ended":
            until = time.monotonic() + poll
            while (left := until - time.monotonic()) > 0:
                reason = stop() if stop is not None else None
                if reason:
                    raise Halted(f"{reason} while message batch {batch_id} was in progress")
                time.sleep(min(left, 0.2))

    def _status(self, batch_id: str) -> str:
        with _batches_api(f"polling message batch {batch_id}"):
            return str(self._sdk.messages.batches.retrieve(batch_id).processing_status)

    def results(self, batch_id: str) -> Iterator[BatchItem]:
        with _batches_api(f"reading the results of message batch {batch_id}"):
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
