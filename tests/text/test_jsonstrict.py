"""The strict reader on its own: what it reports, where, and what it lets through."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.text.jsonstrict import (
    MAX_DEPTH,
    Issue,
    LiteralFloat,
    describe,
    loads_strict,
    pointer_join,
)


def pointers(text: str, **kwargs: object) -> list[str]:
    return [issue.pointer for issue in loads_strict(text, **kwargs).issues]  # type: ignore[arg-type]


# -- accepted as is ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("{}", {}, id="empty-object"),
        pytest.param("[]", [], id="empty-array"),
        pytest.param('{"a": [1, -0, 2]}', {"a": [1, 0, 2]}, id="integers"),
        pytest.param(' \n{"a": "x"}\n\t ', {"a": "x"}, id="surrounding-whitespace"),
        pytest.param(
            '{"a": "{{[[", "b": "\\"]]"}', {"a": "{{[[", "b": '"]]'}, id="brackets-in-strings"
        ),
        pytest.param('{"a": {"a": 1}}', {"a": {"a": 1}}, id="same-key-different-objects"),
        pytest.param('"just a string"', "just a string", id="top-level-scalar-is-json"),
        pytest.param('{"é": "ü\\u00e9"}', {"é": "üé"}, id="unicode"),
    ],
)
def test_accepts(text: str, value: object) -> None:
    result = loads_strict(text)
    assert result.parsed
    assert result.issues == []
    assert result.value == value


# -- reported, with the pointer ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            '{"a": 1, "a": 2}', [("/a", '"a" at most once', "duplicate key")], id="dup-top"
        ),
        pytest.param(
            '{"o": {"k": 1, "k": 1}}',
            [("/o/k", '"k" at most once', "duplicate key")],
            id="dup-nested",
        ),
        pytest.param(
            '[{"x": 0}, {"a/b": 1, "a/b": 2}]',
            [("/1/a~1b", "at most once", "duplicate key")],
            id="dup-escaped-slash",
        ),
        pytest.param(
            '{"m~n": 1, "m~n": 2}',
            [("/m~0n", "at most once", "duplicate key")],
            id="dup-escaped-tilde",
        ),
        pytest.param(
            '{"": 1, "": 2}', [("/", "at most once", "duplicate key")], id="dup-empty-key"
        ),
        pytest.param('{"a": NaN}', [("/a", "finite JSON number", "NaN")], id="nan"),
        pytest.param("[1, Infinity]", [("/1", "finite JSON number", "Infinity")], id="infinity"),
        pytest.param(
            '{"a": [[-Infinity]]}', [("/a/0/0", "finite JSON number", "-Infinity")], id="neg-inf"
        ),
        pytest.param('{"a": 4.0}', [("/a", "whole number", "4.0")], id="fraction-zero"),
        pytest.param('{"a": 1e0}', [("/a", "whole number", "1e0")], id="exponent"),
        pytest.param('{"a": 1E+2}', [("/a", "whole number", "1E+2")], id="exponent-upper"),
        pytest.param('{"a": -0.5}', [("/a", "whole number", "-0.5")], id="negative-fraction"),
        pytest.param(
            '{"b": 1.5, "a": {"c": NaN, "c": 2}}',
            [("/b", "whole number", "1.5"), ("/a/c", "at most once", "duplicate")],
            id="several",
        ),
    ],
)
def test_reports(text: str, expected: list[tuple[str, str, str]]) -> None:
    result = loads_strict(text)
    assert result.parsed
    got = sorted((i.pointer, i.expected, i.found) for i in result.issues)
    assert len(got) == len(expected), got
    for (pointer, want_expected, want_found), issue in zip(sorted(expected), got, strict=True):
        assert issue[0] == pointer
        assert want_expected in issue[1]
        assert want_found in issue[2]


@pytest.mark.parametrize(
    ("text", "expected", "found"),
    [
        pytest.param("", "a JSON document", "empty text", id="empty"),
        pytest.param(" \n\t", "a JSON document", "only whitespace", id="whitespace"),
        pytest.param("{", "a JSON document", "invalid JSON", id="unclosed"),
        pytest.param("{'a': 1}", "a JSON document", "line 1 column 2", id="single-quotes"),
        pytest.param('{"a": 1,}', "a JSON document", "invalid JSON", id="trailing-comma"),
        pytest.param('{"a": 1} {"b": 2}', "exactly one JSON value", "more data", id="two-values"),
        pytest.param('{"a": 1}\nx', "exactly one JSON value", "line 2 column 1", id="trailing"),
        pytest.param('\ufeff{"a": 1}', "starting with a value", "byte-order mark", id="bom"),
        pytest.param(
            "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
            f"at most {MAX_DEPTH} levels",
            f"nesting {MAX_DEPTH + 1} levels deep",
            id="too-deep",
        ),
    ],
)
def test_unparsed(text: str, expected: str, found: str) -> None:
    result = loads_strict(text)
    assert not result.parsed
    assert result.value is None
    assert [i.pointer for i in result.issues] == [""]
    assert expected in result.issues[0].expected
    assert found in result.issues[0].found


def test_depth_limit_is_inclusive() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads_strict(text).parsed


def test_depth_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"a": "[" * 500 + '\\"' + "{" * 500})
    assert loads_strict(text).issues == []


def test_no_depth_prescan_falls_back_on_the_parser() -> None:
    # Inputs skip the Python pre-scan; the parser's own recursion guard still holds.
    result = loads_strict("[" * 100_000 + "]" * 100_000, max_depth=None)
    assert not result.parsed
    assert "too deep" in result.issues[0].found


def test_fractions_allowed_for_inputs() -> None:
    result = loads_strict('{"ms": 81.5, "x": NaN}', forbid_fractions=False)
    assert [i.pointer for i in result.issues] == ["/x"]
    assert isinstance(result.value["ms"], LiteralFloat)
    assert result.value["ms"] == 81.5


def test_duplicates_not_blamed_on_a_later_object() -> None:
    # The first copy of "a" (an object with its own duplicate) is dropped by the parser;
    # objects parsed later must not inherit its report through a reused id.
    parts = ['{"a": {"x": 1, "x": 2}, "a": 1}'] * 20 + [f'{{"x": {i}}}' for i in range(200)]
    result = loads_strict("[" + ", ".join(parts) + "]")
    assert sorted(i.pointer for i in result.issues) == sorted(f"/{i}/a" for i in range(20))


def test_issue_message_and_dict() -> None:
    issue = Issue("/scores/x", "an integer", "4.0")
    assert issue.message() == "at /scores/x: expected an integer; found 4.0"
    assert Issue("", "a JSON object", "[]").message().startswith("at (top level):")
    assert issue.as_dict() == {
        "pointer": "/scores/x",
        "expected": "an integer",
        "found": "4.0",
        "message": issue.message(),
    }


@pytest.mark.parametrize(
    ("pointer", "token", "joined"),
    [
        ("", "a", "/a"),
        ("/a", 0, "/a/0"),
        ("", "a/b", "/a~1b"),
        ("", "~1", "/~01"),
        ("", "", "/"),
    ],
)
def test_pointer_join(pointer: str, token: str | int, joined: str) -> None:
    assert pointer_join(pointer, token) == joined


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (LiteralFloat("4.0"), "4.0"),
        ([], "an empty array []"),
        ({}, "an empty object {}"),
        ([1, 2], "[1, 2]"),
        (list(range(100)), "an array of 100 item(s)"),
        ({str(i): i for i in range(30)}, "an object of 30 item(s)"),
        ("x" * 100, '"' + "x" * 58 + "…"),
        (True, "true"),
        (None, "null"),
    ],
)
def test_describe(value: object, text: str) -> None:
    assert describe(value) == text


# -- the surrogate pre-check ------------------------------------------------------

_OLD_SURROGATE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "plain ascii"}',
        '{"a": "caf\u00e9 \u4e2d\u6587"}',
        '{"a": "\\u00e9 escaped, not a surrogate"}',
        '{"a": "\\ud83d\\ude00"}',
        '{"a": "\\uD800"}',
        '{"a": "\\udfff tail"}',
        '{"a": "\\\\ud800 an escaped backslash then text"}',
        '{"a": "raw \ud800 lone"}',
        '{"a": "raw \udc00 low, after \u00e9"}',
        '{"a": "pair \ud83d\ude00"}',
        '{"a": "\\u0041\\uE000"}',
    ],
)
def test_surrogate_check_answers_as_the_regex_did(text: str) -> None:
    from harness.text.jsonstrict import _has_surrogate

    assert _has_surrogate(text) is bool(_OLD_SURROGATE.search(text))


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from([*"a\\uD89dDfF0é中", "\ud800", "\udfff"])))
def test_surrogate_check_matches_the_regex_on_any_text(text: str) -> None:
    from harness.text.jsonstrict import _has_surrogate

    assert _has_surrogate(text) is bool(_OLD_SURROGATE.search(text))
