"""A saved lockstep conversation: taken up on the same inputs, never on others or with --force."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.batch.lockstep import Conversation
from harness.model.batches import message_of

MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-5-5",
    "content": [{"type": "text", "text": "done"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 2},
}


def saved(tmp_path: Path) -> Conversation:
    conversation = Conversation(tmp_path, "s1")
    conversation.bind("inputs-a")
    conversation.answered(1, message_of(MESSAGE))
    conversation.pending[2] = {"batch": "msgbatch_1", "customId": "s1-2"}
    conversation.save()
    return conversation


@pytest.mark.parametrize(
    ("inputs", "afresh", "answers", "pending"),
    [
        ("inputs-a", False, [1], [2]),  # same inputs: turn 1 replays, turn 2 is polled
        ("inputs-b", False, [], []),  # other inputs: nothing of that run is this run's
        ("inputs-a", True, [], []),  # --force: from the first turn
    ],
)
def test_a_saved_conversation_is_taken_up_only_on_the_same_inputs_without_force(
    tmp_path: Path, inputs: str, afresh: bool, answers: list[int], pending: list[int]
) -> None:
    saved(tmp_path)
    again = Conversation(tmp_path, "s1")
    again.bind(inputs, afresh=afresh)
    assert sorted(again.answers) == answers
    assert sorted(again.pending) == pending


def test_a_cut_conversation_file_starts_afresh(tmp_path: Path) -> None:
    conversation = saved(tmp_path)
    conversation.path.write_bytes(conversation.path.read_bytes()[:20])
    again = Conversation(tmp_path, "s1")
    again.bind("inputs-a")
    assert again.answers == {} and again.pending == {}
