"""Turning a defined question into a request question, and reading an answer back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.cite.concerns import Choice, Noul, Score
from harness.cite.replies import Checked


def fill(text: str, subs: Mapping[str, str]) -> str:
    """Replace the known `{name}` placeholders; leave every other brace as written."""
    if "{" not in text:
        return text
    for name, value in subs.items():
        text = text.replace("{" + name + "}", value)
    return text


def inspect(question: Noul | Score | Choice, ref: str) -> dict[str, Any]:
    """A question about one passage, named by `ref` (`` `quotes.q1.text` ``)."""
    return {
        "type": question.type,
        "instructions": {"question": fill(question.question, {"passage": ref}), "inspect": ref},
        "criteria": question.criteria_json(),
    }


def compare(
    question: Noul | Score | Choice, refs: list[str], subs: Mapping[str, str]
) -> dict[str, Any]:
    """A question reading several passages side by side."""
    return {
        "type": question.type,
        "instructions": {"question": fill(question.question, subs), "compare": refs},
        "criteria": question.criteria_json(),
    }


def probability(question: Noul | Score, answer: Checked) -> float:
    """A checked answer as a probability: a score's level over its top level."""
    value = answer.value
    if not isinstance(value, float):  # the reply check admits only numbers for these types
        raise TypeError(f"{question.type} answer is not a number: {value!r}")
    if isinstance(question, Score):
        return value / question.top
    return value
