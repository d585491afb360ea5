"""Round 2 packs the screened findings of one judgment: their passages sent once, each
finding still its own set (its own keys, its own verdict)."""

from __future__ import annotations

import pytest

from harness.cite import (
    CiteOptionsError,
    RecordingCiteClient,
    ReplayCiteClient,
    Reply,
    ScriptedClient,
    Usage,
    judge,
)
from harness.cite import verdict as rules
from harness.cite.client import Request
from harness.cite.gather import Gathered

from .builders import OMIT, answering, concerns, factored, screened, source


def round2(client: ScriptedClient) -> list[Request]:
    return [r for r in client.requests if any("confirm:" in k for k in r["questions"])]


# Round 1: "a" matches q1, q2; "b" matches q2, q3; "c" matches nothing.
DETECTS = {
    "q1:a": 0.9,
    "q2:a": 0.9,
    "q3:a": 0.1,
    "q1:b": 0.1,
    "q2:b": 0.9,
    "q3:b": 0.9,
    "q1:c": 0.1,
    "q2:c": 0.1,
    "q3:c": 0.1,
}


def test_findings_of_one_judgment_share_one_round2_request() -> None:
    table = {**DETECTS, "a:confirm:q1": 0.95, "a:confirm:q2": 0.1}
    table |= {"b:confirm:q2": 0.5, "b:confirm:q3": 0.5}
    client = ScriptedClient(answering(table))
    c = concerns(screened("a"), screened("b"), screened("c"))
    report = judge(source("q1", "q2", "q3"), c, client)
    (request,) = round2(client)
    # The passages gathered by either finding, once, in source order.
    assert list(request["state"]["quotes"]) == ["q1", "q2", "q3"]
    assert list(request["questions"]) == [
        "a:confirm:q1",
        "a:confirm:q2",
        "b:confirm:q2",
        "b:confirm:q3",
    ]
    # Each finding is judged on its own answers, as its own set.
    a, b = report.findings
    assert (a.concern, a.verdict, [(x.passage, x.status) for x in a.citations]) == (
        "a",
        "holds",
        [("q1", "holds")],
    )
    assert (b.concern, b.verdict, [(x.passage, x.status) for x in b.citations]) == (
        "b",
        "review",
        [("q2", "review"), ("q3", "review")],
    )
    assert report.requests == 2 and report.errors == []


def test_a_packed_question_is_the_one_a_lone_request_would_ask() -> None:
    c = concerns(screened("a"), screened("b"))
    src = source("q1", "q2", "q3")
    found = [Gathered(0, ("q1", "q2")), Gathered(1, ("q2", "q3"))]
    packed = rules.packed(src, c, found)
    for g in found:
        alone = rules.request(src, c, g)
        name = c.concerns[g.concern].name
        for key, question in alone["questions"].items():
            assert packed["questions"][f"{name}:{key}"] == question
        assert set(alone["state"]["quotes"]) <= set(packed["state"]["quotes"])
    # One finding: the request is exactly the lone one, keys unprefixed.
    assert rules.packed(src, c, found[:1]) == rules.request(src, c, found[0])


def test_the_verdicts_are_those_of_unpacked_requests() -> None:
    def by_key(key: str) -> float:
        # The same answer for a finding's question, packed or not.
        tail = key.split(":")
        return {"q1": 0.95, "q2": 0.5, "q3": 0.2}.get(tail[-1], 0.9) if "confirm" in tail else 0.9

    c = concerns(screened("a"), screened("b"))
    src = source("q1", "q2", "q3")
    packed = judge(src, c, ScriptedClient(answering(DETECTS, by_key=by_key)))
    alone = judge(src, c, ScriptedClient(answering(DETECTS, by_key=by_key)), {"pack": False})
    assert packed.findings == alone.findings
    assert (packed.requests, alone.requests) == (2, 3)


def test_a_pack_holds_at_most_a_window_of_passages() -> None:
    c = concerns(screened("a"), screened("b"), screened("c"), screened("d"))
    found = [
        Gathered(0, ("p1", "p2")),
        Gathered(1, ("p2", "p3")),  # union 3
        Gathered(2, ("p4",)),  # union 4 > 3: a new pack
        Gathered(3, ("p1", "p2", "p3", "p4", "p5")),  # alone, above the window itself
    ]
    assert rules.packs(c, found, 3) == [(0, 1), (2,), (3,)]
    assert rules.packs(c, found, 10) == [(0, 1, 2, 3)]


def test_a_factored_finding_is_never_packed() -> None:
    c = concerns(
        screened("a"),
        factored("f", [("x", "fx", True, False)]),
        screened("b"),
        factors=("fx",),
    )
    found = [Gathered(0, ("p1",)), Gathered(1, ("p1",), (("x", "p1"),)), Gathered(2, ("p2",))]
    assert rules.packs(c, found, 10) == [(0, 2), (1,)]


def test_usage_counts_a_packed_reply_once() -> None:
    def reply(request: Request) -> Reply:
        return Reply(answers=answering(DETECTS)(request), usage=Usage(input_tokens=100))

    c = concerns(screened("a"), screened("b"))
    report = judge(source("q1", "q2", "q3"), c, ScriptedClient(reply))
    assert report.requests == 2
    assert report.usage.input_tokens == 200  # one window, one packed confirm


def test_a_finding_left_unanswered_in_a_pack_fails_alone() -> None:
    table = {**DETECTS, "b:confirm:q3": OMIT}
    c = concerns(screened("a"), screened("b"))
    report = judge(source("q1", "q2", "q3"), c, ScriptedClient(answering(table)))
    a, b = report.findings
    assert a.verdict == "holds" and a.error is None
    assert b.verdict is None and b.error is not None
    assert (b.error.kind, b.error.keys, b.error.concern) == (
        "missing_answers",
        ["b:confirm:q3"],
        "b",
    )
    assert report.errors == [b.error]


def test_a_pack_refused_as_too_large_is_asked_in_halves() -> None:
    def too_large(request: Request) -> bool:
        findings = {k.split(":")[0] for k in request["questions"] if ":confirm:" in k}
        return len(findings) > 2  # three together are too many, two fit

    c = concerns(screened("a"), screened("b"), screened("c"))
    client = ScriptedClient(answering(), too_large=too_large)
    report = judge(source("q1", "q2"), c, client)
    sent = [sorted(r["questions"]) for r in round2(client)]
    assert sent[0] == sorted(f"{n}:confirm:{q}" for n in "abc" for q in ("q1", "q2"))
    assert sorted(sent[1:]) == [
        ["b:confirm:q1", "b:confirm:q2", "c:confirm:q1", "c:confirm:q2"],
        ["confirm:q1", "confirm:q2"],  # a lone finding: its own keys
    ]
    assert [f.verdict for f in report.findings] == ["holds"] * 3
    assert report.errors == []


def test_a_lone_finding_too_large_is_its_error_and_the_others_stand() -> None:
    def too_large(request: Request) -> bool:
        return "confirm:q1" in request["questions"] or any(
            k.startswith("a:confirm:") for k in request["questions"]
        )

    table = {"q1:a": 0.9, "q2:a": 0.1, "q1:b": 0.1, "q2:b": 0.9}  # a: q1; b: q2
    c = concerns(screened("a"), screened("b"))
    client = ScriptedClient(answering(table), too_large=too_large)
    report = judge(source("q1", "q2"), c, client)
    a, b = report.findings
    assert a.verdict is None and a.error is not None and a.error.kind == "request_too_large"
    assert a.error.keys == ["confirm:q1"]
    assert b.verdict == "holds" and b.error is None
    assert report.errors == [a.error]
    assert [list(r["questions"]) for r in round2(client)] == [
        ["a:confirm:q1", "b:confirm:q2"],
        ["confirm:q1"],
        ["confirm:q2"],
    ]


def test_a_packed_recording_replays() -> None:
    c = concerns(screened("a"), screened("b"))
    src = source("q1", "q2", "q3")
    recorder = RecordingCiteClient(ScriptedClient(answering(DETECTS)))
    recorded = judge(src, c, recorder)
    replay = ReplayCiteClient(recorder.entries)
    assert judge(src, c, replay) == recorded
    assert replay.unused() == []
    packed = [e for e in recorder.entries if any(":confirm:" in k for k in e.questions)]
    assert [e.state for e in packed] == [{"quotes": ["q1", "q2", "q3"]}]


@pytest.mark.parametrize("value", [1, "yes", None])
def test_pack_must_be_a_boolean(value: object) -> None:
    with pytest.raises(CiteOptionsError, match="pack must be true or false"):
        judge(source("q1"), concerns(screened()), ScriptedClient(answering()), {"pack": value})
