"""Round 2 conforms to the seed: one request per finding, never merged, never split.

"Round 2: judge — One request per finding." "A round-2 request refused as too large
becomes that finding's error. It is not split." "A finding is one request." A table of
judgments whose findings share passages, span windows, mix kinds or carry descriptors:
in each, the round-2 requests the client receives are exactly the findings' own requests
(`verdict.request`), one each, in finding order, and no option changes that.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cite import (
    Check,
    CiteOptionsError,
    Concerns,
    Descriptor,
    ScriptedClient,
    judge,
    verdict,
)
from harness.cite.client import Request
from harness.cite.gather import Gathered
from tests.support.cite_builders import (
    OMIT,
    answering,
    concerns,
    factored,
    noul,
    score,
    screened,
    source,
)
from tests.support.tried import count

# Round 1: "a" matches q1, q2; "b" matches q2, q3; "c" matches q1..q4; "none" nothing.
DETECTS = {
    **{f"q{i}:a": 0.9 if i in (1, 2) else 0.1 for i in range(1, 5)},
    **{f"q{i}:b": 0.9 if i in (2, 3) else 0.1 for i in range(1, 5)},
    **{f"q{i}:c": 0.9 for i in range(1, 5)},
    **{f"q{i}:none": 0.1 for i in range(1, 5)},
    **{f"q{i}:fx": 0.9 if i in (1, 3) else 0.2 for i in range(1, 5)},
    **{f"q{i}:fy": 0.6 if i == 4 else 0.1 for i in range(1, 5)},
}
SEVERITY = Descriptor(name="severity", ask=score("How severe?"))


def _is_round2(request: Request) -> bool:
    return not all(
        ":" in k and k.split(":")[0] in request_ids(request) for k in request["questions"]
    )


def request_ids(request: Request) -> set[str]:
    ids: set[str] = set()
    for value in request["state"].values():
        if isinstance(value, dict) and "id" in value:
            ids.add(value["id"])
        elif isinstance(value, dict):
            ids.update(value)
    return ids


CASES: dict[str, tuple[Callable[[], Concerns], dict[str, Any], list[tuple[str, tuple[str, ...]]]]]
CASES = {
    "findings sharing passages": (
        lambda: concerns(screened("a"), screened("b"), screened("c"), screened("none")),
        {},
        [("a", ("q1", "q2")), ("b", ("q2", "q3")), ("c", ("q1", "q2", "q3", "q4"))],
    ),
    "findings gathered across windows": (
        lambda: concerns(screened("a"), screened("b"), screened("c")),
        {"window": 1},
        [("a", ("q1", "q2")), ("b", ("q2", "q3")), ("c", ("q1", "q2", "q3", "q4"))],
    ),
    "a window wider than every finding": (
        lambda: concerns(screened("a"), screened("b")),
        {"window": 50},
        [("a", ("q1", "q2")), ("b", ("q2", "q3"))],
    ),
    "findings with descriptors": (
        lambda: concerns(screened("a", [SEVERITY]), screened("b", [SEVERITY])),
        {},
        [("a", ("q1", "q2")), ("b", ("q2", "q3"))],
    ),
    "screened and factored together": (
        lambda: concerns(
            screened("a"),
            factored(
                "f",
                [("x", "fx", True, False), ("y", "fy", False, True)],
                checks=[Check(name="same", ask=noul("Do {x} and {y} agree?"))],
            ),
            screened("b"),
            factors=("fx", "fy"),
        ),
        {},
        [("a", ("q1", "q2")), ("f", ("q1", "q4")), ("b", ("q2", "q3"))],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("concurrency", [1, 4])
def test_each_round2_request_is_exactly_one_findings_request(name: str, concurrency: int) -> None:
    make, options, expected = CASES[name]
    c = make()
    src = source("q1", "q2", "q3", "q4")
    client = ScriptedClient(answering(DETECTS))
    report = judge(src, c, client, {**options, "concurrency": concurrency})
    assert [(f.concern, tuple(f.passages)) for f in report.findings] == expected
    round2 = [r for r in client.requests if _is_round2(r)]
    index = {concern.name: i for i, concern in enumerate(c.concerns)}
    alone = [
        verdict.request(
            src, c, Gathered(index[f.concern], tuple(f.passages), tuple(f.roles.items()))
        )
        for f in report.findings
    ]
    # One request per finding, each exactly the finding's own (nothing of another's).
    assert len(round2) == len(report.findings)
    assert sorted(map(_canonical, round2)) == sorted(map(_canonical, alone))
    for request, finding in zip(alone, report.findings, strict=True):
        assert request_ids(request) == set(finding.passages)
    assert report.requests == len(client.requests)
    assert report.errors == [] and all(f.verdict == "holds" for f in report.findings)


def _canonical(request: Request) -> str:
    return json.dumps(request, sort_keys=True)


def test_round2_too_large_is_each_findings_own_error_sent_once_never_split() -> None:
    c = concerns(screened("a"), screened("b"), screened("c"))
    src = source("q1", "q2", "q3", "q4")

    def too_large(request: Request) -> bool:
        # Any round-2 request of more than two passages: "c" (four) is too large.
        return _is_round2(request) and len(request_ids(request)) > 2

    client = ScriptedClient(answering(DETECTS), too_large=too_large)
    report = judge(src, c, client)
    round2 = [r for r in client.requests if _is_round2(r)]
    assert len(round2) == 3  # one each; the refused one never halved, nothing merged
    a, b, big = report.findings
    assert a.verdict == b.verdict == "holds"
    assert big.verdict is None and big.error is not None
    assert (big.error.kind, big.error.round, big.error.finding, big.error.concern) == (
        "request_too_large",
        2,
        2,
        "c",
    )
    assert big.error.keys == [f"confirm:q{i}" for i in range(1, 5)]
    assert report.errors == [big.error]


def test_a_bad_reply_fails_its_own_finding_only() -> None:
    c = concerns(screened("a"), screened("b"))

    def answer(request: Request) -> dict[str, object]:
        # "b"'s confirm of q3 unanswered; "a" is the same keys' first finding.
        asked = " ".join(q["instructions"]["question"] for q in request["questions"].values())
        table = {**DETECTS, "confirm:q3": OMIT} if "evidence b" in asked else DETECTS
        return answering(table)(request)

    report = judge(source("q1", "q2", "q3", "q4"), c, ScriptedClient(answer))
    a, b = report.findings
    assert a.verdict == "holds" and a.error is None
    assert b.verdict is None and b.error is not None
    assert (b.error.kind, b.error.keys, b.error.concern) == ("missing_answers", ["confirm:q3"], "b")


def test_each_findings_verdict_reads_its_own_request_only() -> None:
    # Same keys (`confirm:q2`) in two findings' requests: each answer reaches its own.
    c = concerns(screened("a"), screened("b"))

    def answer(request: Request) -> dict[str, object]:
        asked = " ".join(q["instructions"]["question"] for q in request["questions"].values())
        confirm = 0.95 if "evidence a" in asked else 0.1
        return answering(DETECTS, by_key=lambda _k: confirm)(request)

    report = judge(source("q1", "q2", "q3", "q4"), c, ScriptedClient(answer))
    assert [(f.concern, f.verdict) for f in report.findings] == [("a", "holds"), ("b", "fails")]


@pytest.mark.parametrize("options", [{"pack": True}, {"pack": False}, {"merge": True}])
def test_no_option_merges_or_splits_findings(options: dict[str, Any]) -> None:
    with pytest.raises(CiteOptionsError, match="unknown option"):
        judge(source("q1"), concerns(screened()), ScriptedClient(answering()), options)


@given(
    # Detect scores of up to four concerns (rows) over up to seven passages (columns).
    scores=st.integers(1, 7).flatmap(
        lambda n: st.lists(
            st.lists(st.floats(0, 1), min_size=n, max_size=n), min_size=1, max_size=4
        )
    ),
    window=st.integers(1, 8),
)
def test_any_scores_give_one_request_per_finding_each_exactly_its_own(
    scores: list[list[float]], window: int
) -> None:
    count("cite round 2: one request per finding")
    names = [f"c{i}" for i in range(len(scores))]
    ids = [f"q{j}" for j in range(len(scores[0]))]
    table = {
        f"{pid}:{n}": row[j]
        for n, row in zip(names, scores, strict=True)
        for j, pid in enumerate(ids)
    }
    c = concerns(*(screened(n) for n in names))
    src = source(*ids)
    client = ScriptedClient(answering(table))
    report = judge(src, c, client, {"window": window})
    gathered = [
        (i, tuple(pid for j, pid in enumerate(ids) if row[j] > 0.5)) for i, row in enumerate(scores)
    ]
    expected = [Gathered(i, found) for i, found in gathered if found]
    assert [(f.concern, tuple(f.passages)) for f in report.findings] == [
        (names[g.concern], g.passages) for g in expected
    ]
    round2 = [r for r in client.requests if _is_round2(r)]
    assert sorted(map(_canonical, round2)) == sorted(
        _canonical(verdict.request(src, c, g)) for g in expected
    )
