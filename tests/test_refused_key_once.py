"""A key the API refuses is found out by one audit request: the others wait for the first
answer and are not sent (with --cite-concurrency 8, eight went out before the first 401
came back). A good key then sends the rest concurrently, as before."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver import Error, serve_with_env
from click.testing import CliRunner
from conftest import FIXTURES

from harness.audit.clients import FirstAlone
from harness.cite.client import Reply, Request
from harness.cite.report import Usage
from harness.cli import cli
from harness.errors import ConfigError

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
