"""Replies are checked once, in the shell: a bad reply is an error and nothing is read."""

from __future__ import annotations

import math
from typing import Any

import pytest

from harness.cite import Choice, Criterion, Descriptor, ScriptedClient, Usage, judge
from harness.cite.client import Reply, Request
from harness.cite.replies import Rejected, check
from tests.support.cite_builders import OMIT, answering, concerns, score, screened, source

NOUL = {"type": "noul", "criteria": {}}
SCORE = {"type": "score", "criteria": ["a", "b", "c"]}
CHOICE = {"type": "choice", "criteria": {"phone": {}, "chat": {}}}


@pytest.mark.parametrize(
    ("question", "value"),
    [
        (NOUL, 0),
        (NOUL, 1),
        (NOUL, 0.5),
        (SCORE, 0),
        (SCORE, 2),
        (SCORE, 1.5),  # between levels allowed
        (CHOICE, "chat"),
        (NOUL, {"value": 0.2, "confidence": 0.9}),
        (SCORE, {"value": 1, "confidence": 0}),
        (CHOICE, {"value": "phone", "confidence": 1}),
        (CHOICE, {"value": "phone"}),
    ],
    ids=repr,
)
def test_possible_values_are_accepted(question: dict[str, Any], value: object) -> None:
    checked = check({"k": question}, {"k": value})
    assert not isinstance(checked, Rejected)


@pytest.mark.parametrize(
    ("question", "value"),
    [
        (NOUL, 1.01),
        (NOUL, -0.01),
        (NOUL, "0.5"),
        (NOUL, True),
        (NOUL, None),
        (NOUL, math.nan),
        (NOUL, math.inf),
        (SCORE, 2.01),
        (SCORE, -1),
        (SCORE, "1"),
        (SCORE, False),
        (CHOICE, "email"),
        (CHOICE, 0),
        (CHOICE, None),
        (NOUL, {"value": 0.5, "confidence": 1.5}),
        (NOUL, {"value": 0.5, "confidence": "high"}),
        (CHOICE, {"confidence": 0.5}),
        (CHOICE, {"value": "phone", "why": "..."}),
        (NOUL, [0.5]),
        (NOUL, 10**400),  # an integer beyond float range: float() would raise OverflowError
        (SCORE, -(10**400)),
        (NOUL, {"value": 0.5, "confidence": 10**400}),
    ],
    ids=lambda v: repr(v)[:40],
)
def test_impossible_values_are_malformed_answers(question: dict[str, Any], value: object) -> None:
    assert check({"k": question, "ok": NOUL}, {"k": value, "ok": 0.5}) == Rejected(
        "malformed_answers", ["k"]
    )


def test_missing_answers_name_every_missing_key_before_any_malformed_one() -> None:
    questions = {"a": NOUL, "b": NOUL, "c": NOUL}
    assert check(questions, {"b": 7}) == Rejected("missing_answers", ["a", "c"])


def test_answers_to_questions_not_asked_are_ignored() -> None:
    checked = check({"a": NOUL}, {"a": 0.5, "zzz": "whatever"})
    assert isinstance(checked, dict) and list(checked) == ["a"]


def test_a_missing_answer_in_round1_is_a_missing_answers_error_and_nothing_is_read() -> None:
    client = ScriptedClient(answering({"q2:supports": OMIT}))
    report = judge(source("q1", "q2", "q3"), concerns(screened()), client, {"window": 2})
    (error,) = report.errors
    assert (error.kind, error.round, error.keys, error.window) == (
        "missing_answers",
        1,
        ["q2:supports"],
        ["q1", "q2"],
    )
    # q1 was answered well, but its request was not read: set aside with q2.
    assert report.set_aside == ["q1", "q2"]
    assert report.findings[0].passages == ["q3"]


def test_an_impossible_value_in_round1_is_a_malformed_answers_error() -> None:
    client = ScriptedClient(answering({"q1:supports": 1.2}))
    report = judge(source("q1", "q2"), concerns(screened()), client)
    (error,) = report.errors
    assert (error.kind, error.keys, error.window) == (
        "malformed_answers",
        ["q1:supports"],
        ["q1", "q2"],
    )
    assert report.findings == [] and report.set_aside == ["q1", "q2"]


def test_a_bad_round2_reply_is_the_findings_error_with_no_verdict() -> None:
    channel = Descriptor(
        name="channel",
        ask=Choice(
            question="Which?", criteria={"phone": Criterion(what="."), "chat": Criterion(what=".")}
        ),
    )
    c = concerns(screened(descriptors=[channel]))
    client = ScriptedClient(answering({"channel": "email", "confirm:q1": 0.9}))
    report = judge(source("q1"), c, client)
    (finding,) = report.findings
    assert finding.verdict is None and finding.citations == [] and finding.descriptors == {}
    assert finding.error is not None
    assert (finding.error.kind, finding.error.keys, finding.error.round) == (
        "malformed_answers",
        ["channel"],
        2,
    )


def test_a_rejected_reply_still_counts_its_usage_and_model() -> None:
    def answer(request: Request) -> Reply:
        return Reply(answers={}, usage=Usage(input_tokens=10, output_tokens=2), model="m1")

    report = judge(source("q1"), concerns(screened()), ScriptedClient(answer))
    assert report.errors[0].kind == "missing_answers"
    assert report.usage == Usage(input_tokens=10, output_tokens=2)
    assert report.models == ["m1"]


def test_checked_answers_keep_value_and_confidence() -> None:
    sev = Descriptor(name="severity", ask=score())
    c = concerns(screened(descriptors=[sev]))
    table = {"severity": {"value": 1.5, "confidence": 0.8}, "confirm:q1": 1}
    report = judge(source("q1"), c, ScriptedClient(answering(table)))
    finding = report.findings[0]
    assert finding.descriptors["severity"].value == 1.5
    assert finding.descriptors["severity"].confidence == 0.8
    assert finding.citations[0].score == 1.0


def test_a_noul_detect_may_come_with_a_confidence() -> None:
    c = concerns(screened())
    report = judge(
        source("q1"),
        c,
        ScriptedClient(answering({"q1:supports": {"value": 0.9, "confidence": 0.4}})),
    )
    assert report.findings[0].passages == ["q1"]


def test_an_integer_beyond_float_range_fails_only_its_own_claim() -> None:
    """One reply with a huge integer is that claim's malformed_answers error; the other
    claims of the batch are still judged (before, OverflowError ended judge_many)."""
    from harness.cite import judge_many

    def answer(request: Request) -> Reply:
        ids = [k for k in request["questions"]]
        huge = any("bad" in k for k in ids)
        return Reply(answers={k: (10**400 if huge else 0.9) for k in ids})

    items = [(source("bad1"), concerns(screened())), (source("ok1"), concerns(screened()))]
    bad, good = judge_many(items, ScriptedClient(answer))
    (error,) = bad.errors
    assert error.kind == "malformed_answers"
    assert good.errors == [] and good.findings
