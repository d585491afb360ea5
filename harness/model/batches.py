"""The Message Batches API through the SDK: submit, poll, read results (half the price).

The batch layer plans which requests go together and what to do with each result; only
this module knows how the SDK spells them.

Every call is bounded by the batch's `deadline` (harness.clock): each request is sent in
its scope, so its timeout is at most the time left, and the results file is read here,
line by line, not by the SDK's decoder: a line longer than `line_cap` bytes is not kept
(that request's result is `too-large`, named), and the reading stops once the deadline
has passed or `stop` gives a reason, raising `Halted` with what was read and what was
not (a server that drips the file, or one endless line, ends at the limit).
"""

from __future__ import annotations

import json
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic._models import construct_type_unchecked
from anthropic.types import Message
from anthropic.types.messages import MessageBatchIndividualResponse

from harness import clock, config
from harness.clock import Deadline
from harness.errors import Halted, ModelUnavailable
from harness.model.auth import credentials_refused
from harness.model.messages import api_fault, api_unavailable

__all__ = [
    "TOO_LARGE",
    "BatchItem",
    "MessageBatches",
    "budgeted_tokens",
    "message_data",
    "message_of",
    "result_items",
]

TOO_LARGE = "too-large"  # a result line past the cap: not read, the request asked again

# A custom_id as the API takes it, the first key of a result line as the API writes it.
_CUSTOM_ID = re.compile(rb'^\s*\{\s*"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"')
_HEAD = 128  # bytes of a line kept to name it when it is too long to read
_AT_LIMIT = 0.5  # seconds: a read timed out this close to the deadline timed out for it


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One request's result: `kind` is succeeded, errored, canceled, expired, or
    `TOO_LARGE` (its line was longer than the cap: `note` says so)."""

    custom_id: str
    kind: str
    message: Any = None  # the SDK's Message when `kind` is succeeded
    note: str = ""


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
        raise api_unavailable(exc, doing) from exc


class MessageBatches:
    """The batches endpoints, every call within `deadline` (the batch's time limit)."""

    def __init__(
        self,
        sdk: Any,
        deadline: Deadline = clock.NEVER,
        *,
        line_cap: int = config.MAX_BATCH_RESULT_LINE_BYTES,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self._sdk = sdk
        self._deadline = deadline
        self._line_cap = line_cap
        self._say = say or (lambda _: None)

    def submit(self, requests: list[tuple[str, dict[str, Any]]]) -> str:
        """Create one batch of (custom_id, Messages params); its id."""
        with clock.scope(self._deadline), _batches_api("submitting a message batch"):
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
        while True:
            if self._deadline.expired:  # a poll sent past the limit would only time out
                said = (stop() if stop is not None else None) or f"{self._deadline.what} ran out"
                raise Halted(f"{said} while message batch {batch_id} was in progress")
            if self._status(batch_id) == "ended":
                return
            until = time.monotonic() + poll
            while (left := until - time.monotonic()) > 0:
                reason = stop() if stop is not None else None
                if reason:
                    raise Halted(f"{reason} while message batch {batch_id} was in progress")
                time.sleep(min(left, 0.2))

    def _status(self, batch_id: str) -> str:
        with clock.scope(self._deadline), _batches_api(f"polling message batch {batch_id}"):
            return str(self._sdk.messages.batches.retrieve(batch_id).processing_status)

    def results(
        self, batch_id: str, stop: Callable[[], str | None] | None = None
    ) -> Iterator[BatchItem]:
        """The batch's results as they are read. The request is sent within the deadline
        (its timeout at most the time left); the body is read here, line by line. Once the
        deadline has passed, or `stop` gives a reason (an interrupt), the reading stops and
        `Halted` says how many results were read: the others stay at the API, and a
        restarted batch reads them. A transport fault while reading is `ModelUnavailable`."""
        doing = f"reading the results of message batch {batch_id}"
        # In the deadline's scope, the client's hooks bound the request's waits (its
        # timeout at most the time left; harness.model.client); the body is watched here.
        with clock.scope(self._deadline), _batches_api(doing):
            decoder = self._sdk.messages.batches.results(batch_id)
        read = 0

        def halt(timed_out: bool = False) -> str | None:
            reason = stop() if stop is not None else None
            left = self._deadline.left()
            # A read that timed out at the limit (its timeout was the time left) ended for it.
            at_limit = left is not None and (left <= 0 or (timed_out and left < _AT_LIMIT))
            if reason is None and at_limit:
                reason = f"{self._deadline.what} ran out"
            return reason

        try:
            chunks = _pumped(decoder.http_response.iter_bytes(), decoder.close, halt)
            for item in result_items(chunks, self._line_cap, self._say):
                read += 1
                yield item
        except _Cut as cut:
            raise Halted(
                f"{cut.reason} while reading the results of message batch {batch_id} "
                f"({read} read; the rest were not: they stay at the API, and the batch run "
                "again reads them)"
            ) from None
        except httpx2.HTTPError as exc:
            reason = halt(isinstance(exc, httpx2.TimeoutException))
            if reason is not None:
                raise Halted(
                    f"{reason} while reading the results of message batch {batch_id} "
                    f"({read} read; the rest were not: they stay at the API, and the batch "
                    "run again reads them)"
                ) from None
            raise ModelUnavailable(
                f"{doing}: {type(exc).__name__}: {exc}", fault=api_fault(exc)
            ) from exc

    def create(self, params: dict[str, Any]) -> Any:
        """One ordinary Messages call (a request the batch could not answer)."""
        with clock.scope(self._deadline):
            return self._sdk.messages.create(**params)


class _Cut(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_PATIENCE = 0.2  # seconds between two askings of `halt` while a piece is awaited


def _pumped(
    chunks: Iterator[bytes], close: Callable[[], None], halt: Callable[[], str | None]
) -> Iterator[bytes]:
    """`chunks`, each read on a thread of their own when the one before has been taken
    (never ahead), asking `halt` every `_PATIENCE` s while one is awaited and once each
    has come: a reason ends them (`_Cut`) at once. A read still hanging then is left
    behind: it ends within its own timeout, and its thread closes the body (`close`)."""
    wanted: queue.Queue[bool] = queue.Queue()
    given: queue.Queue[tuple[str, Any]] = queue.Queue()
    gone = threading.Event()

    def pump() -> None:
        try:
            while not gone.is_set():
                try:
                    if not wanted.get(timeout=_PATIENCE):
                        continue  # the reader has gone
                except queue.Empty:
                    continue
                chunk = next(chunks, None)
                given.put(("end", None) if chunk is None else ("chunk", chunk))
                if chunk is None:
                    return
        except Exception as exc:  # a transport fault: the reader raises it
            given.put(("error", exc))
        finally:
            close()

    threading.Thread(target=pump, name="judge-batch-results", daemon=True).start()
    try:
        while True:
            wanted.put(True)
            while True:
                reason = halt()
                if reason is not None:
                    raise _Cut(reason)
                try:
                    kind, value = given.get(timeout=_PATIENCE)
                    break
                except queue.Empty:
                    continue
            if kind == "end":
                return
            if kind == "error":
                raise value
            reason = halt()  # a piece that came after the limit is not taken
            if reason is not None:
                raise _Cut(reason)
            yield value
    finally:
        gone.set()
        wanted.put(False)  # wakes the pump, which closes the body (unless a read hangs)


def result_items(
    chunks: Iterable[bytes], line_cap: int, say: Callable[[str], None] | None = None
) -> Iterator[BatchItem]:
    """The results in a JSON Lines body given in `chunks`, each line kept up to `line_cap`
    bytes. A longer line is not kept: its request (named by the custom_id it starts with)
    is `TOO_LARGE`; one that names none is skipped, and `say` is told. A line that is not a
    result is skipped and told too (its request is then missing: asked again)."""
    tell = say or (lambda _: None)
    parts: list[bytes] = []
    size = 0
    skipping = False  # inside a line past the cap
    for chunk in chunks:
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not skipping and size + len(piece) > line_cap:
                head = _head([*parts, piece])
                parts, size, skipping = [], 0, True
                item = _too_large(head, line_cap, tell)
                if item is not None:
                    yield item
            elif not skipping and piece:
                parts.append(piece)
                size += len(piece)
            if end < 0:
                break
            if not skipping:
                item = _item(b"".join(parts), tell)
                if item is not None:
                    yield item
            parts, size, skipping = [], 0, False
            start = end + 1
    if not skipping and parts:
        item = _item(b"".join(parts), tell)
        if item is not None:
            yield item


def _head(parts: list[bytes]) -> bytes:
    """The first `_HEAD` bytes of the pieces of a line, without joining the whole line."""
    kept: list[bytes] = []
    size = 0
    for part in parts:
        if size >= _HEAD:
            break
        kept.append(part[: _HEAD - size])
        size += len(kept[-1])
    return b"".join(kept)


def _too_large(head: bytes, cap: int, tell: Callable[[str], None]) -> BatchItem | None:
    found = _CUSTOM_ID.match(head)
    mib = f"{cap:,} bytes"
    if found is None:
        tell(
            f"judge batch: a result line longer than {mib} that names no request first was "
            "skipped; its request is asked again"
        )
        return None
    custom_id = found.group(1).decode("ascii")
    note = f"its result line is longer than {mib}: not read"
    tell(f"judge batch: result of {custom_id}: {note}; the request is asked again")
    return BatchItem(custom_id, TOO_LARGE, note=note)


def _item(line: bytes, tell: Callable[[str], None]) -> BatchItem | None:
    line = line.strip()
    if not line:
        return None
    try:
        value = json.loads(line)
        item: Any = construct_type_unchecked(value=value, type_=MessageBatchIndividualResponse)
        result = item.result
        kind = str(result.type)
        message = result.message if kind == "succeeded" else None
        return BatchItem(str(item.custom_id), kind, message)
    except (ValueError, TypeError, AttributeError) as exc:
        tell(
            f"judge batch: a result line that is not a batch result was skipped "
            f"({type(exc).__name__}); its request is asked again"
        )
        return None


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
