"""`ROOT/.judge-batch/`: the typed, versioned state of `judge batch --batch-api`, read and
written in one place.

- `state.json` (`BatchState`): every audit batch submitted, its id, the request key of
  each custom_id, and whether its results were read. Written before polling, so a batch
  killed and started again polls the batch it submitted instead of paying again.
- `answers.jsonl` (`BookLine`, one a line, appended as each result is read): the answer
  of each audit request by its key, or how its batch result failed.
- `conversations/<hash>.json` (`SavedConversation`): one session's lockstep conversation,
  the answers of its turns and the batch of each turn submitted and not yet answered
  (harness.batch.lockstep).
- `lockstep.jsonl` (`RoundLine`, appended): each agent round's batch id and the session,
  turn and run inputs of each custom_id, for the operator (never read back).

The two JSON files are replaced atomically at each change. A file that is not what its
model says (cut by a disk error, edited by hand) is never trusted in part: `state.json`
is moved aside to `state.json.unreadable` and the batch says so (the batches it named are
not polled again); a conversation that cannot be read is taken up by no run (that session
starts from its first turn); a line of `answers.jsonl` that is not one is skipped. The
schemas are exported to `schemas/batch-*.schema.json`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from harness.fs.files import replace_atomically
from harness.redact import artifact_text
from harness.strict import Strict
from harness.usage import Usage

STATE_DIR = ".judge-batch"
STATE_FILE = "state.json"
BATCH_STATE_VERSION: Literal["batch-state-v1"] = "batch-state-v1"
CONVERSATION_VERSION: Literal["batch-conversation-v1"] = "batch-conversation-v1"
ANSWERS_FILE = "answers.jsonl"
ROUNDS_FILE = "lockstep.jsonl"


class AuditBatch(Strict):
    """One Message Batch of audit requests."""

    id: str = Field(min_length=1, description="The batch id the API gave.")
    customIds: dict[str, str] = Field(description="custom_id -> the answer's key.")
    done: bool = Field(False, description="Its results were read (every answer is saved).")


class BatchState(Strict):
    """`ROOT/.judge-batch/state.json`."""

    # Absent in files written before the version was recorded: the same layout.
    version: Literal["batch-state-v1"] = BATCH_STATE_VERSION
    batches: list[AuditBatch] = Field(default_factory=list)


class PendingTurn(Strict):
    batch: str = Field(min_length=1, description="The batch the turn went out in.")
    customId: str = Field(min_length=1, description="The turn's custom_id in it.")


class SavedConversation(Strict):
    """`ROOT/.judge-batch/conversations/<hash of the session's name>.json`."""

    version: Literal["batch-conversation-v1"] = CONVERSATION_VERSION
    session: str = Field(description="The session folder's name.")
    inputs: str = Field(description="The run's up-to-date inputs digest the turns belong to.")
    answers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Turn number -> the message, as the API sent it."
    )
    pending: dict[str, PendingTurn] = Field(
        default_factory=dict, description="Turn number -> where it was submitted."
    )


class SavedReply(Strict):
    """The engine's reply to one audit request, as a batch result gave it."""

    answers: dict[str, Any] = Field(description="Question key -> the raw answer.")
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    problems: list[str] = Field(
        default_factory=list,
        description="What was corrected to read the result (a token count clamped).",
    )


class BookLine(Strict):
    """One line of `ROOT/.judge-batch/answers.jsonl`: an answer, or how it failed."""

    version: Literal["batch-answer-v1"] = "batch-answer-v1"
    key: str = Field(
        min_length=1,
        description="The key of the request's Messages-API parameters (harness.batch.batchapi).",
    )
    reply: SavedReply | None = None
    failed: str | None = Field(None, description="errored, expired, canceled or missing.")


class RoundTurn(Strict):
    session: str
    turn: int = Field(ge=1)
    inputs: str | None = Field(description="The run's inputs digest (None: not yet named).")


class RoundLine(Strict):
    """One line of `ROOT/.judge-batch/lockstep.jsonl`: one agent round's batch."""

    version: Literal["batch-round-v1"] = "batch-round-v1"
    round: int = Field(ge=1)
    id: str = Field(description="The batch id the API gave.")
    customIds: dict[str, RoundTurn]


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


def read_book(folder: Path) -> list[BookLine]:
    """Every line of `answers.jsonl` that is one (a line cut by a kill, or not ours, is
    skipped: that request is asked again)."""
    try:
        raw = (folder / ANSWERS_FILE).read_bytes()
    except OSError:
        return []
    lines = []
    for line in raw.splitlines():
        try:  # bytes: a line that is not UTF-8 is skipped as well
            lines.append(BookLine.model_validate(json.loads(line)))
        except (ValueError, RecursionError):  # ValidationError is a ValueError
            continue
    return lines


def append_line(path: Path, line: BookLine | RoundLine) -> None:
    """Append one line to a JSON Lines file of the state (the caller holds its lock)."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(artifact_text(line.model_dump(exclude_none=True), indent=None) + "\n")


__all__ = [
    "ANSWERS_FILE",
    "ROUNDS_FILE",
    "STATE_DIR",
    "STATE_FILE",
    "AuditBatch",
    "BatchState",
    "BookLine",
    "PendingTurn",
    "RoundLine",
    "RoundTurn",
    "SavedConversation",
    "SavedReply",
    "append_line",
    "read_book",
    "read_conversation",
    "read_state",
    "write_conversation",
    "write_state",
]
