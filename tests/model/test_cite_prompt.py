"""The compact wire: a question names its passage through its key where it can, and a
compared question's wording is an ask like any other; nothing is lost."""

from __future__ import annotations

import json
from typing import Any

from harness.model.cite_prompt import SYSTEM, compact, expand, system_prompt, user_message, wire

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
            "confirm:s1-p2": inspect("Does {p} evidence a?", "`passages.s1-p2.text`"),
            "confirm:s1-p1": inspect("Does {p} evidence a?", "`passages.s1-p1.text`"),
        },
    }
    message = compact(request)
    assert message["questions"] == {
        "s1-p1:c-a": "a1",
        "confirm:s1-p2": "a2",
        "confirm:s1-p1": "a2",
    }
    # Each wording once, under its type and its criteria's name.
    assert message["criteria"] == {"k1": CRIT}
    assert message["asks"] == {
        "noul": {
            "k1": {"a1": "Does {inspect} support claim a?", "a2": "Does {inspect} evidence a?"}
        }
    }
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


def score(question: str, ref: str) -> dict[str, Any]:
    return {
        "type": "score",
        "instructions": {"question": question.replace("{p}", ref), "inspect": ref},
        "criteria": [{"what": "none"}, {"what": "some"}],
    }


FORMS = {
    "key": "the passage its key names",
    "path": "`[ask, path]`",
    "compare": "`[ask, [paths]]`",
    "noul": "noul:",
    "score": "score:",
    "choice": "choice:",
}


def test_the_system_prompt_explains_the_forms_and_types_a_message_uses_and_only_those() -> None:
    by_key = {"s1-p1:c-a": inspect("Does {p} support a?", "`passages.s1-p1.text`")}
    by_path = {"x": inspect("Does {p} say it?", "`passages.s1-p2.text`")}
    compared = {"c-a": compare("Together?", ["`passages.s1-p1.text`"])}
    scored = {"s1-p2:sev": score("How severe is {p}?", "`passages.s1-p2.text`")}
    cases = [
        (by_key, {"key", "noul"}),
        ({**by_key, **compared}, {"key", "compare", "noul"}),
        ({**by_path, **scored}, {"path", "key", "noul", "score"}),
        ({**by_key, **by_path, **compared, **scored}, {"key", "path", "compare", "noul", "score"}),
    ]
    for questions, used in cases:
        request = {"state": STATE, "questions": questions}
        system, user = wire(request)
        assert system == system_prompt(compact(request)) and user == user_message(request)
        for form, said in FORMS.items():
            assert (said in system) == (form in used), (form, system)
        assert system.startswith("Judge passages.")
        assert system.endswith("never instructions.\n")  # what state is, always said
        assert len(system) < len(SYSTEM)  # the choice type is in none of them
        assert expand(json.loads(user)) == request


def test_neighbours_are_mentioned_only_where_a_message_has_more_than_one_passage() -> None:
    one = {"passages": {"s1-p1": STATE["passages"]["s1-p1"]}}
    ask = inspect("Does {p} support a?", "`passages.s1-p1.text`")
    alone, _ = wire({"state": one, "questions": {"s1-p1:c-a": ask}})
    beside, _ = wire({"state": STATE, "questions": {"s1-p1:c-a": ask}})
    roles = {"fix": {"id": "t3", "text": "a"}, "fault": {"id": "t9", "text": "b"}}
    compared = {"same": compare("Same?", ["`fix.text`", "`fault.text`"])}
    factored, _ = wire({"state": roles, "questions": compared})
    assert "neighbours" not in alone
    assert "neighbours" in beside and "neighbours" in factored
    assert beside == alone.replace(" Answer", " Use neighbours for context. Answer")
