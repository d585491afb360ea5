"""Options validate into a Run, and bad ones fail before any request is sent."""

from __future__ import annotations

import math
from typing import Any

import pytest

from harness.cite import CiteOptions, CiteOptionsError, ScriptedClient, judge
from harness.errors import EXIT_USAGE, UsageError
from tests.support.cite_builders import answering, concerns, screened, source


def test_options_default_to_the_documented_run() -> None:
    client = ScriptedClient(answering())
    report = judge(source("q1"), concerns(screened()), client)
    assert report.requests == 2
    assert CiteOptions() == CiteOptions(concurrency=4, window=10, threshold=0.5, low=0.3, high=0.7)


def test_options_error_is_a_usage_error() -> None:
    assert issubclass(CiteOptionsError, UsageError)
    assert CiteOptionsError("x").exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    "options",
    [
        {"concurrency": 0},
        {"concurrency": -1},
        {"concurrency": 2.0},
        {"concurrency": "4"},
        {"concurrency": True},
        {"window": 0},
        {"window": None},
        {"threshold": -0.01},
        {"threshold": 1.01},
        {"threshold": math.nan},
        {"threshold": True},
        {"threshold": "0.5"},
        {"low": -0.1},
        {"high": 1.5},
        {"low": 0.8, "high": 0.2},
        {"low": 0.5, "high": 0.5},  # no band: confirms and checks would read it oppositely
        {"windw": 3},
    ],
    ids=repr,
)
def test_bad_options_raise_before_any_request(options: dict[str, Any]) -> None:
    client = ScriptedClient(answering())
    with pytest.raises(CiteOptionsError) as info:
        judge(source("q1", "q2"), concerns(screened()), client, options)
    assert client.requests == []
    assert str(info.value)  # says what was wrong


def test_options_that_are_not_a_mapping_are_refused() -> None:
    client = ScriptedClient(answering())
    with pytest.raises(CiteOptionsError):
        judge(source("q1"), concerns(screened()), client, [("window", 2)])  # type: ignore[arg-type]
    assert client.requests == []


def test_options_accept_a_run_or_a_mapping() -> None:
    a = judge(
        source("q1"), concerns(screened()), ScriptedClient(answering()), CiteOptions(window=1)
    )
    b = judge(source("q1"), concerns(screened()), ScriptedClient(answering()), {"window": 1})
    assert a == b


def test_low_equal_to_high_is_refused_with_the_fix() -> None:
    with pytest.raises(CiteOptionsError, match=r"low \(0\.5\) must be below high \(0\.5\)"):
        CiteOptions(low=0.5, high=0.5)
    assert CiteOptions(low=0.49, high=0.5).low == 0.49
