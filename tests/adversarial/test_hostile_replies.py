"""Hostile model and API replies (issue #22 §4), through the real SDK and the real run.

Usage is data from outside (clamped and said, never a crash); a turn's tool results are
bounded in bytes; an audit reply that refuses or gives a key twice is never credited;
the run's notes say what happened (the time limit, a disk that refused judge.json, the
harness's own MemoryError), not a neighbouring cause. Property tests draw arbitrary
usage values and arbitrary audit replies: every run exits 0 with a valid judge.json and
a run.json that reads back, never an internal error.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import config
from harness.artifacts.record import RunRecord
from harness.contract.judgment import check_judge_file
from harness.errors import WriteError
from harness.run import judge_session
from tests.support.apiserver import FakeAPI, Raw, Reply, Routed, judge_responder, serve_with_env
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, tool_use, write_judge
from tests.support.hostile_usage import EVERY_COUNT
from tests.support.sessions import write_small_session

KEY = "sk-ant-canary-hostile-replies-01"
OK = Reply(judge_responder)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def run(folder: Path, **options: Any) -> Any:
    options = {"fetch": "stored", "cite": False, "timeout": 10.0, "max_retries": 0, **options}
    return judge_session(folder, **options)


def record_of(folder: Path) -> RunRecord:
    """run.json, read back through its own model (it must validate)."""
    return RunRecord.model_validate_json((folder / ".judge" / "run.json").read_text())


def is_audit(request: dict[str, Any]) -> bool:
    return "output_config" in request


def fields(request: dict[str, Any]) -> dict[str, Any]:
    return dict(request["output_config"]["format"]["schema"]["properties"])


def answer_text(request: dict[str, Any], first: bool = True) -> str:
    """A strict answer to every question of an audit request: the best (or worst) one."""
    answers: dict[str, Any] = {}
    for name, schema in fields(request).items():
        if schema.get("type") == "object":
            options = schema["properties"]["value"]["enum"]
            answers[name] = {"value": options[0 if first else -1], "confidence": 0.9}
        else:
            answers[name] = 1.0 if first else 0.0
    return json.dumps(answers)


def doubled_text(request: dict[str, Any]) -> str:
    """Every answer given twice, the worst then the best: `{"a": 0, "a": 1}`."""
    worst, best = json.loads(answer_text(request, False)), json.loads(answer_text(request))
    pairs = [
        f"{json.dumps(n)}: {json.dumps(worst[n])}, {json.dumps(n)}: {json.dumps(best[n])}"
        for n in worst
    ]
    return "{" + ", ".join(pairs) + "}"


def audit_server(reply: Any) -> Routed:
    """The audit's requests answered by `reply(request)` (a message body), the judge's by
    the obedient judge."""
    return Routed(is_audit, Reply(reply), OK)


def verdicts(folder: Path) -> list[str]:
    report = json.loads((folder / ".judge" / "citations.json").read_text())
    return [claim["verdict"] for claim in report["claims"]]


# -- usage is data from outside ---------------------------------------------------------

USAGE = EVERY_COUNT


def _with_usage(usage: dict[str, Any]) -> Reply:
    return Reply(lambda request: {**judge_responder(request), "usage": usage})


def test_negative_usage_is_clamped_and_said(api: Any, small_session: Path) -> None:
    """On main: a pydantic ValidationError, exit 1, no judge.json."""
    api([], default=_with_usage({"input_tokens": -5, "output_tokens": 20}))
    result = run(small_session)
    assert result.outcome == "model-written", result.receipt.note
    record = record_of(small_session)
    assert record.usage is not None and record.usage.input_tokens == 0
    assert record.usage.output_tokens == 60  # three turns of 20
    assert any("input_tokens was -5, below 0: counted as 0" in p for p in record.replyProblems)


def test_a_huge_usage_count_cannot_refund_or_overflow_the_budget(
    api: Any, small_session: Path
) -> None:
    """A count past the cap is clamped to it: the budget ends the run, as it should."""
    api([], default=_with_usage({"input_tokens": 10**40, "output_tokens": 1}))
    result = run(small_session, max_total_tokens=1000)
    assert "the token budget (1,000 tokens) was used up" in result.receipt.note
    record = record_of(small_session)
    assert record.usage is not None and record.usage.input_tokens == 100_000_000
    assert any("above 100,000,000" in p for p in record.replyProblems)
    assert config.MAX_USAGE_TOKENS == 100_000_000


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(usage=USAGE)
def test_any_usage_values_end_in_a_valid_judgment(usage: dict[str, Any]) -> None:
    with FakeAPI([], default=_with_usage(usage)) as server, tempfile.TemporaryDirectory() as tmp:
        folder = write_small_session(Path(tmp) / "sess")
        with pointed_at(server.url):
            result = run(folder, max_turns=4)
        assert result.exit_code == 0, result.receipt.note
        assert check_judge_file(folder / "judge.json").valid
        record = record_of(folder)
        assert record.usage is not None
        for value in record.usage.model_dump().values():
            assert 0 <= value <= 4 * 4 * config.MAX_USAGE_TOKENS


@contextlib.contextmanager
def pointed_at(url: str) -> Iterator[None]:
    """The SDK's variables pointing at `url` (hypothesis runs many servers in one test)."""
    names = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    saved = {name: os.environ.pop(name, None) for name in names}
    os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = url, KEY
    try:
        yield
    finally:
        for name, value in saved.items():
            os.environ.pop(name, None)
            if value is not None:
                os.environ[name] = value


# -- audit replies: a refusal or a key given twice is never credited ----------------------


def _credited(reply: Any) -> Any:
    return lambda request: message(text(reply(request)), model="claude-haiku-5-5")


AUDIT_REPLIES: list[tuple[str, Any, bool]] = [
    # (id, the audit's reply as a function of its request, credited as supported)
    ("strict-best-answer", _credited(answer_text), True),
    ("key-given-twice", _credited(doubled_text), False),
    (
        "refusal-with-best-answer",
        lambda request: message(
            text(answer_text(request)), stop_reason="refusal", model="claude-haiku-5-5"
        ),
        False,
    ),
    (
        "nan-answer",
        _credited(lambda request: answer_text(request).replace("1.0", "NaN")),
        False,
    ),
]


@pytest.mark.parametrize(
    ("reply", "credited"), [r[1:] for r in AUDIT_REPLIES], ids=[r[0] for r in AUDIT_REPLIES]
)
def test_audit_reply_is_credited_only_when_strict_and_not_refused(
    api: Any, small_session: Path, reply: Any, credited: bool
) -> None:
    """On main a refusal, and `{"a": 0, "a": 1}` (last wins), were credited as supported."""
    api([], default=audit_server(reply))
    result = run(small_session, cite=True)
    assert result.exit_code == 0 and result.outcome == "model-written", result.receipt.note
    assert (verdicts(small_session) == ["supported"]) is credited, verdicts(small_session)


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


@st.composite
def audit_reply_text(draw: st.DrawFn) -> Any:
    """A function of the request giving an arbitrary reply text: valid answers with keys
    doubled, values replaced by arbitrary JSON, arbitrary text, or a stop reason."""
    kind = draw(st.sampled_from(["values", "doubled", "text", "truncated"]))
    values = draw(st.lists(JSON_VALUE, min_size=1, max_size=4))
    junk = draw(st.text(max_size=40))
    stop = draw(st.sampled_from(["end_turn", "refusal", "max_tokens", "something_new"]))

    def body(request: dict[str, Any]) -> dict[str, Any]:
        names = list(fields(request))
        if kind == "values":
            said = json.dumps({n: values[i % len(values)] for i, n in enumerate(names)})
        elif kind == "doubled":
            said = doubled_text(request)
        elif kind == "truncated":
            said = answer_text(request)[: max(1, len(junk))]
        else:
            said = junk
        return message(text(said), stop_reason=stop, model="claude-haiku-5-5")

    return body, kind, stop


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=audit_reply_text())
def test_any_audit_reply_ends_in_a_valid_run(drawn: Any) -> None:
    body, kind, stop = drawn
    with FakeAPI([], default=audit_server(body)) as server, tempfile.TemporaryDirectory() as tmp:
        folder = write_small_session(Path(tmp) / "sess")
        with pointed_at(server.url):
            result = run(folder, cite=True, max_turns=4)
        assert result.exit_code == 0, result.receipt.note
        assert check_judge_file(folder / "judge.json").valid
        record_of(folder)  # run.json reads back through its model
        if kind == "doubled" or stop == "refusal":
            assert "supported" not in verdicts(folder)


def test_a_judge_reply_with_a_key_twice_is_malformed(api: Any, small_session: Path) -> None:
    """The SDK's reader keeps the last copy of a key: a Write whose `content` is given twice
    (an empty object, then a good judgment) was written as the good one."""
    body = json.dumps(message(tool_use("Write", {"file_path": "judge.json", "content": "{}"})))
    good = json.dumps(json.dumps(GOOD_JUDGE))
    doubled = body.replace('"content": "{}"', '"content": "{}", "content": ' + good)
    assert doubled != body
    server = api([Raw(doubled.encode())], default=OK)
    result = run(small_session)
    assert result.outcome == "fallback", result.receipt.note
    assert "the API's reply is malformed" in result.receipt.note
    assert '"content" at most once' in result.receipt.note
    assert len(server.requests) == 1


# -- a turn's tool results are bounded in bytes -------------------------------------------


def test_thousands_of_reads_in_one_turn_are_bounded_and_said(api: Any, small_session: Path) -> None:
    """On main, 2,000 Reads of a 256 KB file in one turn reached 2.1 GB; here 300 of them
    would send 75 MB back. Past the per-turn limit each call is refused, and said."""
    big = small_session / "sources" / "big.txt"
    big.write_text(("0123456789abcdef" * 16 + "\n") * 1000)  # 257 KB, 1,000 lines
    reads = [
        tool_use("Read", {"file_path": "sources/big.txt"}, id=f"toolu_r{i:04d}") for i in range(300)
    ]
    server = api([Reply(message(*reads))], default=OK)
    result = run(small_session)
    assert result.outcome == "model-written", result.receipt.note
    second = server.requests[1]
    sent = len(json.dumps(second.body))
    assert sent < 6 * 1024 * 1024, sent  # the 4 MiB per turn, plus one Read and the rest
    answers = second.body["messages"][-1]["content"]
    assert len(answers) == 300  # every call is answered, in order
    refused = [a for a in answers if a.get("is_error")]
    assert refused and all("limit per turn" in a["content"] for a in refused)
    record = record_of(small_session)
    assert any(f"{len(refused)} of 300 tool call(s) not run" in p for p in record.replyProblems)
    assert config.MAX_TOOL_RESULT_BYTES_PER_TURN == 4 * 1024 * 1024


# -- notes say what happened -------------------------------------------------------------


def test_a_memory_error_is_ours_not_the_apis(small_session: Path) -> None:
    result = run(small_session, client=ScriptedModel([MemoryError()]))
    reason = record_of(small_session).outcome
    assert reason is not None
    assert "the harness ran out of memory" in reason.reason
    assert "not of the model or the API" in reason.reason
    assert "API's reply" not in result.receipt.note


def test_a_disk_that_refuses_judge_json_is_not_the_turn_limit(
    small_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every Write fails with an I/O error: on main the note said only "the turn limit"."""
    import harness.agent.tools as tools

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise WriteError("cannot write judge.json: Input/output error")

    monkeypatch.setattr(tools, "write_judgment_atomic", refuse)
    client = ScriptedModel([_writes_judge] * 4)
    result = run(small_session, client=client, max_turns=3)
    note = result.receipt.note
    assert "judge.json could not be written (cannot write judge.json: Input/output error" in note
    assert "the turn limit (3)" in note  # said second, as what ended the loop


def _writes_judge(request: dict[str, Any]) -> dict[str, Any]:
    return message(write_judge())
