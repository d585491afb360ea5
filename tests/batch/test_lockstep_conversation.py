"""A saved lockstep conversation: taken up on the same inputs, never on others or with --force."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.batch.limits import BatchLimits, Budget
from harness.batch.lockstep import Conversation, Lockstep, conversation_name, prune_conversations
from harness.errors import Halted
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


def test_conversations_of_sessions_gone_from_root_are_pruned(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "root" / ".judge-batch"
    for name in ("kept", "not named this time", "evil\n\x1b]0;x\x07"):
        (root / name).mkdir(parents=True)
    state.mkdir()
    for name in ("kept", "not named this time", "evil\n\x1b]0;x\x07", "removed", "renamed"):
        conversation = Conversation(state, name)
        conversation.bind("inputs-a")
        conversation.save()
    folder = state / "conversations"
    (folder / "notes.txt").write_text("not ours")  # not a saved conversation: left alone
    old_tmp, new_tmp = folder / ".abc.json.x1.tmp", folder / ".abc.json.x2.tmp"
    old_tmp.write_text("cut")
    new_tmp.write_text("being written")
    os.utime(old_tmp, (time.time() - 7200, time.time() - 7200))

    assert prune_conversations(state, root) == 3  # removed, renamed, the old temp file
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted(
        [conversation_name(n) for n in ("kept", "not named this time", "evil\n\x1b]0;x\x07")]
        + ["notes.txt", new_tmp.name]
    )
    assert prune_conversations(state, root) == 0
    assert prune_conversations(tmp_path / "nowhere", root) == 0  # nothing saved yet
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / conversation_name("removed")).write_text("{}")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "conversations").symlink_to(elsewhere)
    assert prune_conversations(linked, root) == 0  # a link is not followed to remove files
    assert (elsewhere / conversation_name("removed")).exists()


def test_a_turn_the_batch_does_not_send_marks_its_session_halted(tmp_path: Path) -> None:
    """The turn is not sent (the batch was interrupted): the session's client says so, for
    the batch's result of that session (`SessionResult.halted`)."""
    budget = Budget(BatchLimits())
    lockstep = Lockstep(None, tmp_path, budget=budget)
    lockstep.enter()
    client = lockstep.client("s1")
    assert client.halted is False
    budget.halt("the batch was interrupted")
    with pytest.raises(Halted, match="the batch was interrupted"):
        client.generate({"model": "m", "max_tokens": 1, "messages": []}, 1.0)
    assert client.halted is True
    assert lockstep.stats.halted == 1
