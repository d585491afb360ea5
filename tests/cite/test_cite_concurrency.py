"""Concurrency: bounded in flight, shared limits, and the same report at any setting."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.cite import (
    Check,
    CiteDefinitionError,
    CiteOptionsError,
    CitePool,
    Descriptor,
    ScriptedClient,
    Usage,
    judge,
    judge_each,
    judge_many,
)
from harness.cite.client import Reply, Request
from harness.errors import ModelUnavailable, ReplayError
from tests.support.cite_builders import answering, concerns, factored, noul, score, screened, source


def _h(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _reply(request: Request) -> Reply:
    """Answers that depend on the request only, with some bad replies and several models."""
    keys = list(request["questions"])
    answers: dict[str, object] = {}
    for key, q in request["questions"].items():
        if q["type"] == "score":
            answers[key] = round(_h(key) * (len(q["criteria"]) - 1), 3)
        else:
            answers[key] = round(_h(key), 3)
    first = keys[0]
    if _h("missing" + first) < 0.08:
        answers.pop(first)
    elif _h("bad" + first) < 0.08:
        answers[first] = 2.0
    model = "model-a" if _h("model" + first) < 0.5 else "model-b"
    return Reply(answers=answers, usage=Usage(input_tokens=len(keys), output_tokens=1), model=model)


def _too_large(request: Request) -> bool:
    state = request["state"].get("quotes", {})
    return len(state) > 3 and not any(k.startswith("confirm:") for k in request["questions"])


def _workload() -> tuple[object, object]:
    ids = [f"p{i}" for i in range(40)]
    c = concerns(
        screened("a", descriptors=[Descriptor(name="sev", ask=score())]),
        screened("b"),
        factored(
            "pair",
            [("x", "f", True, False), ("y", "f", True, True), ("z", "g", False, False)],
            checks=[Check(name="same", ask=noul()), Check(name="xz", roles=["x", "z"], ask=noul())],
        ),
        filters=("usable",),
        factors=("f", "g"),
    )
    return source(*ids), c


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_replies_give_the_same_report_at_any_concurrency(seed: int) -> None:
    s, c = _workload()
    reports = []
    for concurrency in (1, 16):
        client = ScriptedClient(_reply, jitter=0.01, seed=seed * concurrency, too_large=_too_large)
        options = {"concurrency": concurrency, "window": 7, "threshold": 0.4}
        reports.append(judge(s, c, client, options))  # type: ignore[arg-type]
    one, many = reports
    assert one.errors and one.findings and len(one.models) == 2  # the workload exercises them
    assert one.model_dump() == many.model_dump()


class _Counting:
    def __init__(self, delay: float = 0.01) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.calls = 0
        self.delay = delay

    def ask(self, request: Request) -> Reply:
        with self.lock:
            self.calls += 1
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(self.delay)
        with self.lock:
            self.now -= 1
        return Reply(answers=answering()(request))


@pytest.mark.parametrize("concurrency", [1, 3, 8])
def test_at_most_concurrency_requests_are_in_flight(concurrency: int) -> None:
    client = _Counting()
    ids = [f"p{i}" for i in range(24)]
    judge(source(*ids), concerns(screened()), client, {"window": 1, "concurrency": concurrency})
    assert client.peak == concurrency


def test_a_shared_pool_keeps_many_judgments_under_one_limit() -> None:
    client = _Counting(0.005)
    ids = [f"p{i}" for i in range(6)]
    results: list[object] = []
    with CitePool(3) as pool:

        def one(n: int) -> None:
            s = source(*[f"c{n}-{i}" for i in ids])
            results.append(pool.judge(s, concerns(screened()), client, {"window": 1}))

        threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(results) == 8
    assert client.peak == 3  # each judgment may use 4, but the pool allows 3 overall


def test_judge_many_returns_reports_in_input_order() -> None:
    items = [
        (source(*[f"c{n}-q{i}" for i in range(n + 1)]), concerns(screened())) for n in range(12)
    ]
    client = ScriptedClient(answering(), jitter=0.005, seed=7)
    reports = judge_many(items, client, {"concurrency": 5, "window": 20})
    assert [len(r.findings[0].passages) for r in reports] == list(range(1, 13))
    assert all(r.requests == 2 for r in reports)


def test_judge_each_gives_judge_manys_reports_one_at_a_time_after_every_reply() -> None:
    items = [
        (source(*[f"c{n}-q{i}" for i in range(n + 1)]), concerns(screened())) for n in range(9)
    ]
    options = {"concurrency": 4, "window": 3}
    expected = judge_many(items, ScriptedClient(answering(), jitter=0.005, seed=2), options)
    client = ScriptedClient(answering(), jitter=0.005, seed=5)
    reports = judge_each(items, client, options)
    asked = len(client.requests)
    assert asked == sum(r.requests for r in expected)  # every request answered on return
    assert not isinstance(reports, list)
    assert [r.model_dump() for r in reports] == [r.model_dump() for r in expected]
    assert len(client.requests) == asked  # building the reports asked nothing more


def test_judge_each_raises_a_fault_when_called_not_when_read() -> None:
    def answer(request: Request) -> Reply:
        raise ReplayError("replay has no recording", keys=list(request["questions"]))

    with pytest.raises(ReplayError):
        judge_each([(source("q1"), concerns(screened()))], ScriptedClient(answer))


def test_a_submitted_batch_runs_while_the_caller_works_and_reads_in_input_order() -> None:
    items = [(source(f"c{n}-q1", f"c{n}-q2"), concerns(screened())) for n in range(6)]
    client = _Counting(0.02)
    with CitePool(3) as pool:
        pending = pool.submit(items, client, {"window": 1})
        deadline = time.monotonic() + 2
        while client.now == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert client.now > 0  # requests go out while the caller has not asked for reports
        reports = list(pending.reports())
    expected = judge_many(items, ScriptedClient(answering()), {"window": 1})
    assert [r.findings for r in reports] == [r.findings for r in expected]
    assert client.peak == 3


def test_cancel_drops_unsent_requests_and_waits_for_those_in_flight() -> None:
    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(100)]
    client = _Counting(0.02)  # the whole batch would take two seconds
    with CitePool(2) as pool:
        pending = pool.submit(items, client)
        time.sleep(0.01)
        pending.cancel()
        assert client.now == 0  # nothing still asking once cancel returns
        with pytest.raises(RuntimeError, match="cancelled"):
            pending.reports()
    assert client.peak == 2 and client.calls < 50


def test_cancel_after_the_last_reply_changes_nothing() -> None:
    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(3)]
    with CitePool(2) as pool:
        pending = pool.submit(items, ScriptedClient(answering()))
        pending.wait()
        pending.cancel()
        assert [len(r.findings) for r in pending.reports()] == [1, 1, 1]


def test_judge_many_under_a_caller_pool() -> None:
    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(4)]
    client = _Counting(0.005)
    with CitePool(2) as pool:
        reports = judge_many(items, client, {"concurrency": 4}, pool=pool)
    assert len(reports) == 4 and client.peak == 2


def test_a_client_fault_is_raised_and_stops_the_other_requests() -> None:
    calls = 0
    lock = threading.Lock()

    def answer(request: Request) -> Reply:
        nonlocal calls
        with lock:
            calls += 1
        if "c3-q1" in request["state"]["quotes"]:
            raise ReplayError("replay has no recording", keys=list(request["questions"]))
        time.sleep(0.01)
        return Reply(answers=answering()(request))

    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(40)]
    with pytest.raises(ReplayError):
        judge_many(items, ScriptedClient(answer), {"concurrency": 2})
    assert calls < 80


def test_an_unavailable_model_is_that_requests_error() -> None:
    def answer(request: Request) -> Reply:
        if "q2" in request["state"]["quotes"]:
            raise ModelUnavailable("overloaded")
        return Reply(answers=answering()(request))

    report = judge(source("q1", "q2"), concerns(screened()), ScriptedClient(answer), {"window": 1})
    (error,) = report.errors
    assert (error.kind, error.window, error.message) == ("unavailable", ["q2"], "overloaded")
    assert report.findings[0].passages == ["q1"]


def test_errors_usage_and_models_keep_window_then_finding_order() -> None:
    def answer(request: Request) -> Reply:
        ids = list(request["state"]["quotes"])
        round2 = any(k.startswith("confirm:") for k in request["questions"])
        model = "second" if round2 else f"first-{ids[0]}"
        table = answering()(request)
        if ids[0] in ("p1", "p3") and not round2:
            table = {}
        return Reply(answers=table, usage=Usage(input_tokens=1), model=model)

    client = ScriptedClient(answer, jitter=0.01, seed=3)
    report = judge(
        source("p0", "p1", "p2", "p3"),
        concerns(screened()),
        client,
        {"window": 1, "concurrency": 4},
    )
    assert [e.window for e in report.errors] == [["p1"], ["p3"]]
    assert report.models == ["first-p0", "first-p1", "first-p2", "first-p3", "second"]
    assert report.usage.input_tokens == 5


def test_an_empty_source_sends_nothing() -> None:
    client = ScriptedClient(answering())
    report = judge(source(), concerns(screened()), client)
    assert client.requests == [] and report.findings == [] and report.requests == 0


def test_a_pool_needs_a_concurrency_of_at_least_one() -> None:
    with pytest.raises(CiteOptionsError):
        CitePool(0)


def test_a_closed_pool_refuses_work_loudly() -> None:
    pool = CitePool(2)
    pool.close()
    pool.close()  # closing twice is harmless
    with pytest.raises(RuntimeError):
        pool.judge(source("q1"), concerns(screened()), ScriptedClient(answering()))


def test_scripted_client_can_forget_requests_on_long_runs() -> None:
    client = ScriptedClient(answering(), keep=False)
    report = judge(source("q1"), concerns(screened()), client)
    assert client.requests == [] and report.requests == 2


def test_the_benchmark_runs_on_a_small_workload() -> None:
    bench = Path(__file__).resolve().parents[2] / "bench" / "bench_cite.py"
    out = subprocess.run(
        [sys.executable, str(bench), "--claims", "5", "--latency", "0.001", "--concurrency", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert "req/claim" in out.stdout and "cpu/wall" in out.stdout


def test_a_streamed_batch_sends_each_judgment_as_it_is_drawn() -> None:
    items = [(source(f"c{n}-q1", f"c{n}-q2"), concerns(screened())) for n in range(6)]
    client = _Counting(0.02)
    seen_in_flight: list[int] = []

    def drawn() -> object:
        for n, item in enumerate(items):
            if n == 3:  # half-way: the first judgments are already being asked
                deadline = time.monotonic() + 2
                while client.calls == 0 and time.monotonic() < deadline:
                    time.sleep(0.001)
                seen_in_flight.append(client.calls)
            yield item

    with CitePool(3) as pool:
        reports = list(pool.stream(drawn(), client, {"window": 1}).reports())  # type: ignore[arg-type]
    expected = judge_many(items, ScriptedClient(answering()), {"window": 1})
    assert seen_in_flight[0] > 0
    assert [r.findings for r in reports] == [r.findings for r in expected]
    assert [r.requests for r in reports] == [r.requests for r in expected]
    assert client.peak == 3


def test_a_streamed_batch_that_cannot_draw_an_item_cancels_what_it_started() -> None:
    client = _Counting(0.02)

    def drawn() -> object:
        for n in range(40):
            if n == 20:
                raise ValueError("no item 20")
            yield source(f"c{n}-q1"), concerns(screened())

    with CitePool(2) as pool, pytest.raises(ValueError, match="no item 20"):
        pool.stream(drawn(), client)  # type: ignore[arg-type]
    assert client.now == 0  # nothing still asking once it raised
    assert client.calls < 40  # what was not sent by then never was


def test_a_streamed_batch_refuses_a_bad_item_with_the_engine_error() -> None:
    client = _Counting(0.001)
    good = (source("q1"), concerns(screened()))
    with CitePool(2) as pool, pytest.raises(CiteDefinitionError, match="invalid source"):
        pool.stream([good, ({"as": "quotes", "passages": [{"id": "a.b"}]}, good[1])], client)
    assert client.now == 0


def test_as_ready_gives_each_report_before_the_later_judgments_end() -> None:
    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(8)]
    client = _Counting(0.03)
    with CitePool(2) as pool:
        pending = pool.submit(items, client)
        ready = pending.as_ready()
        first = next(ready)
        calls_at_first = client.calls
        rest = list(ready)
    expected = judge_many(items, ScriptedClient(answering()))
    assert calls_at_first < 16  # 8 judgments of 2 requests: most not yet asked
    assert [r.findings for r in [first, *rest]] == [r.findings for r in expected]


def test_as_ready_raises_a_fault_and_gives_no_report_after_it() -> None:
    def answer(request: Request) -> Reply:
        if any(k.startswith("c3-") for k in request["questions"]):
            raise ReplayError("replay has no recording", keys=list(request["questions"]))
        time.sleep(0.01)
        return Reply(answers=answering()(request))

    items = [(source(f"c{n}-q1"), concerns(screened())) for n in range(8)]
    got = []
    with CitePool(2) as pool:
        ready = pool.submit(items, ScriptedClient(answer)).as_ready()
        with pytest.raises(ReplayError):
            for report in ready:
                got.append(report)
    assert len(got) <= 3  # judgment 3 faulted: neither it nor any later one is reported
