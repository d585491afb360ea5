"""The agent loop through judge_session: its unit tests fake our model seam (`ScriptedAPI`);
the API's faults are faked at the SDK boundary (`ScriptedModel`)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anthropic
import pytest

from harness.contract.judgment import check_judge_file
from harness.run import judge_session
from tests.support.fakes import (
    GOOD_JUDGE,
    ScriptedAPI,
    ScriptedModel,
    api_status_error,
    message,
    text,
    tool_results,
    tool_use,
    write_judge,
)
from tests.support.sessions import snapshot

RECEIPT = 'Done. {"wroteJudge": true, "note": "scored"}'


def run(folder: Path, model: ScriptedAPI | ScriptedModel, **options: object):  # type: ignore[no-untyped-def]
    options.setdefault("fetch", "stored")
    options.setdefault("cite", False)
    return judge_session(folder, client=model, **options)


def test_model_reads_writes_and_ends(small_session: Path) -> None:
    before = snapshot(small_session)
    model = ScriptedAPI(
        [
            message(tool_use("Read", {"file_path": "findings"})),
            message(tool_use("Read", {"file_path": "findings/sq1.json"})),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    result = run(small_session, model)
    assert result.exit_code == 0
    assert result.outcome == "model-written"
    assert result.receipt.wroteJudge is True
    assert json.loads(result.receipt.line()).keys() == {"wroteJudge", "upToDate", "note"}
    assert check_judge_file(small_session / "judge.json").valid
    assert snapshot(small_session) == before
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["turns"] == 4
    assert [c["name"] for c in record["toolCalls"]] == ["Read", "Read", "Write"]
    assert record["usage"]["cache_read_input_tokens"] == 200
    assert record["outcome"]["kind"] == "model-written"
    # The Write result reports the show round-trip.
    write_result = tool_results(model.requests[3])[0]
    assert "exited 0" in write_result["content"]
    assert "is_error" not in write_result


def test_prompt_caching_marks_system_tools_and_last_block(small_session: Path) -> None:
    model = ScriptedAPI([message(write_judge()), message(text(RECEIPT))])
    run(small_session, model)
    for request in model.requests:
        assert request["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert request["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert request["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        # Only the last block of the conversation carries the breakpoint.
        marks = sum(
            "cache_control" in block
            for msg in request["messages"]
            for block in msg["content"]
            if isinstance(block, dict)
        )
        assert marks == 1


def test_parallel_tool_calls_answered_in_order_in_one_message(small_session: Path) -> None:
    model = ScriptedAPI(
        [
            message(
                tool_use("Read", {"file_path": "sources.json"}, id="toolu_a"),
                tool_use("Read", {"file_path": "../../etc/passwd"}, id="toolu_b"),
                tool_use("Read", {"file_path": "answer.md"}, id="toolu_c"),
            ),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    result = run(small_session, model)
    results = tool_results(model.requests[1])
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b", "toolu_c"]
    assert results[1]["is_error"] is True and "outside the session" in results[1]["content"]
    assert "is_error" not in results[0] and "is_error" not in results[2]
    assert result.outcome == "model-written"


def test_invalid_write_is_refused_with_errors_then_repaired(small_session: Path) -> None:
    bad = dict(GOOD_JUDGE, scores=dict(GOOD_JUDGE["scores"], completeness=3.0))
    model = ScriptedAPI(
        [
            message(write_judge(raw=json.dumps(bad).replace("3.0", "3.0"))),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    result = run(small_session, model)
    refused = tool_results(model.requests[1])[0]
    assert refused["is_error"] is True
    assert "/scores/completeness" in refused["content"]
    assert "NOT written" in refused["content"]
    assert result.outcome == "repaired"
    assert result.record is not None and result.record.formatErrors


def test_reask_with_exact_errors_then_fallback(small_session: Path) -> None:
    model = ScriptedAPI([message(text("I think it is fine."))], repeat_last=True)
    result = run(small_session, model)
    assert len(model.requests) == 3  # first end_turn + two re-asks
    reask = model.requests[1]["messages"][-1]["content"][0]["text"]
    assert "does not exist" in reask
    assert result.outcome == "fallback"
    assert result.receipt.wroteJudge is True
    judged = check_judge_file(small_session / "judge.json")
    assert judged.valid and judged.judgment is not None
    assert judged.judgment.unknowns == list(GOOD_JUDGE["scores"])
    assert "did not finish" in result.receipt.note


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [("refusal", "refused"), ("model_context_window_exceeded", "context window")],
)
def test_refusal_and_context_overflow_stop_with_fallback(
    small_session: Path, stop_reason: str, expected: str
) -> None:
    model = ScriptedAPI([message(text("No."), stop_reason=stop_reason)])
    result = run(small_session, model)
    assert len(model.requests) == 1
    assert result.outcome == "fallback"
    assert expected in result.receipt.note


def test_max_tokens_asks_to_continue(small_session: Path) -> None:
    model = ScriptedAPI(
        [
            message(text("Let me think at length"), stop_reason="max_tokens"),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    result = run(small_session, model)
    follow = model.requests[1]["messages"][-1]["content"][-1]["text"]
    assert "output token limit" in follow
    assert result.outcome == "model-written"


def test_max_tokens_with_cut_tool_use_answers_it_as_error(small_session: Path) -> None:
    model = ScriptedAPI(
        [
            message(tool_use("Write", {"file_path": "judge.json"}), stop_reason="max_tokens"),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    run(small_session, model)
    blocks = model.requests[1]["messages"][-1]["content"]
    assert blocks[0]["type"] == "tool_result" and blocks[0]["is_error"] is True
    assert blocks[-1]["type"] == "text"


def test_pause_turn_resumes_without_a_user_message(small_session: Path) -> None:
    model = ScriptedAPI(
        [
            message(text("working"), stop_reason="pause_turn"),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    result = run(small_session, model)
    assert model.requests[1]["messages"][-1]["role"] == "assistant"
    assert result.outcome == "model-written"


def test_turn_limit_ends_in_fallback(small_session: Path) -> None:
    # A fresh tool_use id each turn, as the API gives: ids repeated are refused.
    model = ScriptedAPI([lambda _: message(tool_use("Read", {"file_path": "."}))], repeat_last=True)
    result = run(small_session, model, max_turns=3)
    assert len(model.requests) == 3
    assert result.outcome == "fallback"
    assert "turn limit" in result.receipt.note


def test_token_budget_ends_in_fallback(small_session: Path) -> None:
    usage = {"input_tokens": 3000, "output_tokens": 10}
    model = ScriptedAPI(
        [message(tool_use("Read", {"file_path": "."}), usage=usage)], repeat_last=True
    )
    result = run(small_session, model, max_total_tokens=5000)
    assert len(model.requests) == 2
    assert "token budget" in result.receipt.note


def test_time_limit_ends_in_fallback(small_session: Path) -> None:
    def slow(_: dict[str, object]) -> dict[str, object]:
        time.sleep(0.3)
        return message(tool_use("Read", {"file_path": "."}))

    model = ScriptedModel([slow], repeat_last=True)
    result = run(small_session, model, max_seconds=0.5)
    # Cut at the limit, whatever the machine's load: a turn answers after 0.3 s, so at most
    # two start within 0.5 s (a slower machine starts fewer); unbounded, the turn limit's 40.
    assert len(model.requests) <= 2
    assert result.outcome == "fallback"
    assert "time limit" in result.receipt.note


@pytest.mark.parametrize(
    "error",
    [
        api_status_error(529, "overloaded_error", "Overloaded"),
        api_status_error(429, "rate_limit_error"),
        api_status_error(500, "api_error"),
        anthropic.APITimeoutError(request=None),  # type: ignore[arg-type]
    ],
    ids=["529", "429", "500", "timeout"],
)
def test_api_unavailable_ends_in_fallback_saying_so(
    small_session: Path, error: BaseException
) -> None:
    model = ScriptedModel([error])
    result = run(small_session, model)
    assert result.exit_code == 0
    assert result.outcome == "fallback"
    assert "model was unavailable" in result.receipt.note
    assert check_judge_file(small_session / "judge.json").valid


def test_a_judgment_this_installation_wrote_is_kept_over_fallback(small_session: Path) -> None:
    """A valid judge.json that a run of this installation wrote (its sealed run.json says
    so) stays when a later run gets no usable reply."""
    first = run(small_session, ScriptedModel([message(write_judge()), message(text("done"))]))
    assert first.outcome == "model-written"
    previous = (small_session / "judge.json").read_bytes()
    model = ScriptedModel([api_status_error(529, "overloaded_error")])
    result = run(small_session, model, force=True)
    assert result.outcome == "kept-previous"
    assert result.receipt.wroteJudge is False
    assert result.exit_code == 0
    assert (small_session / "judge.json").read_bytes() == previous
    assert "kept" in result.receipt.note


@pytest.mark.parametrize("refusal", [api_status_error(529, "overloaded_error"), None])
def test_a_judgment_that_arrived_with_the_session_is_never_kept(
    small_session: Path, refusal: BaseException | None
) -> None:
    """Issue 31 §1: an all-5 judge.json with no record of this installation (planted, or
    left by another tool) was kept when the API was down or the model refused, and counted
    as a judgment. The advisory fallback replaces it; the old file is kept aside."""
    planted = json.dumps(GOOD_JUDGE, indent=2) + "\n"
    (small_session / "judge.json").write_text(planted)
    answers: list[object] = [refusal] if refusal is not None else [message(text("I refuse."))] * 8
    result = run(small_session, ScriptedModel(answers))
    assert result.outcome == "fallback" and result.receipt.wroteJudge is True
    assert result.judgment is not None and set(result.judgment.scores.model_dump().values()) == {
        "Unknown"
    }
    assert (small_session / ".judge" / "previous-judge.json").read_text() == planted
    assert "no run of this installation wrote" in result.receipt.note


def test_invalid_previous_judge_is_replaced_and_preserved(small_session: Path) -> None:
    (small_session / "judge.json").write_text('{"scores": 1}')
    model = ScriptedModel([api_status_error(500, "api_error")])
    result = run(small_session, model)
    assert result.outcome == "fallback"
    assert check_judge_file(small_session / "judge.json").valid
    assert (small_session / ".judge" / "previous-judge.json").read_text() == '{"scores": 1}'


def test_no_findings_escalates_without_a_model_call(tmp_path: Path) -> None:
    (tmp_path / "empty" / "findings").mkdir(parents=True)
    model = ScriptedAPI([])
    result = run(tmp_path / "empty", model)
    assert model.requests == []
    assert result.outcome == "fallback"
    assert "no findings" in result.receipt.note
    assert check_judge_file(tmp_path / "empty" / "judge.json").valid


def test_unknown_tool_and_bad_arguments_are_tool_errors(small_session: Path) -> None:
    model = ScriptedAPI(
        [
            message(
                tool_use("Bash", {"command": "cat /etc/passwd"}),
                tool_use("Read", {"path": "x"}),
                tool_use("Write", {"file_path": "findings/sq1.json", "content": "{}"}),
            ),
            message(write_judge()),
            message(text(RECEIPT)),
        ]
    )
    before = snapshot(small_session)
    run(small_session, model)
    results = tool_results(model.requests[1])
    assert all(r["is_error"] for r in results)
    assert "no tool named" in results[0]["content"]
    assert "file_path" in results[1]["content"]
    assert "only accepts" in results[2]["content"]
    assert snapshot(small_session) == before


def test_transcript_has_every_request_and_response(small_session: Path, tmp_path: Path) -> None:
    model = ScriptedModel([message(write_judge()), message(text(RECEIPT))])
    transcript = tmp_path / "t.jsonl"
    run(small_session, model, transcript=transcript)
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [(x["type"], x["turn"]) for x in lines] == [
        ("request", 1),
        ("response", 1),
        ("request", 2),
        ("response", 2),
    ]


def test_judge_session_is_one_call_from_the_package(small_session: Path) -> None:
    import harness

    model = ScriptedModel([message(write_judge()), message(text(RECEIPT))])
    result = harness.judge_session(small_session, client=model, fetch="off", cite=False)
    assert isinstance(result, harness.RunResult)
    assert result.receipt == harness.Receipt(wroteJudge=True, note=result.receipt.note)
