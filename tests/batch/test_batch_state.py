"""`ROOT/.judge-batch/`'s files: typed on the way in and out, never trusted in part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness.batch.batchapi import Book
from harness.batch.lockstep import Conversation
from harness.batch.state import (
    AuditBatch,
    BatchState,
    read_conversation,
    read_state,
    write_state,
)
from harness.cli import cli
from tests.support.batch_helpers import sessions_under
from tests.support.batchapiserver import BatchAPI

KEY = "sk-ant-canary-batch-state-0001"
SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _schema(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / f"{name}.schema.json").read_text()))


BAD_STATES = [
    pytest.param(b'{"batches": "x"}', "batches: Input should be a valid list", id="not-a-list"),
    pytest.param(b'{"batches": [1]}', "batches/0: Input should be a valid dictionary", id="int"),
    pytest.param(b'{"batches": [{"done": false}]}', "batches/0/id: Field required", id="no-id"),
    pytest.param(
        b'{"batches": [{"id": "b", "customIds": []}]}',
        "batches/0/customIds: Input should be a valid dictionary",
        id="ids-a-list",
    ),
    pytest.param(b"[]", "Input should be a valid dictionary", id="a-list"),
    pytest.param(b'{"batches": [], "extra": 1}', "extra: Extra inputs", id="extra-field"),
    pytest.param(b'{"version": "batch-state-v9"}', "version: Input should be", id="version"),
    pytest.param(b'{"batches": [', "not JSON", id="cut"),
    pytest.param(b"1" * 6000, "not JSON", id="huge-number"),
    pytest.param(b"[" * 100_000, "not JSON", id="deep"),
    pytest.param(b"\xff\xfe{}", "unreadable", id="not-utf8"),
]


@pytest.mark.parametrize(("content", "why"), BAD_STATES)
def test_a_bad_state_file_is_moved_aside_and_said(tmp_path: Path, content: bytes, why: str) -> None:
    (tmp_path / "state.json").write_bytes(content)
    state, problem = read_state(tmp_path)
    assert state == BatchState()
    assert problem is not None and why in problem, problem
    assert str(tmp_path / "state.json") in problem
    assert "moved to state.json.unreadable" in problem and "not polled again" in problem
    assert (tmp_path / "state.json.unreadable").read_bytes() == content  # nothing is lost
    assert not (tmp_path / "state.json").exists()


def test_a_saved_conversation_is_what_its_schema_says(tmp_path: Path) -> None:
    conversation = Conversation(tmp_path, "s")
    conversation.bind("sha256:1")
    conversation.pending[2] = {"batch": "msgbatch_1", "customId": "t1-00000"}
    conversation.save()
    _schema("batch-conversation").validate(json.loads(conversation.path.read_text()))


def test_the_state_round_trips_and_reads_the_unversioned_layout(tmp_path: Path) -> None:
    state = BatchState(batches=[AuditBatch(id="msgbatch_1", customIds={"r1-0": "k"})])
    write_state(tmp_path, state)
    assert read_state(tmp_path) == (state, None)
    assert json.loads((tmp_path / "state.json").read_text())["version"] == "batch-state-v1"
    older = {"batches": [{"id": "msgbatch_1", "customIds": {"r1-0": "k"}, "done": False}]}
    (tmp_path / "state.json").write_text(json.dumps(older))  # as written before the version
    assert read_state(tmp_path) == (state, None)
    assert read_state(tmp_path / "none") == (BatchState(), None)


@settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_no_file_under_judge_batch_makes_a_reader_raise(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "state.json").write_bytes(content)
    (tmp_path / "answers.jsonl").write_bytes(content + b"\n" + content)
    conversation = Conversation(tmp_path, "s")
    conversation.path.parent.mkdir(exist_ok=True)
    conversation.path.write_bytes(content)
    read_state(tmp_path)
    assert read_conversation(conversation.path) is None or content.startswith(b"{")
    Book.load(tmp_path)
    conversation.bind("inputs")  # a conversation it cannot read is taken up by no run
    assert conversation.answers == {} and conversation.pending == {}


@pytest.mark.parametrize(
    "line",
    [b'{"key": "k", "reply": 5}', b'{"key": ["k"], "failed": "x"}', b"\xff", b"[" * 50_000],
)
def test_answer_lines_that_are_not_ours_are_skipped(tmp_path: Path, line: bytes) -> None:
    good = {"key": "g", "reply": {"answers": {"q": 0.9}, "usage": {}, "model": "m"}}
    (tmp_path / "answers.jsonl").write_bytes(line + b"\n" + json.dumps(good).encode() + b"\n")
    book = Book.load(tmp_path)
    assert list(book.answers) == ["g"]


def test_a_batch_with_a_bad_state_file_says_so_and_judges_every_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    (root / ".judge-batch").mkdir()
    (root / ".judge-batch" / "state.json").write_text('{"batches": [{"done": false}]}')
    with BatchAPI() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        args = ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert "state.json is not a batch state (batches/0/id: Field required)" in result.stderr
        assert api.calls["create"] == 2 + 3
    for name in ("a", "b"):
        record = json.loads((root / name / ".judge" / "run.json").read_text())
        assert record["outcome"]["kind"] == "model-written"
    saved = json.loads((root / ".judge-batch" / "state.json").read_text())
    assert saved["version"] == "batch-state-v1" and len(saved["batches"]) == 2
    # Every file the batch wrote is what its exported schema says.
    _schema("batch-state").validate(saved)
    answers = (root / ".judge-batch" / "answers.jsonl").read_text().splitlines()
    rounds = (root / ".judge-batch" / "lockstep.jsonl").read_text().splitlines()
    assert len(answers) == 4 and len(rounds) == 3
    for line in answers:
        _schema("batch-answer-line").validate(json.loads(line))
    for line in rounds:
        _schema("batch-round-line").validate(json.loads(line))


def test_a_saved_answer_keeps_what_was_corrected_in_its_reply(tmp_path: Path) -> None:
    """A batch result's clamped usage is said by the session's audit, from the book too."""
    from harness.cite import Reply, Usage

    said = ("usage input_tokens was -5, below 0: counted as 0",)
    book = Book.load(tmp_path)
    book.add("k", Reply({"q": 0.9}, usage=Usage(output_tokens=3), model="m", problems=said))
    again = Book.load(tmp_path)
    assert again.answers["k"].problems == said
    (line,) = (tmp_path / "answers.jsonl").read_text().splitlines()
    _schema("batch-answer-line").validate(json.loads(line))
