"""Our own model seam: what the agent loop asks of a model, in our types.

The loop talks to a `ModelAPI`; only `harness.model.messages` knows the Anthropic SDK.
A test fake can stand here (a scripted `ModelAPI`), or at the SDK boundary below it.
Importing this module does not import the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ModelAPI", "ModelReply", "TokenUsage"]


@dataclass(frozen=True, slots=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One assistant turn: content blocks as message params, why it stopped, its usage.

    `raw` is the reply as the API sent it (for the transcript); `content` is what goes
    back into the conversation.
    """

    content: list[dict[str, Any]]
    stop_reason: str | None
    model: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    raw: dict[str, Any] = field(default_factory=dict)
    # tool_use id -> why its input was not taken (cut while streaming, not strict JSON):
    # the loop answers that call with the reason instead of running it.
    cut: dict[str, str] = field(default_factory=dict)
    # What was corrected in the reply (usage out of range, ...): said in run.json.
    problems: list[str] = field(default_factory=list)


class ModelAPI(Protocol):
    """Answers one Messages request. Raises `harness.errors.ModelUnavailable` (with one line
    naming the fault) when no usable reply came back; never an SDK exception."""

    def generate(self, params: dict[str, Any], timeout: float) -> ModelReply: ...
