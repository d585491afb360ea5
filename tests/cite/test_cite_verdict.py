"""Round 2: one request per finding, its shape, and the verdict rules with {low, high}."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from harness.cite import (
    Check,
    CiteSource,
    Descriptor,
    ScriptedClient,
    judge,
    verdict,
)
from harness.cite.client import Reply, Request
from harness.cite.gather import Gathered
from harness.cite.replies import Checked
from harness.cite.report import Answer
from tests.support.cite_builders import answering, concerns, factored, noul, score, screened, source

TURNS = CiteSource.model_validate(
    {
        "as": "turns",
        "passages": [
            {
                "id": "t3",
                "speaker": "customer",
                "text": "an engineer came out and fixed it in March",
            },
            {"id": "t9", "speaker": "customer", "text": "it's dropping every evening again"},
            {"id": "t14", "speaker": "customer", "text": "if this keeps happening I'm switching"},
            {
                "id": "t31",
                "speaker": "customer",
                "text": "honestly I've been looking at other providers",
            },
        ],
    }
)
SEVERITY = Descriptor(name="severity", ask=score("..."))


def test_a_screened_finding_puts_its_passages_under_as_with_confirms_and_descriptors() -> None:
    c = concerns(screened("cancellation_risk", descriptors=[SEVERITY]))
    request = verdict.request(TURNS, c, Gathered(0, ("t14", "t31")))
    assert request["state"] == {
        "turns": {
            "t14": {
                "id": "t14",
                "speaker": "customer",
                "text": "if this keeps happening I'm switching",
            },
            "t31": {
                "id": "t31",
                "speaker": "customer",
                "text": "honestly I've been looking at other providers",
            },
        }
    }
    assert list(request["questions"]) == ["confirm:t14", "confirm:t31", "severity"]
    assert request["questions"]["confirm:t31"]["instructions"] == {
        "question": "Does `turns.t31.text` evidence cancellation_risk?",
        "inspect": "`turns.t31.text`",
    }
    assert request["questions"]["severity"] == {
        "type": "score",
        "instructions": {"question": "...", "compare": ["`turns.t14.text`", "`turns.t31.text`"]},
        "criteria": ["...", "...", "..."],
    }


def test_a_factored_finding_puts_each_role_at_the_top_level_and_asks_its_checks() -> None:
    same = Check(
        name="same_fault",
        roles=["earlier_fix", "fault"],
        ask=noul("Do {earlier_fix} and {fault} describe the same fault?"),
    )
    c = concerns(
        factored(
            "repeat_fault",
            [("earlier_fix", "fix", True, False), ("fault", "fault", True, True)],
            checks=[same],
            descriptors=[SEVERITY],
        ),
        factors=("fix", "fault"),
    )
    g = Gathered(0, ("t3", "t9"), (("earlier_fix", "t3"), ("fault", "t9")))
    request = verdict.request(TURNS, c, g)
    assert request == {
        "state": {
            "earlier_fix": {
                "id": "t3",
                "speaker": "customer",
                "text": "an engineer came out and fixed it in March",
            },
            "fault": {
                "id": "t9",
                "speaker": "customer",
                "text": "it's dropping every evening again",
            },
        },
        "questions": {
            "same_fault": {
                "type": "noul",
                "instructions": {
                    "question": "Do `earlier_fix.text` and `fault.text` describe the same fault?",
                    "compare": ["`earlier_fix.text`", "`fault.text`"],
                },
                "criteria": {"true": {"what": "..."}, "false": {"what": "...", "not_for": "..."}},
            },
            "severity": {
                "type": "score",
                "instructions": {
                    "question": "...",
                    "compare": ["`earlier_fix.text`", "`fault.text`"],
                },
                "criteria": ["...", "...", "..."],
            },
        },
    }


def test_a_check_is_asked_only_when_its_roles_are_filled() -> None:
    both = Check(name="both", roles=["a", "b"], ask=noul())
    only_a = Check(name="only_a", roles=["a"], ask=noul())
    every = Check(name="every", ask=noul())
    c = concerns(
        factored(
            "x", [("a", "f", True, False), ("b", "g", False, False)], checks=[both, only_a, every]
        ),
        factors=("f", "g"),
    )
    request = verdict.request(TURNS, c, Gathered(0, ("t3",), (("a", "t3"),)))
    assert list(request["questions"]) == ["only_a", "every"]
    assert request["questions"]["every"]["instructions"]["compare"] == ["`a.text`"]


# -- the rules, as tables --------------------------------------------------------------

LOW, HIGH = 0.3, 0.7


def a(value: float) -> Checked:
    return Checked(value)


@pytest.mark.parametrize(
    ("confirm", "cited"),
    [(0.0, None), (0.3, None), (0.31, "review"), (0.69, "review"), (0.7, "holds"), (1.0, "holds")],
)
def test_screened_evidence_is_dropped_at_or_below_low_review_below_high_holds_at_high(
    confirm: float, cited: str | None
) -> None:
    c = concerns(screened())
    d = verdict.decide(c, Gathered(0, ("q1",)), {"confirm:q1": a(confirm)}, LOW, HIGH)
    assert [x.status for x in d.citations] == ([cited] if cited else [])
    assert d.verdict == {None: "fails", "review": "review", "holds": "holds"}[cited]


@pytest.mark.parametrize(
    ("confirms", "expected"),
    [
        ((0.1, 0.2), "fails"),  # no evidence left
        ((0.5, 0.6), "review"),  # evidence, none holds
        ((0.5, 0.9), "holds"),  # at least one citation holds
        ((0.1, 0.9), "holds"),
    ],
)
def test_screened_verdict(confirms: tuple[float, float], expected: str) -> None:
    c = concerns(screened())
    answers = {"confirm:q1": a(confirms[0]), "confirm:q2": a(confirms[1])}
    assert verdict.decide(c, Gathered(0, ("q1", "q2")), answers, LOW, HIGH).verdict == expected


def test_screened_citations_carry_their_confirm_in_source_order() -> None:
    c = concerns(screened())
    answers = {"confirm:q1": a(0.5), "confirm:q2": a(0.2), "confirm:q3": a(0.95)}
    d = verdict.decide(c, Gathered(0, ("q1", "q2", "q3")), answers, LOW, HIGH)
    assert [(x.passage, x.status, x.score) for x in d.citations] == [
        ("q1", "review", 0.5),
        ("q3", "holds", 0.95),
    ]


def _factored(checks: int) -> Any:
    return concerns(
        factored(
            "x",
            [("a", "f", True, False), ("b", "f", True, False)],
            checks=[Check(name=f"c{i}", ask=noul()) for i in range(checks)],
        ),
        factors=("f",),
    )


def test_every_passage_filling_a_role_is_cited_as_holds_once() -> None:
    g = Gathered(0, ("p1",), (("a", "p1"), ("b", "p1")))
    d = verdict.decide(_factored(0), g, {}, LOW, HIGH)
    assert [(x.passage, x.status, x.roles) for x in d.citations] == [("p1", "holds", ["a", "b"])]
    assert d.verdict == "holds"  # no checks asked: every asked check holds vacuously


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ((0.9, 0.3), "fails"),  # any check at or below low
        ((0.0, 1.0), "fails"),
        ((0.7, 0.95), "holds"),  # every check at or above high
        ((0.9, 0.69), "review"),
        ((0.31, 0.31), "review"),
    ],
)
def test_factored_verdict(checks: tuple[float, float], expected: str) -> None:
    g = Gathered(0, ("p1", "p2"), (("a", "p1"), ("b", "p2")))
    answers = {"c0": a(checks[0]), "c1": a(checks[1])}
    d = verdict.decide(_factored(2), g, answers, LOW, HIGH)
    assert d.verdict == expected
    assert d.checks == {"c0": Answer(value=checks[0]), "c1": Answer(value=checks[1])}


def test_a_score_check_is_read_over_its_top_level() -> None:
    c = concerns(
        factored("x", [("a", "f", True, False)], checks=[Check(name="s", ask=score(levels=5))]),
        factors=("f",),
    )
    g = Gathered(0, ("p1",), (("a", "p1"),))
    assert verdict.decide(c, g, {"s": a(3.0)}, LOW, HIGH).verdict == "holds"  # 0.75
    assert verdict.decide(c, g, {"s": a(1.0)}, LOW, HIGH).verdict == "fails"  # 0.25
    assert verdict.decide(c, g, {"s": a(2.0)}, LOW, HIGH).verdict == "review"


def test_the_review_band_comes_from_the_options() -> None:
    table = {"confirm:q1": 0.5}
    c = concerns(screened())
    narrow = judge(source("q1"), c, ScriptedClient(answering(table)), {"low": 0.4, "high": 0.5})
    wide = judge(source("q1"), c, ScriptedClient(answering(table)), {"low": 0.5, "high": 0.9})
    assert narrow.findings[0].verdict == "holds"
    assert wide.findings[0].verdict == "fails"


# -- through the shell -------------------------------------------------------------------


def test_findings_whose_passages_pass_a_window_are_asked_alone() -> None:
    c = concerns(screened("a"), screened("b"), screened("never"))
    table = {f"q{i}:never": 0.1 for i in range(1, 5)}
    client = ScriptedClient(answering(table))
    report = judge(source("q1", "q2", "q3", "q4"), c, client, {"window": 2})
    assert [f.concern for f in report.findings] == ["a", "b"]
    round2 = client.requests[2:]
    assert len(round2) == 2 and report.requests == 4
    assert [list(r["questions"]) for r in round2] == [
        ["confirm:q1", "confirm:q2", "confirm:q3", "confirm:q4"]
    ] * 2


def test_round2_starts_only_after_round1_ends() -> None:
    lock = threading.Lock()
    events: list[tuple[str, int]] = []

    def answer(request: Request) -> Reply:
        is_round2 = any(k.startswith("confirm:") for k in request["questions"])
        with lock:
            events.append(("start", 2 if is_round2 else 1))
        if not is_round2 and "p0" in request["state"]["quotes"]:
            time.sleep(0.05)  # the slowest window of round 1
        with lock:
            events.append(("end", 2 if is_round2 else 1))
        return Reply(answers=answering()(request))

    ids = [f"p{i}" for i in range(8)]
    c = concerns(screened("a"), screened("b"))
    judge(source(*ids), c, ScriptedClient(answer), {"window": 2, "concurrency": 8})
    last_round1_end = max(i for i, e in enumerate(events) if e == ("end", 1))
    first_round2_start = min(i for i, e in enumerate(events) if e == ("start", 2))
    assert last_round1_end < first_round2_start
    assert events.count(("start", 2)) == 2
