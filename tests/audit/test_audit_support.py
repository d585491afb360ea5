"""Support through the engine with the scripted client: the mapping, requests, limits, faults."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.audit import AuditError, audit_session
from harness.audit.support import passage_prefixes
from harness.cite import Reply, RequestTooLarge, ScriptedClient, Usage
from harness.clock import Deadline
from harness.errors import ModelUnavailable, ReplayError, UsageError
from harness.model.resolve import Guard
from tests.support.audit_builders import SNAPSHOT, quoted, session

Q1 = "Aspirin is used to reduce fever and pain."
Q2 = "It was first made in 1897."


def client(detect: dict[str, object], confirm: dict[str, object]) -> ScriptedClient:
    """Answer `<pid>:supports` from `detect` and `confirm:<pid>` from `confirm` (by pid).

    A value that is an exception is raised instead; a missing pid is left unanswered.
    """

    def reply(request: dict[str, Any]) -> Reply:
        answers: dict[str, object] = {}
        for key in request["questions"]:
            table, pid = (
                (confirm, key.removeprefix("confirm:"))
                if key.startswith("confirm:")
                else (detect, key.split(":")[0])
            )
            value = table.get(pid)
            if isinstance(value, BaseException):
                raise value
            if value is not None:
                answers[key] = value
        return Reply(answers, Usage(input_tokens=10, output_tokens=2), "scripted-model")

    return ScriptedClient(reply)


# (id, detect answers, confirm answers, claim verdict, quote verdicts, error kind, requests)
MAPPING: list[tuple[str, dict[str, object], dict[str, object], str, list[str], str | None, int]] = [
    ("holds", {"c1-q1": 0.9}, {"c1-q1": 0.9}, "supported", ["holds"], None, 2),
    ("review", {"c1-q1": 0.9}, {"c1-q1": 0.5}, "uncertain", ["review"], None, 2),
    ("fails", {"c1-q1": 0.9}, {"c1-q1": 0.1}, "unsupported", ["dropped"], None, 2),
    ("no-match", {"c1-q1": 0.2}, {}, "unsupported", ["dropped"], None, 1),
    (
        "one-of-two",
        {"c1-q1": 0.9, "c1-q2": 0.1},
        {"c1-q1": 0.95},
        "supported",
        ["holds", "dropped"],
        None,
        2,
    ),
    (
        "both-review",
        {"c1-q1": 0.9, "c1-q2": 0.8},
        {"c1-q1": 0.6, "c1-q2": 0.2},
        "uncertain",
        ["review", "dropped"],
        None,
        2,
    ),
    (
        "round-2-unavailable",
        {"c1-q1": 0.9},
        {"c1-q1": ModelUnavailable("API down")},
        "error",
        ["unchecked"],
        "unavailable",
        2,
    ),
    (
        "round-2-too-large",
        {"c1-q1": 0.9},
        {"c1-q1": RequestTooLarge("big")},
        "error",
        ["unchecked"],
        "request_too_large",
        2,
    ),
    ("round-1-unanswered", {}, {}, "error", ["unchecked"], "missing_answers", 1),
    (
        "round-1-unavailable",
        {"c1-q1": ModelUnavailable("API down")},
        {},
        "error",
        ["unchecked"],
        "unavailable",
        1,
    ),
    ("malformed", {"c1-q1": "yes"}, {}, "error", ["unchecked"], "malformed_answers", 1),
]


@pytest.mark.parametrize(
    ("detect", "confirm", "verdict", "quotes", "error", "requests"),
    [row[1:] for row in MAPPING],
    ids=[row[0] for row in MAPPING],
)
def test_engine_outcome_maps_to_claim_verdict(
    tmp_path: Path,
    detect: dict[str, object],
    confirm: dict[str, object],
    verdict: str,
    quotes: list[str],
    error: str | None,
    requests: int,
) -> None:
    two = len(quotes) == 2
    claims = [quoted("c1", Q1, Q2) if two else quoted("c1", Q1)]
    report = audit_session(
        session(tmp_path, claims), against="quotes", client=client(detect, confirm), model="m"
    )
    (claim,) = report.claims
    assert claim.verdict == verdict
    assert [q.verdict for q in claim.quotes] == quotes
    assert (claim.error.kind if claim.error else None) == error
    assert claim.error is None or claim.error.message
    assert claim.requests == requests == report.totals.requests
    assert getattr(report.totals.verdicts, verdict) == 1
    if verdict in ("supported", "uncertain"):
        assert claim.quotes[0].confirm == confirm["c1-q1"]


def test_claims_without_quotes_are_unsupported_without_a_request(tmp_path: Path) -> None:
    fake = client({}, {})
    claims = [quoted("c1"), quoted("c2", "  ")]
    report = audit_session(session(tmp_path, claims), against="quotes", client=fake)
    assert [c.verdict for c in report.claims] == ["unsupported", "unsupported"]
    assert [p.check for c in report.claims for p in c.problems] == ["no_quote", "no_quote"]
    assert fake.requests == [] and report.totals.requests == 0


def test_offline_needs_no_client_and_leaves_support_unchecked(tmp_path: Path) -> None:
    report = audit_session(session(tmp_path, [quoted("c1", Q1), quoted("c2")]), offline=True)
    assert [c.verdict for c in report.claims] == ["unchecked", "unsupported"]
    assert report.offline and report.offlineReason and report.model is None
    assert report.claims[0].quotes[0].verdict == "unchecked"
    with pytest.raises(UsageError):
        audit_session(session(tmp_path / "b", [quoted("c1", Q1)]))  # online without a client


def test_each_passage_carries_its_quote_and_claim(tmp_path: Path) -> None:
    fake = client({"c1-q1": 0.9}, {"c1-q1": 0.9})
    audit_session(
        session(tmp_path, [quoted("c1", Q1, text="Aspirin lowers fever.")]),
        against="quotes",
        client=fake,
    )
    first, second = fake.requests
    # Not the quote's source id: support is judged between quote and claim (fewer tokens).
    passage = {"id": "c1-q1", "text": Q1, "claim": "Aspirin lowers fever."}
    assert first["state"] == {"quotes": {"c1-q1": passage}}
    assert list(first["questions"]) == ["c1-q1:supports"]
    question = first["questions"]["c1-q1:supports"]
    assert question["type"] == "noul"
    assert question["instructions"]["inspect"] == "`quotes.c1-q1.text`"
    assert "its passage's `claim`" in question["instructions"]["question"]
    assert list(second["questions"]) == ["confirm:c1-q1"]


def test_usage_and_models_are_summed_over_claims(tmp_path: Path) -> None:
    fake = client({"c1-q1": 0.9, "c2-q1": 0.1}, {"c1-q1": 0.9})
    report = audit_session(
        session(tmp_path, [quoted("c1", Q1), quoted("c2", Q1)]), against="quotes", client=fake
    )
    assert report.totals.requests == 3
    assert report.usage == Usage(input_tokens=30, output_tokens=6)
    assert report.models == ["scripted-model"]


@pytest.mark.parametrize(
    ("ids", "prefixes"),
    [
        (["sq1-c1", "sq1-c2"], ["sq1-c1", "sq1-c2"]),
        (["sq1-c1", "sq1-c1", "sq1-c1"], ["sq1-c1", "sq1-c1~2", "sq1-c1~3"]),
        (["a.b", "a:b", "a b`c"], ["a_b", "a_b~2", "a_b_c"]),
    ],
)
def test_passage_prefixes_are_safe_and_unique(ids: list[str], prefixes: list[str]) -> None:
    assert passage_prefixes(ids) == prefixes


def test_duplicate_claim_ids_are_judged_apart(tmp_path: Path) -> None:
    fake = client({"c1-q1": 0.9, "c1~2-q1": 0.1}, {"c1-q1": 0.9})
    report = audit_session(
        session(tmp_path, [quoted("c1", Q1), quoted("c1", Q2)]), against="quotes", client=fake
    )
    assert [c.verdict for c in report.claims] == ["supported", "unsupported"]
    assert [c.quotes[0].passage for c in report.claims] == ["c1-q1", "c1~2-q1"]


def test_one_global_limit_across_all_claims(tmp_path: Path) -> None:
    lock = threading.Lock()
    inflight = peak = 0

    def reply(request: dict[str, Any]) -> Reply:
        nonlocal inflight, peak
        with lock:
            inflight += 1
            peak = max(peak, inflight)
        time.sleep(0.01)
        with lock:
            inflight -= 1
        return Reply({k: 0.9 for k in request["questions"]})

    claims = [quoted(f"c{i}", Q1, Q2) for i in range(40)]
    report = audit_session(
        session(tmp_path, claims), against="quotes", client=ScriptedClient(reply), concurrency=3
    )
    assert peak == 3  # used, never exceeded
    assert report.concurrency == 3
    assert report.totals.verdicts.supported == 40 and report.totals.requests == 80


def test_a_dead_api_fails_fast_through_the_guard(tmp_path: Path) -> None:
    calls = 0

    def down(request: dict[str, Any]) -> Reply:
        nonlocal calls
        calls += 1
        raise ModelUnavailable("503 from the API")

    claims = [quoted(f"c{i}", Q1) for i in range(50)]
    report = audit_session(
        session(tmp_path, claims), against="quotes", client=ScriptedClient(down), concurrency=2
    )
    assert report.totals.verdicts.error == 50
    assert calls < 12  # the guard trips after 8 in a row, give or take the ones in flight
    assert all(c.error and c.error.kind == "unavailable" for c in report.claims)


def test_guard_refuses_after_its_deadline() -> None:
    guard = Guard(ScriptedClient({}), deadline=Deadline(time.monotonic() - 1))
    with pytest.raises(ModelUnavailable, match="time limit"):
        guard.ask({"state": {}, "questions": {}})


@pytest.mark.parametrize(
    ("fault", "raised"),
    [
        (ReplayError("replay has no recording"), ReplayError),
        (RuntimeError("401 invalid x-api-key"), AuditError),
    ],
)
def test_faults_the_engine_does_not_absorb_are_raised(
    tmp_path: Path, fault: Exception, raised: type[Exception]
) -> None:
    def broken(request: dict[str, Any]) -> Reply:
        raise fault

    with pytest.raises(raised) as info:
        audit_session(
            session(tmp_path, [quoted("c1", Q1)]), against="quotes", client=ScriptedClient(broken)
        )
    assert str(fault) in str(info.value)


def test_snapshot_and_support_together(tmp_path: Path) -> None:
    fabricated = "Aspirin was invented on the moon."
    report = audit_session(
        session(tmp_path, [quoted("c1", fabricated)]),
        against="quotes",
        client=client({"c1-q1": 0.8}, {"c1-q1": 0.9}),
    )
    (claim,) = report.claims
    # The model may be fooled by the quote's wording; the check still says it is not there.
    assert claim.verdict == "supported"
    assert [p.check for p in claim.problems] == ["quote_not_in_source"]
    assert fabricated not in SNAPSHOT


def test_the_audit_benchmark_runs_on_a_small_workload() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "bench_audit.py"
    args = ["--claims", "5", "--latency", "0.001", "--concurrency", "2", "--runs", "1"]
    out = subprocess.run(
        [sys.executable, str(bench), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "sessions_fixture/large (--against quotes): 320 claims" in out.stdout
    assert "synthetic (5 claims) (--against quotes)" in out.stdout and "cpu/wall" in out.stdout
