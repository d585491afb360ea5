"""Runs in one long-lived process leak no file descriptors and no threads.

The pipeline may call `judge_session` for session after session in one process. With
the garbage collector held off (so nothing is tidied up behind the harness's back),
runs through the real SDK against the loopback API, good and faulty, must end with
the same open descriptors and threads they started with.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.run import judge_session
from tests.support.apiserver import CutStream, Error, FakeAPI, Raw, Reply, Reset, judge_responder

OK = Reply(judge_responder)


def open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def no_gc() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_many_runs_leave_no_descriptor_or_thread_behind(
    small_session: Path, monkeypatch: pytest.MonkeyPatch, no_gc: None
) -> None:
    script = [OK] * 3  # a good run, plain
    script += [OK] * 3  # streamed
    script += [Error(529, "overloaded_error")] * 2  # fallback after a retry
    script += [Reset(), OK, OK, OK]  # a reset, retried
    script += [Raw(b'{"type": "mess')]  # truncated JSON
    script += [CutStream(judge_responder, keep=200)]  # a stream cut mid-event
    with FakeAPI(script, default=None) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary-resources-01")
        # force: every run calls the API (an up-to-date run would make no request).
        options = {"fetch": "stored", "cite": False, "timeout": 2.0, "max_retries": 1}
        options["force"] = True
        judge_session(small_session, **options)  # warm-up: imports, caches
        fds, threads = open_fds(), threading.active_count()
        outcomes = [
            judge_session(small_session, **options, max_output_tokens=32_000).outcome,
            judge_session(small_session, **options).outcome,
            judge_session(small_session, **options).outcome,
            judge_session(small_session, **options).outcome,
            judge_session(small_session, **options, max_output_tokens=32_000).outcome,
        ]
        leaked = open_fds() - fds
        assert threading.active_count() <= threads
    kept = "kept-previous"  # a valid judge.json from an earlier run stays in place
    assert outcomes == ["model-written", kept, "model-written", kept, kept]
    assert api.overruns == 0
    assert not leaked, {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in leaked if _alive(fd)}


def _alive(fd: str) -> bool:
    return os.path.exists(f"/proc/self/fd/{fd}")
