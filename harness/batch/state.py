"""`ROOT/.judge-batch/`: the typed, versioned state of `judge batch --batch-api`, read and
written in one place.

- `state.json` (`BatchState`): every audit batch submitted, its id, the request key of
  each custom_id, and whether its results were read. Written before polling, so a batch
  killed and started again polls the batch it submitted instead of paying again.
- `conversations/<hash>.json` (`SavedConversation`): one session's lockstep conversation,
  the answers of its turns and the batch of each turn submitted and not yet answered
  (harness.batch.lockstep).

Both are replaced atomically at each change. A file that is not what its model says (cut
by a disk error, edited by hand) is never trusted in part: `state.json` is moved aside
to `state.json.unreadable` and the batch says so (the batches it named are not polled
again); a conversation that cannot be read is taken up by no run (that session starts
from its first turn). The schemas are exported to `schemas/batch-*.schema.json`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.fs.files import replace_atomically
from harness.redact import artifact_text

STATE_DIR = ".judge-batch"
STATE_FILE = "state.json"
BATCH_STATE_VERSION: Literal["batch-state-v1"] = "batch-state-v1"
CONVERSATION_VERSION: Literal["batch-conversation-v1"] = "batch-conversation-v1"


class AuditBatch(BaseModel):
    """One Message Batch of audit requests."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, description="The batch id the API gave.")
    customIds: dict[str, str] = Field(description="custom_id -> the request's key.")
    done: bool = Field(False, description="Its results were read (every answer is saved).")


class BatchState(BaseModel):
    """`ROOT/.judge-batch/state.json`."""

    model_config = ConfigDict(extra="forbid")

    # Absent in files written before the version was recorded: the same layout.
    version: Literal["batch-state-v1"] = BATCH_STATE_VERSION
    batches: list[AuditBatch] = Field(default_factory=list)


class PendingTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch: str = Field(min_length=1, description="The batch the turn went out in.")
    customId: str = Field(min_length=1, description="The turn's custom_id in it.")


class SavedConversation(BaseModel):
    """`ROOT/.judge-batch/conversations/<hash of the session's name>.json`."""

    model_config = ConfigDict(extra="forbid")

    version: Literal["batch-conversation-v1"] = CONVERSATION_VERSION
    session: str = Field(description="The session folder's name.")
    inputs: str = Field(description="The run's up-to-date inputs digest the turns belong to.")
    answers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Turn number -> the message, as the API sent it."
    )
    pending: dict[str, PendingTurn] = Field(
        default_factory=dict, description="Turn number -> where it was submitted."
    )


def _parsed(path: Path) -> tuple[Any, str | None]:
    """The JSON in `path` (None if there is no file), or why it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable: {getattr(exc, 'strerror', None) or exc}"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number is a ValueError too
        return None, f"not JSON: {str(exc)[:120] or type(exc).__name__}"


def _why(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = "/".join(str(p) for p in first["loc"]) or "the document"
    return f"{where}: {first['msg']}"


def read_state(folder: Path) -> tuple[BatchState, str | None]:
    """The saved audit batches, and a problem to tell the operator if the file was bad
    (then moved aside to `state.json.unreadable`, and no batch is resumed)."""
    path = folder / STATE_FILE
    data, problem = _parsed(path)
    if data is None and problem is None:
        return BatchState(), None
    if problem is None:
        try:
            return BatchState.model_validate(data), None
        except ValidationError as exc:
            problem = f"not a batch state ({_why(exc)})"
    aside = path.with_name(STATE_FILE + ".unreadable")
    try:
        os.replace(path, aside)
        kept = f"moved to {aside.name}"
    except OSError as exc:
        kept = f"left in place ({exc.strerror or exc})"
    return BatchState(), (
        f"{path} is {problem}; {kept}: the batches it named are not polled again, their "
        "requests are asked anew"
    )


def write_state(folder: Path, state: BatchState) -> None:
    replace_atomically(folder / STATE_FILE, artifact_text(state.model_dump(), indent=2).encode())


def read_conversation(path: Path) -> SavedConversation | None:
    """A saved conversation, or None: none saved, or not one (that session starts afresh)."""
    data, problem = _parsed(path)
    if data is None or problem is not None:
        return None
    try:
        return SavedConversation.model_validate(data)
    except ValidationError:
        return None


def write_conversation(path: Path, conversation: SavedConversation) -> None:
    path.parent.mkdir(exist_ok=True)
    text = artifact_text(conversation.model_dump(), indent=None)
    replace_atomically(path, text.encode())


__all__ = [
    "STATE_DIR",
    "STATE_FILE",
    "AuditBatch",
    "BatchState",
    "PendingTurn",
    "SavedConversation",
    "read_conversation",
    "read_state",
    "write_conversation",
    "write_state",
]
