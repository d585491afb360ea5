"""#31 §3: every wait of a batch is bounded by the batch's time limit.

Reading a Message Batch's results (a file dripped a few bytes at a time, one line of many
megabytes), loading a slow snapshot, and two `--batch-api` batches of different `--shard`
N on one ROOT (which waited on each other's sessions until both failed). A wait is shown
ended by what the run says and counts (the limit named, fewer results read than sent);
where only a wall-clock bound can show it, the unbounded wait is many times that bound, so
that no load on the machine reaches it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.batch.shard import Shard, held, one_count
from harness.clock import Deadline
from harness.errors import Halted, UsageError
from harness.model.batches import TOO_LARGE, MessageBatches, result_items
from tests.support.batch_helpers import run_batch_api, sessions_under, use_batch_api
from tests.support.batchapiserver import BatchAPI
from tests.support.waits import HANG, WITHIN

KEY = "sk-ant-canary-batch-waits-0001"
# A wait that ignored its bound would hang for HANG seconds; a bounded one ends within
# WITHIN on any machine, loaded or not (its bound is a second or so).


# -- the results file ---------------------------------------------------------------------


def test_a_dripped_results_file_is_read_only_until_the_batch_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    # 8 bytes every 0.3 s: the audit's results file alone (~1.5 KB) would take a minute.
    with BatchAPI(drip=(8, 0.3)) as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root, "--max-batch-seconds", "4")
        sent = max(len(b["results"] or []) for b in api.batches.values())
    assert result.exit_code == 1, result.output
    assert "the batch's time ran out while reading the results of message batch" in (result.stderr)
    # Cut short: fewer results read than the file holds (read whole, all would be).
    read = [int(n) for n in re.findall(r"\((\d+) read;", result.stderr)]
    assert read and all(n < sent for n in read), (read, sent)
    assert "the rest were not: they stay at the API" in result.stderr
    assert "not judged: the batch's time limit (4 s) was reached" in result.output


def test_a_result_line_over_the_cap_is_that_requests_error_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    # The first line of every results file is a message of 20 MB: over the 16 MiB cap.
    with BatchAPI(huge_line=20 * 1024 * 1024) as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root, "--max-batch-seconds", "120")
        asked_directly = api.calls["messages"]
    assert result.exit_code == 0, result.output
    assert "time limit" not in result.output + result.stderr  # read whole within the limit
    # The audit request and each agent turn: named, not read, asked again directly.
    assert "result of r1-000000: its result line is longer than 16,777,216 bytes: not read" in (
        result.stderr
    )
    assert "result of t1-00000: its result line is longer than" in result.stderr
    assert f"1 {TOO_LARGE}" in result.stderr  # the summary's failed results, by kind
    assert asked_directly >= 2
    record = json.loads((root / "a" / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "model-written"


@pytest.mark.timeout(2 * WITHIN)
def test_a_results_file_that_stalls_ends_at_the_batch_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    with BatchAPI(stall=HANG, give_up=HANG) as api:  # headers, then nothing for HANG s
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root, "--max-batch-seconds", "4")
        stalling = api.slow_replies
    # Ended by the limit: a read that waited out the stall would have read the file whole.
    assert result.exit_code == 1, result.output
    assert "the batch's time ran out while reading the results of message batch" in result.stderr
    assert "(0 read;" in result.stderr
    # The reply the run left stalling ends with its server, not HANG s after this test.
    assert stalling >= 1
    until = time.monotonic() + WITHIN
    while api.slow_replies:
        assert time.monotonic() < until, f"{api.slow_replies} stalled replies outlived the server"
        time.sleep(0.01)


# -- the same waits, with any drip: a fake clock advanced by the stream ------------------


class _FakeTime:
    def __init__(self) -> None:
        self.now = 0.0


class _FakeDeadline(Deadline):
    """A deadline on `_FakeTime` (the stream advances it), so a property runs at once."""

    __slots__ = ("fake",)

    def __init__(self, fake: _FakeTime, at: float) -> None:
        super().__init__(at, "the batch's time")
        self.fake = fake

    @property
    def expired(self) -> bool:
        assert self.at is not None
        return self.fake.now >= self.at

    def left(self) -> float | None:
        assert self.at is not None
        return max(0.0, self.at - self.fake.now)


class _Body:
    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self.closed = False

    def iter_bytes(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        self.closed = True


class _Decoder:
    def __init__(self, body: _Body) -> None:
        self.http_response = body

    def close(self) -> None:
        self.http_response.close()


class _DripSDK:
    """An SDK whose results file arrives `size` bytes every `interval` (fake) seconds."""

    def __init__(self, body: bytes, size: int, interval: float, fake: _FakeTime) -> None:
        self.body, self.size, self.interval, self.fake = body, size, interval, fake
        self.opened: list[_Body] = []
        self.messages = self
        self.batches = self

    def _drip(self) -> Iterator[bytes]:
        for start in range(0, len(self.body), self.size):
            self.fake.now += self.interval
            yield self.body[start : start + self.size]

    def results(self, batch_id: str, **options: Any) -> _Decoder:
        body = _Body(self._drip())
        self.opened.append(body)
        return _Decoder(body)


def _line(n: int, pad: int = 0) -> bytes:
    result = {"type": "errored", "error": {"type": "error", "error": {"type": "api_error"}}}
    return json.dumps({"custom_id": f"r1-{n:06d}", "result": result, "pad": "x" * pad}).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(1, 700),
    interval=st.floats(0.001, 5.0),
    limit=st.floats(0.05, 60.0),
    pads=st.lists(st.integers(0, 400), min_size=1, max_size=12),
)
def test_any_drip_is_read_until_the_deadline_and_no_further(
    size: int, interval: float, limit: float, pads: list[int]
) -> None:
    body = b"\n".join(_line(n, pad) for n, pad in enumerate(pads)) + b"\n"
    fake = _FakeTime()
    sdk = _DripSDK(body, size, interval, fake)
    api = MessageBatches(sdk, _FakeDeadline(fake, limit))
    read: list[str] = []
    try:
        read.extend(item.custom_id for item in api.results("msgbatch_1"))
    except Halted as exc:
        assert "while reading the results of message batch msgbatch_1" in str(exc)
        assert f"({len(read)} read;" in str(exc)
        # Stopped at the first chunk that came after the deadline: no wait beyond it.
        assert limit <= fake.now < limit + interval + 1e-9
    else:
        assert fake.now < limit + interval + 1e-9
    assert read == [f"r1-{n:06d}" for n in range(len(read))]  # a prefix, in order
    until = time.monotonic() + 60  # the body is closed by its reading thread, at once
    while not sdk.opened[0].closed:
        assert time.monotonic() < until
        time.sleep(0.001)


@pytest.mark.timeout(2 * WITHIN)
def test_a_read_that_hangs_midway_is_left_behind_at_the_deadline() -> None:
    # One result, then a read that hangs (a server that stops sending midway): the reading
    # ends at the deadline, not when the read's own timeout (the time left when the
    # request was sent) would end it; the hanging read closes the body once it returns.
    release = threading.Event()

    class Hanging(_DripSDK):
        def _drip(self) -> Iterator[bytes]:
            yield _line(0) + b"\n"
            release.wait(HANG)
            yield _line(1) + b"\n"

    sdk = Hanging(b"", 1, 0.0, _FakeTime())
    api = MessageBatches(sdk, Deadline.after(1.0, "the batch's time"))
    read: list[str] = []
    started = time.monotonic()
    try:
        with pytest.raises(Halted, match=r"the batch's time ran out .* \(1 read;"):
            read.extend(item.custom_id for item in api.results("msgbatch_1"))
        assert time.monotonic() - started < WITHIN  # the read hangs HANG seconds
        assert read == ["r1-000000"]
        assert not sdk.opened[0].closed  # its read still hangs
    finally:
        release.set()
    until = time.monotonic() + 60
    while not sdk.opened[0].closed:
        assert time.monotonic() < until
        time.sleep(0.01)


@settings(max_examples=200, deadline=None)
@given(
    pads=st.lists(st.integers(0, 600), min_size=1, max_size=10),
    cap=st.integers(100, 700),
    cuts=st.lists(st.integers(1, 900), min_size=1, max_size=30),
)
def test_any_chunking_gives_the_same_results_and_names_each_line_over_the_cap(
    pads: list[int], cap: int, cuts: list[int]
) -> None:
    lines = [_line(n, pad) for n, pad in enumerate(pads)]
    body = b"\n".join(lines) + b"\n"
    chunks, at, n = [], 0, 0
    while at < len(body):
        width = cuts[n % len(cuts)]
        chunks.append(body[at : at + width])
        at, n = at + width, n + 1
    said: list[str] = []
    items = list(result_items(chunks, cap, said.append))
    assert [i.custom_id for i in items] == [f"r1-{n:06d}" for n in range(len(lines))]
    for item, line in zip(items, lines, strict=True):
        if len(line) > cap:
            assert item.kind == TOO_LARGE
            assert f"longer than {cap:,} bytes" in item.note
        else:
            assert item.kind == "errored"
    assert len(said) == sum(len(line) > cap for line in lines)


# -- a slow snapshot -------------------------------------------------------------------


@pytest.mark.parametrize("batch_api", [True, False], ids=["batch-api", "ordinary"])
def test_a_slow_snapshot_stops_at_the_batch_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_api: bool
) -> None:
    from harness.session import snapshots

    convert = snapshots.to_document
    given_deadlines: list[float | None] = []
    stopped_by: list[str] = []

    def slow(data: bytes, **options: Any) -> Any:
        # A converter as slow as a hostile PDF (up to its own 20 s limit), stopping at
        # the deadline it is given, as the real one does (harness.text.isolate).
        deadline = options.get("deadline")
        given_deadlines.append(None if deadline is None else deadline.left())
        until = time.monotonic() + 30.0
        while not (deadline is not None and deadline.expired):
            if time.monotonic() >= until:
                stopped_by.append("its own limit")
                break
            time.sleep(0.05)
        else:
            stopped_by.append("the deadline")
        return convert(data, **options)

    monkeypatch.setattr(snapshots, "to_document", slow)
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    with BatchAPI() as api:
        use_batch_api(monkeypatch, api.url, KEY)
        if batch_api:
            result = run_batch_api(root, "--max-batch-seconds", "3")
        else:
            from click.testing import CliRunner

            from harness.cli import cli

            args = ["batch", str(root), "--fetch", "off", "--max-batch-seconds", "3"]
            result = CliRunner().invoke(cli, args)
    assert given_deadlines, "no snapshot was converted"
    # Each conversion ended at the batch's deadline (3 s in), none at its own 30 s: the
    # deadline is set before any starts, so this holds however slow the machine.
    assert stopped_by == ["the deadline"] * len(given_deadlines), stopped_by
    # Not judged (--batch-api: its turns are not sent) or the advisory judge.json, saying why.
    assert result.exit_code == (1 if batch_api else 0), result.output
    assert "the batch's time limit (3 s) was reached" in result.output


# -- shards of different N -------------------------------------------------------------


def test_a_shard_batch_of_another_n_is_refused_at_once_naming_the_running_one(
    tmp_path: Path,
) -> None:
    folder = tmp_path / ".judge-batch"
    folder.mkdir()
    with held(folder, shared=True), one_count(folder, Shard(0, 1)):
        with (
            pytest.raises(UsageError) as refused,
            held(folder, shared=True),
            one_count(folder, Shard(0, 2)),
        ):
            pass
        said = str(refused.value)
        assert f"as --shard 0/1 (process {os.getpid()})" in said
        assert "the same N (--shard K/1)" in said
        assert refused.value.exit_code == 2
    # Once it has ended, any N may start; shards of one N run side by side.
    with one_count(folder, Shard(0, 2)), one_count(folder, Shard(1, 2)):
        pass


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.integers(1, 4).flatmap(lambda n: st.tuples(st.integers(0, n - 1), st.just(n))),
        min_size=1,
        max_size=6,
    )
)
def test_only_shards_of_the_n_running_start(
    tmp_path_factory: Any, starts: list[tuple[int, int]]
) -> None:
    folder = tmp_path_factory.mktemp("state")
    first = starts[0][1]
    with contextlib.ExitStack() as running:
        for index, count in starts:
            try:
                running.enter_context(one_count(folder, Shard(index, count)))
            except UsageError:
                assert count != first
            else:
                assert count == first


@pytest.mark.timeout(2 * WITHIN)
def test_two_batch_api_shards_of_different_n_on_one_root_do_not_wait_on_each_other(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    hold = threading.Event()
    with BatchAPI(hold=hold) as api:
        env = api.child_env(KEY)
        base = [sys.executable, "-m", "harness", "batch", str(root), "--batch-api", "-q"]
        # A second that waited on the lock would wait HANG seconds, past the run's timeout.
        base += ["--batch-poll", "0.05", "--fetch", "off", "--lock-timeout", str(HANG)]
        first = subprocess.Popen(
            [*base, "--shard", "0/1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while api.calls["retrieve"] < 2:  # the first holds its state, polling
                assert time.monotonic() < deadline and first.poll() is None
                time.sleep(0.05)
            # At once, not after --lock-timeout: it would raise TimeoutExpired (WITHIN s).
            second = subprocess.run(
                [*base, "--shard", "0/2"], env=env, capture_output=True, text=True, timeout=WITHIN
            )
            assert second.returncode == 2, second.stderr
            assert f"as --shard 0/1 (process {first.pid})" in second.stderr
            assert "Give every shard of ROOT the same N (--shard K/1)" in second.stderr
            assert second.stdout == ""  # it judged nothing
            hold.set()
            out, err = first.communicate(timeout=WITHIN)
        finally:
            hold.set()
            if first.poll() is None:
                first.kill()
                first.wait(10)
        assert first.returncode == 0, err
        assert {json.loads(x)["outcome"] for x in out.decode().splitlines()} == {"model-written"}
        # Once the first has ended, a batch of another N starts (and finds its sessions done).
        again = subprocess.run(
            [*base, "--shard", "1/2"], env=env, capture_output=True, text=True, timeout=WITHIN
        )
        assert again.returncode == 0, again.stderr


def test_no_poll_is_sent_once_the_batch_time_is_up() -> None:
    polls: list[str] = []

    class Polled:
        def __init__(self) -> None:
            self.messages = self
            self.batches = self

        def retrieve(self, batch_id: str) -> Any:
            polls.append(batch_id)
            raise AssertionError("polled past the limit")

    api = MessageBatches(Polled(), Deadline.after(0.0, "the batch's time"))
    with pytest.raises(Halted, match="the batch's time ran out while message batch m1 was"):
        api.wait("m1", 0.01)
    assert polls == []
