"""Our own model seam: what the agent loop asks of a model, in our types.

The loop talks to a `ModelAPI`; only `harness.model.messages` knows the Anthropic SDK.
A test fake can stand here (a scripted `ModelAPI`), or at the SDK boundary below it.
Importing this module does not import the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from harness.usage import Usage

__all__ = ["ModelAPI", "ModelReply", "sendable_messages"]

UNANSWERED = "no result: this call was not run"


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One assistant turn: content blocks as message params, why it stopped, its usage.

    `raw` is the reply as the API sent it (for the transcript); `content` is what goes
    back into the conversation.
    """

    content: list[dict[str, Any]]
    stop_reason: str | None
    model: str
    usage: Usage = field(default_factory=Usage)
    raw: dict[str, Any] = field(default_factory=dict)
    # tool_use id -> why its input was not taken (cut while streaming, not strict JSON):
    # the loop answers that call with the reason instead of running it.
    cut: dict[str, str] = field(default_factory=dict)
    # What was corrected in the reply (usage out of range, ...): said in run.json.
    problems: list[str] = field(default_factory=list)


@runtime_checkable
class ModelAPI(Protocol):
    """Answers one Messages request. Raises `harness.errors.ModelUnavailable` (with one line
    naming the fault) when no usable reply came back; never an SDK exception."""

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply: ...


def reused_tool_id(messages: list[dict[str, Any]]) -> str | None:
    """A tool_use id that two tool uses of `messages` share, if any: the API refuses a
    history with an id twice, so the loop cannot send it (a reply's other faults are
    checked alone, when it comes: harness.model.messages.checked_message)."""
    seen: set[object] = set()
    for turn in messages:
        if turn.get("role") != "assistant":
            continue
        for block in _blocks(turn.get("content")):
            if block.get("type") != "tool_use":
                continue
            if block.get("id") in seen:
                return str(block.get("id"))
            seen.add(block.get("id"))
    return None


def sendable_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the API accepts it, made so before each request:

    - a text block that is empty or only whitespace (a model may reply with one) is
      dropped: the API refuses such blocks; a turn left with no block is dropped;
    - consecutive turns of one role are merged into one (a dropped turn, or the loop's
      nudge after an empty reply, would otherwise send two user turns in a row), tool
      results first as the API wants them;
    - every tool_use is answered by a tool_result in the next user turn (an error result
      saying the call was not run, if the history lacks one), and a tool_result that
      answers no tool_use of the turn before is dropped.

    Nothing is mutated: repaired turns are new, blocks are shared and never changed;
    a history that needs nothing is returned as it is."""
    out = messages
    for _ in range(4):  # a dropped stray result can empty a turn: repeat until stable
        repaired = _repaired(out)
        if repaired == out:
            break
        out = repaired
    return out if out != messages else messages


def _repaired(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for turn in messages:
        blocks = [b for b in _blocks(turn.get("content")) if not _blank_text(b)]
        if not blocks:
            continue
        role = turn.get("role")
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": [*turns[-1]["content"], *blocks]}
        else:
            turns.append({"role": role, "content": blocks})
    out: list[dict[str, Any]] = []
    asked: list[str] = []  # the tool_use ids of the assistant turn before
    for turn in turns:
        blocks = turn["content"]
        if turn["role"] == "user":
            results = [
                b
                for b in blocks
                if b.get("type") == "tool_result" and b.get("tool_use_id") in asked
            ]
            others = [b for b in blocks if b.get("type") != "tool_result"]
            answered = {b.get("tool_use_id") for b in results}
            missing = [_unanswered(i) for i in asked if i not in answered]
            blocks = [*missing, *results, *others]
        elif asked:  # an assistant turn after one whose calls were never answered
            out.append({"role": "user", "content": [_unanswered(i) for i in asked]})
        asked = [
            str(b.get("id"))
            for b in blocks
            if turn["role"] == "assistant" and b.get("type") == "tool_use"
        ]
        if blocks:
            out.append({**turn, "content": blocks})
    if asked:  # the history ends on calls never answered
        out.append({"role": "user", "content": [_unanswered(i) for i in asked]})
    return out


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _blank_text(block: dict[str, Any]) -> bool:
    text = block.get("text")
    return block.get("type") == "text" and (not isinstance(text, str) or not text.strip())


def _unanswered(tool_use_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": UNANSWERED,
        "is_error": True,
    }
