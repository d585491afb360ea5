"""A key the API refuses is found out by one audit request: the others wait for the first
answer and are not sent (with --cite-concurrency 8, eight went out before the first 401
came back). A good key then sends the rest concurrently, as before; and since the first
is sent streamed, they go as soon as its status and headers are in (the key accepted),
not a whole answer later. A first stream that breaks once accepted is an unavailable
request, never a fault of the run."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cite.client import Reply, Request
from harness.cli import cli
from harness.errors import ConfigError
from harness.model.resolve import FirstAlone
from harness.usage import Usage
from tests.support.apiserver import (
    CutStream,
    Drip,
    Error,
    Raw,
    Routed,
    is_audit,
    serve_with_env,
)
from tests.support.apiserver import Reply as Answer
from tests.support.batch_helpers import responder
from tests.support.paths import FIXTURES
from tests.support.waits import HANG, WITHIN

KEY = "sk-ant-refused-once"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


@pytest.mark.parametrize("command", ["run", "cite"])
@pytest.mark.parametrize("status", [401, 403])
def test_one_request_finds_out_a_refused_key(
    api: Any, tmp_path: Path, command: str, status: int
) -> None:
    kind = "authentication_error" if status == 401 else "permission_error"
    server = api([], default=Error(status, kind, "invalid x-api-key"), latency=0.2)
    folder = tmp_path / "large"
    shutil.copytree(FIXTURES / "large", folder)
    args = [command, str(folder)]
    args += (
        ["--fetch", "off", "--max-retries", "0", "--cite-concurrency", "8"]
        if command == "run"
        else []
    )
    args += ["--concurrency", "8"] if command == "cite" else []
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"HTTP {status}" in result.stderr
    assert len(server.requests) == 1  # was 8: every request in flight before the answer
    assert "output_config" in server.requests[0].body


class _Client:
    """Answers after `delay`; records when each request started and ended."""

    def __init__(self, delay: float, refuse: bool = False) -> None:
        self.delay, self.refuse = delay, refuse
        self.spans: list[tuple[float, float]] = []
        self.lock = threading.Lock()

    def ask(self, request: Request) -> Reply:
        start = time.monotonic()
        time.sleep(self.delay)
        with self.lock:
            self.spans.append((start, time.monotonic()))
        if self.refuse:
            raise ConfigError("the API refused the credentials of the citation audit")
        return Reply(answers={}, usage=Usage(), model="m")


def _ask_from_threads(client: FirstAlone, n: int) -> list[BaseException | Reply]:
    out: list[BaseException | Reply] = []

    def one() -> None:
        try:
            out.append(client.ask({"questions": {}}))  # type: ignore[typeddict-item]
        except BaseException as exc:
            out.append(exc)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return out


def test_a_good_key_sends_the_rest_concurrently_after_the_first() -> None:
    inner = _Client(0.2)
    results = _ask_from_threads(FirstAlone(inner), 6)
    assert all(isinstance(r, Reply) for r in results)
    spans = sorted(inner.spans)
    first_end = spans[0][1]
    assert all(start >= first_end for start, _ in spans[1:])  # after the first answer
    assert max(s for s, _ in spans[1:]) - min(s for s, _ in spans[1:]) < 0.15  # together


def test_a_refusal_is_raised_to_the_waiting_requests_unsent() -> None:
    inner = _Client(0.1, refuse=True)
    results = _ask_from_threads(FirstAlone(inner), 5)
    assert len(inner.spans) == 1
    assert len(results) == 5
    assert all(isinstance(r, ConfigError) and "refused" in str(r) for r in results)


def test_a_batch_finds_out_a_refused_key_with_one_audit_request(api: Any, tmp_path: Path) -> None:
    server = api([], default=Error(401, "authentication_error", "invalid x-api-key"), latency=0.2)
    root = tmp_path / "root"
    for name in ("large", "clean", "shared-source"):
        shutil.copytree(FIXTURES / name, root / name)
    args = ["batch", str(root), "--fetch", "off", "--max-retries", "0", "--cite-requests", "16"]
    result = CliRunner().invoke(cli, args)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 1 and len(lines) == 3  # every session says why it has none
    assert all("refused the credentials" in line["note"] for line in lines)
    audit = [r for r in server.requests if "output_config" in r.body]
    assert len(audit) == 1  # was up to --cite-requests: every request in flight at once


class _Accepting(_Client):
    """A client that tells when the API accepted its request (as `AnthropicCiteClient`
    does for a streamed one): accepted `accept` seconds in, answered `delay` in."""

    tells_accepted = True

    def __init__(self, delay: float, accept: float, refuse: bool = False) -> None:
        super().__init__(delay, refuse)
        self.accept = accept
        self.with_accepted = 0  # requests sent with an `accepted` to call

    def ask(self, request: Request, accepted: Any = None) -> Reply:
        start = time.monotonic()
        time.sleep(self.accept)
        if self.refuse:  # refused before any acceptance, as a 401 is
            with self.lock:
                self.spans.append((start, time.monotonic()))
            raise ConfigError("the API refused the credentials of the citation audit")
        if accepted is not None:
            with self.lock:
                self.with_accepted += 1
            accepted()
        time.sleep(self.delay - self.accept)
        with self.lock:
            self.spans.append((start, time.monotonic()))
        return Reply(answers={}, usage=Usage(), model="m")


def test_a_client_that_tells_acceptance_lets_the_rest_go_before_the_first_answer() -> None:
    inner = _Accepting(0.6, accept=0.05)
    results = _ask_from_threads(FirstAlone(inner), 6)
    assert all(isinstance(r, Reply) for r in results)
    assert inner.with_accepted == 1  # only the first is sent so
    spans = sorted(inner.spans)
    first_start, first_end = spans[0]
    rest = [start for start, _ in spans[1:]]
    assert all(start >= first_start + 0.05 for start in rest)  # not before the acceptance
    assert all(start < first_end - 0.3 for start in rest)  # long before the first answer


def test_a_refusal_before_acceptance_is_raised_to_the_waiting_requests_unsent() -> None:
    inner = _Accepting(0.3, accept=0.1, refuse=True)
    results = _ask_from_threads(FirstAlone(inner), 5)
    assert len(inner.spans) == 1
    assert all(isinstance(r, ConfigError) and "refused" in str(r) for r in results)


def _first_streamed(then: Any) -> Routed:
    """`then` for a streamed audit request; every other request answered in full (each
    audit question given a valid answer)."""
    return Routed(lambda r: is_audit(r) and r.get("stream") is True, then, Answer(responder))


def _run_large(tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    folder = tmp_path / "large"
    shutil.copytree(FIXTURES / "large", folder)
    args = ["run", str(folder), "--fetch", "off", "--max-retries", "0"]
    result = CliRunner().invoke(cli, [*args, "--cite-concurrency", "8"])
    record = json.loads((folder / ".judge" / "run.json").read_text())
    return result, record["citations"]


@pytest.mark.timeout(2 * WITHIN)
def test_the_audits_first_request_is_streamed_and_the_rest_go_at_its_headers(
    api: Any, tmp_path: Path
) -> None:
    # The first answer is held (its headers sent, pings dripping) until seven more audit
    # requests have arrived, for at most HANG s: had the others waited for the whole first
    # answer, the run could not end within WITHIN. Timed by events, not by the clock, so a
    # loaded machine cannot fail it (it once asked for seven within 0.8 s).
    holder: list[Any] = []

    def seven_more() -> bool:
        return sum("output_config" in r.body for r in holder[0].requests) >= 8

    server = api([], default=_first_streamed(Drip(responder, HANG, 0.05, until=seven_more)))
    holder.append(server)
    started = time.monotonic()
    result, audit_record = _run_large(tmp_path)
    assert time.monotonic() - started < WITHIN
    assert result.exit_code == 0, result.output
    audit = [r for r in server.requests if "output_config" in r.body]
    streamed = [r for r in audit if r.body.get("stream") is True]
    assert len(audit) > 8 and streamed == audit[:1]  # the first alone, through the real SDK
    assert audit_record["requests"] == len(audit)
    assert audit_record["verdicts"]["error"] == 0  # the streamed answer was read as any other


@pytest.mark.parametrize(
    "broken",
    [
        CutStream(responder, keep=60),
        Raw(
            b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
            b'"message": "Overloaded"}}\n\n',
            content_type="text/event-stream",
        ),
    ],
    ids=["cut", "error-event"],
)
def test_a_first_audit_stream_that_breaks_once_accepted_is_an_unavailable_request(
    api: Any, tmp_path: Path, broken: Any
) -> None:
    server = api([], default=_first_streamed(broken))
    result, audit_record = _run_large(tmp_path)
    assert result.exit_code == 0, result.output  # the run goes on: not a fault of ours
    assert audit_record["failure"] is None and audit_record["apiFault"] is None
    audit = [r for r in server.requests if "output_config" in r.body]
    assert len(audit) > 8  # the key was accepted: the others went
    verdicts = audit_record["verdicts"]
    # Only the claims of the broken request have no verdict; every other claim has one.
    assert 0 < verdicts["error"] < audit_record["claims"] - verdicts["unchecked"]
