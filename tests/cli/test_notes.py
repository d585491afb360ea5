"""Notes say things once, in human time: the run summary's first line does not repeat the
outcome its reason starts with, and the up-to-date note gives a local time to the second."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from harness.cli.summary import headline
from harness.run.uptodate import local_time


@pytest.mark.parametrize(
    ("outcome", "reason", "line"),
    [
        (
            "up-to-date",
            "up to date: judge.json was written by …",
            "judge: up to date: judge.json was written by …",
        ),
        ("interrupted", "interrupted by SIGINT", "judge: interrupted by SIGINT"),
        (
            "fallback",
            "the model never wrote judge.json",
            "judge: fallback: the model never wrote judge.json",
        ),
        (
            "model-written",
            "the model wrote a valid judge.json",
            "judge: model-written: the model wrote a valid judge.json",
        ),
        (
            "kept-previous",
            "kept the previous judge.json",
            "judge: kept-previous: kept the previous judge.json",
        ),
    ],
)
def test_headline_says_the_outcome_once(outcome: str, reason: str, line: str) -> None:
    assert headline(outcome, reason) == line


@pytest.fixture
def paris() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Paris"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.parametrize(
    ("when", "shown"),
    [
        ("2026-12-01T19:15:40.815546+00:00", "2026-12-01 20:15:40 CET"),
        ("2026-07-01T19:15:40.999+00:00", "2026-07-01 21:15:40 CEST"),
        ("2026-12-01T19:15:40", "2026-12-01 20:15:40 CET"),  # no zone: UTC, as run.json writes
        ("not a time", "not a time"),
    ],
)
def test_local_time_to_the_second(paris: None, when: str, shown: str) -> None:
    assert local_time(when) == shown
