"""The compact wire: a question names its passage through its key where it can, and a
compared question's wording is an ask like any other; nothing is lost."""

from __future__ import annotations

import json
from typing import Any

from harness.model.cite_prompt import SYSTEM, compact, expand, user_message

CRIT = {"true": {"what": "yes"}, "false": {"what": "no", "not_for": "maybe"}}


def inspect(question: str, ref: str) -> dict[str, Any]:
    return {
        "type": "noul",
        "instructions": {"question": question.replace("{p}", ref), "inspect": ref},
        "criteria": CRIT,
    }


def compare(question: str, refs: list[str]) -> dict[str, Any]:
    return {
        "type": "noul",
        "instructions": {"question": question, "compare": refs},
        "criteria": CRIT,
    }


STATE = {"passages": {"s1-p1": {"id": "s1-p1", "text": "a"}, "s1-p2": {"id": "s1-p2", "text": "b"}}}


def test_a_question_about_the_passage_its_key_names_is_just_its_ask() -> None:
    request = {
        "state": STATE,
        "questions": {
            "s1-p1:c-a": inspect("Does {p} support claim a?", "`passages.s1-p1.text`"),
            "c-a:confirm:s1-p2": inspect("Does {p} evidence a?", "`passages.s1-p2.text`"),
            "confirm:s1-p1": inspect("Does {p} evidence a?", "`passages.s1-p1.text`"),
        },
    }
    message = compact(request)
    assert message["questions"] == {
        "s1-p1:c-a": "a1",
        "c-a:confirm:s1-p2": "a2",
        "confirm:s1-p1": "a2",
    }
    assert message["asks"]["a2"]["question"] == "Does {inspect} evidence a?"
    assert expand(json.loads(user_message(request))) == request


def test_a_path_the_key_does_not_give_stays_written_out() -> None:
    request = {
        "state": STATE,
        "questions": {
            # The key names another passage than the one asked about.
            "s1-p1:x": inspect("Does {p} say it?", "`passages.s1-p2.text`"),
            # The key names two passages: which one is meant is not for the model to guess.
            "s1-p1:s1-p2": inspect("Does {p} say it?", "`passages.s1-p1.text`"),
            # Another field than the text.
            "s1-p2:y": inspect("Is {p} a quote?", "`passages.s1-p2.speaker`"),
        },
    }
    message = compact(request)
    assert message["questions"] == {
        "s1-p1:x": ["a1", "passages.s1-p2.text"],
        "s1-p1:s1-p2": ["a1", "passages.s1-p1.text"],
        "s1-p2:y": ["a2", "passages.s1-p2.speaker"],
    }
    assert expand(json.loads(user_message(request))) == request


def test_compared_questions_share_their_wording() -> None:
    together = "Taken together, do the compared passages support the claim this key names?"
    request = {
        "state": STATE,
        "questions": {
            "c-a:c-a": compare(together, ["`passages.s1-p1.text`"]),
            "c-b:c-b": compare(together, ["`passages.s1-p1.text`", "`passages.s1-p2.text`"]),
        },
    }
    message = compact(request)
    assert message["questions"] == {
        "c-a:c-a": ["a1", ["passages.s1-p1.text"]],
        "c-b:c-b": ["a1", ["passages.s1-p1.text", "passages.s1-p2.text"]],
    }
    assert user_message(request).count(together) == 1
    assert expand(json.loads(user_message(request))) == request


def test_the_system_prompt_explains_each_form() -> None:
    for form in ("value `ask`", "`[ask, path]`", "`[ask, [paths]]`", "the passage its key names"):
        assert form in SYSTEM
