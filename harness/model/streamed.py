"""A streamed Messages reply, read event by event in linear time and within caps.

The SDK's own accumulator (`messages.stream()`) appends each piece of a tool input to
a bytes buffer and re-parses the whole buffer after every piece: its cost grows with the
square of the input (a 20 MB Write in 1 KB pieces ran past 33 s). Here each block's
pieces are kept in a list and joined once; a tool input is parsed once, when its block
ends, by the strict JSON reader (a key given twice is not silently resolved). A tool
input longer than `config.MAX_TOOL_INPUT_CHARS` (the longest encoding of a Write the
tool would take) ends the stream at once: the reply keeps what came before, and the loop
answers that call with the reason. All the deltas of one reply together are capped too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from anthropic.types import Message

from harness import config
from harness.errors import ModelUnavailable
from harness.text.jsonstrict import loads_strict

__all__ = ["read_stream"]


class _Block:
    __slots__ = ("data", "pieces", "size")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.pieces: list[str] = []
        self.size = 0


def read_stream(
    client: Any,
    params: dict[str, Any],
    timeout: float | None,
    *,
    tool_cap: int = config.MAX_TOOL_INPUT_CHARS,
    total_cap: int = config.MAX_STREAMED_REPLY_CHARS,
    accepted: Callable[[], None] | None = None,
) -> tuple[Message, dict[str, str]]:
    """Send `params` streamed; the message, and tool_use id -> why its input was not taken.

    `timeout` None: the client's own. `accepted` is called once the API has accepted the
    request (its status and headers are in, the reply not yet), before the reply is read.
    Raises `ModelUnavailable` for a stream that is not a message (events out of order, no
    message_stop, past `total_cap`); SDK and transport errors propagate as they are.
    """
    timed = {} if timeout is None else {"timeout": timeout}
    stream = client.messages.create(**params, stream=True, **timed)
    with stream:
        if accepted is not None:
            accepted()
        return _read(stream, tool_cap, total_cap)


def _read(events: Any, tool_cap: int, total_cap: int) -> tuple[Message, dict[str, str]]:
    message: dict[str, Any] | None = None
    blocks: list[_Block] = []
    cut: dict[str, str] = {}
    total = 0
    stopped = False
    for event in events:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            if message is not None:
                raise _bad("a second message_start")
            message = event.message.model_dump(mode="json")
            message["content"] = []
            continue
        if kind in ("ping", None) or kind not in _KNOWN:
            continue
        if message is None:
            raise _bad(f"{kind} before message_start")
        if kind == "content_block_start":
            if event.index != len(blocks):
                raise _bad(f"content block {event.index} started out of order")
            blocks.append(_Block(event.content_block.model_dump(mode="json", exclude_none=True)))
        elif kind == "content_block_delta":
            block = _block(blocks, event.index)
            piece = _piece(event.delta)
            total += len(piece)
            if total > total_cap:
                raise ModelUnavailable(
                    f"the streamed reply passed {total_cap:,} characters and was not used"
                )
            block.pieces.append(piece)
            block.size += len(piece)
            if block.data.get("type") in _TOOL_INPUT and block.size > tool_cap:
                cut[str(block.data.get("id", ""))] = _too_long(block.data, tool_cap)
                block.pieces = []
                message["stop_reason"] = "tool_use"
                stopped = True
                break  # the rest is not read: closing the stream drops it
            if getattr(event.delta, "type", None) == "signature_delta":
                block.data["signature"] = piece
                block.pieces.pop()
        elif kind == "content_block_stop":
            _finish(_block(blocks, event.index), cut)
        elif kind == "message_delta":
            _delta(message, event)
        elif kind == "message_stop":
            stopped = True
            break
    if message is None:
        raise _bad("no message_start")
    if not stopped:
        raise _bad("the stream ended before message_stop")
    for block in blocks:
        _finish(block, cut)
        message["content"].append(block.data)
    return Message.model_validate(message), cut


_KNOWN = {
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
}
_TOOL_INPUT = {"tool_use", "server_tool_use"}
_TEXT_FIELD = {"text": "text", "thinking": "thinking"}


def _bad(what: str) -> ModelUnavailable:
    return ModelUnavailable(
        f"the API's reply could not be read as a message (event stream: {what})"
    )


def _block(blocks: list[_Block], index: Any) -> _Block:
    if not isinstance(index, int) or not 0 <= index < len(blocks):
        raise _bad(f"an event for content block {index!r}, which was not started")
    return blocks[index]


def _piece(delta: Any) -> str:
    kind = getattr(delta, "type", None)
    value: Any = ""
    if kind == "text_delta":
        value = getattr(delta, "text", "")
    elif kind == "input_json_delta":
        value = getattr(delta, "partial_json", "")
    elif kind == "thinking_delta":
        value = getattr(delta, "thinking", "")
    elif kind == "signature_delta":
        value = getattr(delta, "signature", "")
    return value if isinstance(value, str) else ""


def _finish(block: _Block, cut: dict[str, str]) -> None:
    """Join a block's pieces once (a block is finished once; later calls do nothing)."""
    if not block.pieces:
        return
    text = "".join(block.pieces)
    block.pieces = []
    kind = block.data.get("type")
    if kind in _TOOL_INPUT:
        tool_id = str(block.data.get("id", ""))
        strict = loads_strict(text, forbid_fractions=False)
        if not strict.parsed or strict.issues or not isinstance(strict.value, dict):
            issue = strict.issues[0].message() if strict.issues else "not a JSON object"
            cut[tool_id] = (
                f"refused: the {block.data.get('name', 'tool')} input is not strict JSON "
                f"({issue}); call it again with a plain JSON object"
            )
            block.data["input"] = {}
        else:
            block.data["input"] = strict.value
    elif kind in _TEXT_FIELD:
        field = _TEXT_FIELD[kind]
        block.data[field] = str(block.data.get(field, "")) + text


def _too_long(data: dict[str, Any], cap: int) -> str:
    data["input"] = {}
    name = data.get("name", "tool")
    return (
        f"refused: the {name} input passed {cap:,} characters while it was streamed, so "
        f"it was cut and not run (a Write of judge.json holds at most "
        f"{config.MAX_WRITE_CHARS:,} characters); Write only the judge.json object"
    )


def _delta(message: dict[str, Any], event: Any) -> None:
    delta = getattr(event, "delta", None)
    if delta is not None:
        message["stop_reason"] = getattr(delta, "stop_reason", None)
        message["stop_sequence"] = getattr(delta, "stop_sequence", None)
    usage = getattr(event, "usage", None)
    if usage is None:
        return
    counts = message.setdefault("usage", {})
    # Counts on a message_delta are totals so far: they replace, and an absent one keeps
    # message_start's.
    for name in (
        "output_tokens",
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ):
        value = getattr(usage, name, None)
        if value is not None:
            counts[name] = value
