"""A request refused as too large: halved in round 1, the finding's error in round 2."""

from __future__ import annotations

from harness.cite import ScriptedClient, judge
from harness.cite.client import Request
from tests.support.cite_builders import answering, concerns, screened, source

IDS = [f"p{i}" for i in range(6)]


def passages(request: Request) -> list[str]:
    return list(request["state"]["quotes"])


def is_round1(request: Request) -> bool:
    return not any(k.startswith("confirm:") for k in request["questions"])


def over(cap: int, big: frozenset[str] = frozenset()) -> object:
    def too_large(request: Request) -> bool:
        ids = passages(request)
        return is_round1(request) and (len(ids) > cap or bool(big & set(ids)))

    return too_large


def test_request_too_large_is_halved_and_both_halves_sent() -> None:
    client = ScriptedClient(answering(), too_large=over(3))  # type: ignore[arg-type]
    report = judge(source(*IDS), concerns(screened()), client, {"window": 6, "concurrency": 1})
    sent = [passages(r) for r in client.requests if is_round1(r)]
    assert sent[0] == IDS
    assert sorted(sent[1:]) == [["p0", "p1", "p2"], ["p3", "p4", "p5"]]
    assert report.errors == []
    assert report.findings[0].passages == IDS
    assert report.requests == 3 + 1


def test_halving_recurses_until_the_halves_fit() -> None:
    client = ScriptedClient(answering(), too_large=over(1))  # type: ignore[arg-type]
    report = judge(source(*IDS[:4]), concerns(screened()), client, {"window": 4})
    lone = sorted(passages(r) for r in client.requests if is_round1(r) and len(passages(r)) == 1)
    assert lone == [["p0"], ["p1"], ["p2"], ["p3"]]
    assert report.errors == [] and report.findings[0].passages == IDS[:4]


def test_only_a_lone_passage_over_the_cap_becomes_an_error() -> None:
    client = ScriptedClient(answering(), too_large=over(99, frozenset({"p2"})))  # type: ignore[arg-type]
    report = judge(source(*IDS[:4]), concerns(screened()), client, {"window": 4})
    (error,) = report.errors
    assert (error.kind, error.round, error.window, error.keys) == (
        "request_too_large",
        1,
        ["p2"],
        ["p2:supports"],
    )
    # The rest of its window is still screened, and p2 (no scores) is set aside.
    assert report.findings[0].passages == ["p0", "p1", "p3"]
    assert report.set_aside == ["p2"]


def test_round2_too_large_becomes_the_findings_error_and_is_never_split() -> None:
    def too_large(request: Request) -> bool:
        return not is_round1(request)

    client = ScriptedClient(answering(), too_large=too_large)
    report = judge(source(*IDS[:3]), concerns(screened()), client)
    round2 = [r for r in client.requests if not is_round1(r)]
    assert len(round2) == 1  # sent once, never halved
    (finding,) = report.findings
    assert finding.verdict is None and finding.citations == []
    assert finding.error is not None and finding.error.kind == "request_too_large"
    assert finding.error.finding == 0 and finding.error.concern == "supports"
    assert finding.error.keys == ["confirm:p0", "confirm:p1", "confirm:p2"]
    assert report.errors == [finding.error]
