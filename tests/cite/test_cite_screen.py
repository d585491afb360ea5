"""Round 1: every detect of every passage, windowed, in source order, and halving."""

from __future__ import annotations

from typing import Any

from harness.cite import (
    CiteSource,
    ScreenedConcern,
    ScriptedClient,
    judge,
    screen,
)
from harness.cite.client import Request
from tests.support.cite_builders import answering, concerns, noul, score, screened, source


def round1(client: ScriptedClient) -> list[Request]:
    return [r for r in client.requests if not any(k.startswith("confirm:") for k in r["questions"])]


def test_round1_request_is_the_documents_json() -> None:
    question = "Does {passage} say the customer is thinking of cancelling or switching provider?"
    c = concerns(
        ScreenedConcern(
            name="cancellation_risk",
            detect=noul(question),
            confirm=noul("Does {passage} evidence ..."),
        )
    )
    s = CiteSource.model_validate(
        {
            "as": "turns",
            "passages": [
                {
                    "id": "t14",
                    "speaker": "customer",
                    "text": "if this keeps happening I'm switching",
                },
                {"id": "t15", "speaker": "agent", "text": "Let me check the line from here."},
            ],
        }
    )
    request = screen.request(s, c, screen.Window(0, 2))
    assert request["state"] == {
        "turns": {
            "t14": {
                "id": "t14",
                "speaker": "customer",
                "text": "if this keeps happening I'm switching",
            },
            "t15": {"id": "t15", "speaker": "agent", "text": "Let me check the line from here."},
        }
    }
    assert list(request["questions"]) == ["t14:cancellation_risk", "t15:cancellation_risk"]
    assert request["questions"]["t14:cancellation_risk"] == {
        "type": "noul",
        "instructions": {
            "question": "Does `turns.t14.text` say the customer is thinking of cancelling"
            " or switching provider?",
            "inspect": "`turns.t14.text`",
        },
        "criteria": {"true": {"what": "..."}, "false": {"what": "...", "not_for": "..."}},
    }


def test_round1_asks_every_detect_of_every_passage() -> None:
    c = concerns(screened("a"), screened("b"), filters=("quoted",), factors=("fix",))
    client = ScriptedClient(answering(default=0.1))
    judge(source("q1", "q2", "q3"), c, client, {"window": 10})
    (request,) = round1(client)
    assert list(request["questions"]) == [
        f"{p}:{d}" for p in ("q1", "q2", "q3") for d in ("quoted", "a", "b", "fix")
    ]


def test_window_caps_passages_per_request_in_source_order() -> None:
    ids = [f"p{i}" for i in range(7)]
    client = ScriptedClient(answering(default=0.1))
    judge(source(*ids), concerns(screened()), client, {"window": 3, "concurrency": 1})
    windows = [list(r["state"]["quotes"]) for r in round1(client)]
    assert windows == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]]


def test_window_goes_under_the_sources_as_key_keyed_by_id() -> None:
    client = ScriptedClient(answering(default=0.1))
    judge(source("a1", "a2", as_="turns"), concerns(screened()), client)
    (request,) = round1(client)
    assert list(request["state"]) == ["turns"]
    assert request["state"]["turns"] == {
        "a1": {"id": "a1", "text": "text of a1"},
        "a2": {"id": "a2", "text": "text of a2"},
    }


def test_each_question_inspects_its_passages_text() -> None:
    client = ScriptedClient(answering(default=0.1))
    judge(source("q1", "q2"), concerns(screened()), client)
    (request,) = round1(client)
    for pid in ("q1", "q2"):
        instructions = request["questions"][f"{pid}:supports"]["instructions"]
        assert instructions == {
            "question": f"Does `quotes.{pid}.text` show supports?",
            "inspect": f"`quotes.{pid}.text`",
        }


def test_a_score_above_threshold_is_a_match() -> None:
    table = {"q1:supports": 0.61, "q2:supports": 0.6, "q3:supports": 0.59}
    client = ScriptedClient(answering(table))
    report = judge(source("q1", "q2", "q3"), concerns(screened()), client, {"threshold": 0.6})
    assert report.findings[0].passages == ["q1"]  # equal to the threshold is no match


def test_a_score_type_detect_matches_on_its_level_over_the_top_level() -> None:
    c = concerns(
        ScreenedConcern(
            name="supports",
            detect=score("How well does {passage} fit?", 5),
            confirm=screened().confirm,
        )
    )
    table: dict[str, Any] = {"q1:supports": 3, "q2:supports": 2.5, "q3:supports": 2}
    report = judge(source("q1", "q2", "q3"), c, ScriptedClient(answering(table)))
    assert report.findings[0].passages == ["q1", "q2"]  # 2/4 is not above 0.5
