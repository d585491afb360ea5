"""bench/bench_model_path.py: a small session's model requests, sent again without the run.

The bench keeps the five request bodies a real `judge run` of a small session sent to the
loopback API, then sends them again as N sessions in four ways (the SDK from threads and
on one event loop, the run's model seam, httpx2 with no SDK) and reports the CPU per
session. Checked here: what it keeps is that session's five requests (the audit's two
rounds, the first streamed, then the judge's three turns), and each way of sending them
sends every request again, to the end of each session, and reports a CPU figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import bench_model_path
from tests.support.apiserver import FakeAPI


@pytest.fixture(scope="module")
def bodies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("model-path")
    path = folder / "bodies.json"
    path.write_text(json.dumps(bench_model_path.capture(folder)))
    return path


def test_it_keeps_the_five_requests_a_small_session_sent(bodies: Path) -> None:
    sent = json.loads(bodies.read_text())
    audit = [b for b in sent if "output_config" in b]
    turns = [b for b in sent if "tools" in b]
    assert (len(audit), len(turns)) == (2, 3)
    assert sent[:2] == audit and sent[0].get("stream") is True
    assert all("small-000" in json.dumps(b["messages"]) for b in sent)


@pytest.mark.parametrize("mode", bench_model_path.MODES)
def test_each_way_sends_every_session_whole_and_reports_its_cpu(
    bodies: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[int] = []
    real = FakeAPI.__exit__

    def count(self: FakeAPI, *exc: object) -> None:
        counted.append(len(self.requests))
        real(self, *exc)

    monkeypatch.setattr(FakeAPI, "__exit__", count)
    row = bench_model_path.measure(bodies, mode, 2, 0.0)
    sessions = bench_model_path.AT_LEAST  # 2 at once, sent again until 64 are
    assert row["mode"] == mode and row["in_flight"] == 2 and row["sessions"] == sessions
    assert counted == [5 * (sessions + 1)]  # and the warm-up session
    assert row["cpu_ms_per_session"] > 0
    assert row["cpu_ms_per_request"] == pytest.approx(row["cpu_ms_per_session"] / 5, abs=0.01)
