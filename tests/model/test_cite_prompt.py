"""The compact wire: a question names its passage through its key where it can, and a
compared question's wording is an ask like any other; nothing is lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.model.cite_prompt import (
    SYSTEM,
    compact,
    expand,
    field_name,
    system_prompt,
    user_message,
    wire,
)

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
    # A criterion that is only its `what` is that text.
    assert message["criteria"] == {"k1": {"true": "yes", "false": CRIT["false"]}}
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
    for form in (
        "value `ask`",
        "`[ask, path]`",
        "`[ask, [paths]]`",
        "the passage its key names",
        "`*` stands for each passage",
    ):
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


SIX = {"passages": {f"s1-p{i}": {"id": f"s1-p{i}", "text": "t"} for i in range(1, 7)}}


def test_a_question_asked_alike_of_every_passage_is_written_once_with_a_star() -> None:
    detect = "Does {p} support claim a?"
    together = "Taken together, do the compared passages support the claim?"
    every = [f"`passages.{pid}.text`" for pid in SIX["passages"]]
    questions = {}
    for pid in SIX["passages"]:
        questions[f"{pid}:c-a"] = inspect(detect, f"`passages.{pid}.text`")
        questions[f"confirm:{pid}"] = inspect("Does {p} evidence a?", f"`passages.{pid}.text`")
    questions["s1-p1:c-b"] = inspect("Does {p} support claim b?", "`passages.s1-p1.text`")
    questions["c-a"] = compare(together, every)
    questions["c-b"] = compare(together, every[:2])  # not all of them: written out
    request = {"state": SIX, "questions": questions}
    message = compact(request)
    assert message["questions"] == {
        "s1-p1:c-b": "a3",  # c-b is not asked of the others: its question stays
        "c-a": ["a4", ["passages.*.text"]],
        "c-b": ["a4", ["passages.s1-p1.text", "passages.s1-p2.text"]],
        "*:c-a": "a1",
        "confirm:*": "a2",
    }
    system, user = wire(request)
    assert "`*` stands for each passage" in system
    assert expand(json.loads(user)) == request
    assert user == user_message(json.loads(json.dumps(request)))  # the same every time


NO_STAR = {
    # Two passages asked alike save fewer characters than the sentence explaining `*`.
    "two passages": STATE,
    "a passage named *": {"passages": {**SIX["passages"], "*": {"id": "*", "text": "a"}}},
    "one passage": {"passages": {"s1-p1": STATE["passages"]["s1-p1"]}},
}


@pytest.mark.parametrize("state", NO_STAR.values(), ids=NO_STAR.keys())
def test_no_star_where_it_saves_nothing_a_passage_is_named_star_or_there_is_one(
    state: dict[str, Any],
) -> None:
    questions = {
        f"{pid}:c-a": inspect("Does {p} say a?", f"`passages.{pid}.text`")
        for pid in state["passages"]
    }
    request = {"state": state, "questions": questions}
    system, user = wire(request)
    assert json.loads(user)["questions"] == dict.fromkeys(questions, "a1")
    assert "`*`" not in system
    assert expand(json.loads(user)) == request


def test_a_passage_of_text_alone_is_written_as_its_text() -> None:
    ask = {"s1-p1:c-a": inspect("Does {p} say a?", "`passages.s1-p1.text`")}
    request = {"state": STATE, "questions": ask}
    assert json.loads(user_message(request))["state"] == {"passages": {"s1-p1": "a", "s1-p2": "b"}}
    assert expand(json.loads(user_message(request))) == request
    # Another field, a passage named `id`, or a factored state's roles keep their form.
    claimed = {"quotes": {"q1": {"id": "q1", "text": "a", "claim": "c"}}}
    named_id = {"passages": {"id": {"id": "id", "text": "a"}}}
    roles = {"fix": {"id": "t3", "text": "a"}, "fault": {"id": "t9", "text": "b"}}
    for state in (claimed, named_id, roles):
        request = {"state": state, "questions": {"x": compare("Same?", ["`fix.text`"])}}
        sent = json.loads(user_message(request))["state"]
        assert all(isinstance(v, dict) for v in sent.values())
        assert expand(json.loads(user_message(request))) == request


def test_the_answer_field_rule_is_the_one_the_system_prompt_states() -> None:
    # The prompt's example of a key and its field is what field_name does to that key.
    assert "`a:b` in field `a_b`" in SYSTEM and field_name("a:b") == "a_b"
    assert field_name("confirm:s1-p1") == "confirm_s1-p1" and field_name("c-a") == "c-a"
    ask = inspect("Does {p} support a?", "`passages.s1-p1.text`")
    request = {"state": STATE, "questions": {"s1-p1:c-a": ask}}
    plain, _ = wire(request)
    told, _ = wire(request, described=True)
    assert "description" not in plain
    assert told.replace(", or in the field whose description names it", "") == plain
