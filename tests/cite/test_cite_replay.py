"""Record and replay, keyed by question keys and passage ids, never by wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cite import (
    Check,
    RecordingCiteClient,
    ReplayCiteClient,
    ReplayEntry,
    Report,
    ScreenedConcern,
    ScriptedClient,
    Usage,
    judge,
)
from harness.cite.client import Reply, Request
from harness.cite.replay import load_entries, replay_key
from harness.errors import ReplayError
from tests.support.cite_builders import answering, concerns, factored, noul, screened, source


def _live(request: Request) -> Reply:
    return Reply(answers=answering(default=0.8)(request), usage=Usage(input_tokens=5), model="m")


PAIR = concerns(
    screened(),
    factored("pair", [("a", "f", True, False)], checks=[Check(name="ok", ask=noul())]),
    factors=("f",),
)


def _record(tmp_path: Path) -> tuple[Path, Report]:
    """Record a run whose 3-passage requests are refused as too large (round 1 halves)."""
    recorder = RecordingCiteClient(
        ScriptedClient(_live, too_large=lambda r: len(r["state"].get("quotes", {})) > 2)
    )
    report = judge(source("q1", "q2", "q3"), PAIR, recorder, {"window": 3})
    path = tmp_path / "replay.jsonl"
    recorder.save(path)
    return path, report


def test_a_recording_replays_to_the_same_report(tmp_path: Path) -> None:
    path, live = _record(tmp_path)
    replay = ReplayCiteClient.load(path)
    assert judge(source("q1", "q2", "q3"), PAIR, replay, {"window": 3}) == live
    assert replay.unused() == []


def test_replay_is_keyed_by_question_keys_and_passage_ids_not_wording(tmp_path: Path) -> None:
    path, live = _record(tmp_path)
    reworded = concerns(
        ScreenedConcern(
            name="supports",
            detect=noul("Completely new wording for {passage}?"),
            confirm=noul("Another prompt about {passage}"),
        ),
        factored(
            "pair", [("a", "f", True, False)], checks=[Check(name="ok", ask=noul("New check"))]
        ),
        factors=("f",),
    )
    replayed = judge(source("q1", "q2", "q3"), reworded, ReplayCiteClient.load(path), {"window": 3})
    assert replayed == live


def test_a_request_the_replay_cannot_answer_raises_replay_error_naming_the_keys(
    tmp_path: Path,
) -> None:
    path, _ = _record(tmp_path)
    replay = ReplayCiteClient.load(path)
    with pytest.raises(ReplayError) as info:
        judge(source("q1", "q2", "q3", "q9"), PAIR, replay, {"window": 3})
    assert info.value.data["keys"] == ["q9:f", "q9:supports"]
    assert "q9:supports" in str(info.value)


def test_replay_error_names_state_and_keys() -> None:
    replay = ReplayCiteClient([])
    request = {
        "state": {"quotes": {"q1": {"id": "q1", "text": "t"}}},
        "questions": {"q1:supports": {}},
    }
    with pytest.raises(ReplayError) as info:
        replay.ask(request)
    assert info.value.data == {"state": {"quotes": ["q1"]}, "keys": ["q1:supports"]}
    assert "q1:supports" in str(info.value)


def test_refusals_as_too_large_are_recorded_and_replayed(tmp_path: Path) -> None:
    path, live = _record(tmp_path)
    entries = load_entries(path)
    refused = [(e.state, e.questions[0]) for e in entries if e.too_large]
    assert refused == [
        ({"quotes": ["q1", "q2", "q3"]}, "confirm:q1"),  # round 2: the finding's error
        ({"quotes": ["q1", "q2", "q3"]}, "q1:supports"),  # round 1: halved
    ]
    assert live.requests == 3 + 2


def test_the_recording_file_is_json_lines_sorted_by_key(tmp_path: Path) -> None:
    path, _ = _record(tmp_path)
    lines = path.read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert all(
        set(e) <= {"state", "questions", "answers", "usage", "model", "too_large"} for e in entries
    )
    keys = [ReplayEntry.model_validate(e).key for e in entries]
    assert keys == sorted(keys)
    factored_entry = next(e for e in entries if "ok" in e["questions"])
    assert factored_entry["state"] == {"a": "q1"}


def test_a_json_array_file_loads_too(tmp_path: Path) -> None:
    path = tmp_path / "replay.json"
    entry = {
        "state": {"quotes": ["q1"]},
        "questions": ["q1:supports"],
        "answers": {"q1:supports": 0.1},
    }
    path.write_text(json.dumps([entry]))
    replay = ReplayCiteClient.load(path)
    report = judge(source("q1"), concerns(screened()), replay)
    assert report.findings == []


@pytest.mark.parametrize(
    "text", ["{not json}\n", '{"state": {}, "questions": [], "extra": 1}\n', "[1]"]
)
def test_a_malformed_replay_file_is_a_replay_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ReplayError):
        ReplayCiteClient.load(path)


def test_a_missing_replay_file_is_a_replay_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayError):
        ReplayCiteClient.load(tmp_path / "none.jsonl")


def test_two_different_recordings_of_one_request_are_refused() -> None:
    a = ReplayEntry(
        state={"quotes": ["q1"]}, questions=["q1:supports"], answers={"q1:supports": 0.1}
    )
    b = ReplayEntry(
        state={"quotes": ["q1"]}, questions=["q1:supports"], answers={"q1:supports": 0.9}
    )
    with pytest.raises(ReplayError):
        ReplayCiteClient([a, b])
    assert ReplayCiteClient([a, a]).unused() == [a]


def test_replay_key_ignores_question_order_but_not_passages() -> None:
    def req(ids: list[str], keys: list[str]) -> Request:
        return {
            "state": {"quotes": {i: {"id": i, "text": "t"} for i in ids}},
            "questions": {k: {} for k in keys},
        }

    assert replay_key(req(["q1"], ["a", "b"])) == replay_key(req(["q1"], ["b", "a"]))
    assert replay_key(req(["q1"], ["a"])) != replay_key(req(["q2"], ["a"]))
