"""`judge batch --batch-api`: the audit of all sessions through Message Batches, via the
real SDK against a loopback server speaking the batches endpoints."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.batch_helpers import (
    assert_replayed_alike,
    run_batch_api,
    sessions_under,
    use_batch_api,
)
from tests.support.batchapiserver import BatchAPI
from tests.support.waits import HANG, WITHIN

KEY = "sk-ant-canary-batch-api-0001"
# A held batch polled every HANG s: a wait that slept through a poll, or waited for the
# batch's end, could not end within WITHIN s, a bound that no load makes a 3 s limit reach.


def _env(monkeypatch: pytest.MonkeyPatch, api: BatchAPI) -> None:
    use_batch_api(monkeypatch, api.url, KEY)


_run = run_batch_api


def _cite_bodies(api: BatchAPI) -> list[dict[str, object]]:
    return [b for b in api.messages if "output_config" in b]


def test_the_audit_of_every_session_goes_out_as_one_batch_per_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    names = ["a", "b", "c", "d"]
    sessions_under(root, names)
    with BatchAPI(polls=2) as api:
        _env(monkeypatch, api)
        result = _run(root)
        assert result.exit_code == 0, result.output
        # Rounds, not sessions or claims: the audit's two, then the agents' three turns
        # (read, write, end), each round one turn of every session.
        assert api.calls["create"] == 2 + 3
        assert api.batch_requests() == 4 * 2 + 4 * 3
        assert api.calls["messages"] == 0  # nothing through the ordinary API
        assert api.calls["retrieve"] >= 5 * 3  # in_progress twice, then ended
        for name in names:
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["citations"]["verdicts"]["supported"] == 1
            assert record["outcome"]["kind"] == "model-written"
        assert "Message Batches: 2 submitted (0 resumed), 8 audit requests" in result.stderr
        assert "0 fell back to the ordinary API" in result.stderr
        assert "agent turns: 3 round(s), 12 turns, 0 fell back" in result.stderr
        log = [json.loads(x) for x in (root / ".judge-batch" / "lockstep.jsonl").open()]
        assert [len(r["customIds"]) for r in log] == [4, 4, 4]
        assert sorted(v["session"] for v in log[0]["customIds"].values()) == names
        state = json.loads((root / ".judge-batch" / "state.json").read_text())
        assert [b["done"] for b in state["batches"]] == [True, True]
        assert len(state["batches"][0]["customIds"]) == 4

        # A session removed from ROOT leaves its saved conversation; the next batch
        # removes it and says so.
        from harness.batch.lockstep import Conversation

        gone = Conversation(root / ".judge-batch", "removed-since")
        gone.bind("sha256:0")
        gone.save()
        again = _run(root)
        assert again.exit_code == 0
        assert api.calls["create"] == 5  # every session up to date: nothing submitted
        assert not gone.path.exists()
        assert "removed 1 saved conversation file(s)" in again.stderr
        assert {json.loads(x)["outcome"] for x in again.stdout.splitlines()} == {"up-to-date"}


def test_expired_and_errored_requests_fall_back_to_the_ordinary_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])

    def fate(custom_id: str, params: dict[str, object]) -> str:
        if custom_id == "r1-000000":
            return "expired"
        if custom_id == "r2-000001":
            return "errored"
        if custom_id == "t2-00001":  # one agent turn, in the second round
            return "expired"
        return "succeeded"

    with BatchAPI(fate=fate) as api:
        _env(monkeypatch, api)
        result = _run(root)
        assert result.exit_code == 0, result.output
        assert api.calls["create"] == 2 + 3
        # The expired round-1 request and its claim's confirm, and the errored confirm.
        assert len(_cite_bodies(api)) == 3
        judge_bodies = [b for b in api.messages if "output_config" not in b]
        assert len(judge_bodies) == 1 and api.calls["messages"] == 4
        assert "failed: 1 errored, 1 expired" in result.stderr
        assert "3 fell back to the ordinary API" in result.stderr
        assert "agent turns: 3 round(s), 9 turns, 1 fell back" in result.stderr
        for name in ("a", "b", "c"):
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["citations"]["verdicts"]["supported"] == 1


def test_a_succeeded_audit_result_that_is_not_a_usable_message_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result the batch calls succeeded, whose message the audit cannot read (its model
    no string): that request goes to the ordinary API, said apart; the batch goes on."""
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])

    def fate(custom_id: str, params: dict[str, object]) -> str:
        return "unusable" if custom_id == "r1-000001" else "succeeded"

    with BatchAPI(fate=fate) as api:
        _env(monkeypatch, api)
        result = _run(root)
        assert result.exit_code == 0, result.output
        # That round-1 request, asked directly, and so its claim's confirm (as for one
        # that expired).
        assert len(_cite_bodies(api)) == 2
        assert "failed: 1 not a usable message" in result.stderr
        for name in ("a", "b", "c"):
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["citations"]["verdicts"]["supported"] == 1
            assert record["outcome"]["kind"] == "model-written"


def test_a_batch_killed_between_submission_and_results_resumes_polling(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    hold = threading.Event()
    with BatchAPI(hold=hold) as api:
        env = api.child_env(KEY)
        cmd = [sys.executable, "-m", "harness", "batch", str(root), "--batch-api"]
        cmd += ["--batch-poll", "0.05", "--fetch", "off"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        state = root / ".judge-batch" / "state.json"
        deadline = time.monotonic() + 60
        while not state.exists() or api.calls["retrieve"] < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert api.calls["create"] == 1
        submitted = json.loads(state.read_text())["batches"][0]["id"]

        hold.set()
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert f"resuming message batch {submitted}" in again.stderr
        # Round 1 was not submitted again; round 2 and the agents' three rounds were.
        assert api.calls["create"] == 1 + 1 + 3, again.stderr
        assert _cite_bodies(api) == []
        for name in ("a", "b"):
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["citations"]["verdicts"]["supported"] == 1


def test_a_failed_submission_sends_every_request_to_the_ordinary_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    with BatchAPI(refuse_create=500) as api:
        _env(monkeypatch, api)
        result = _run(root, "--max-retries", "0")
        # Advisory: a batch that cannot be made is no reason to leave a session unjudged.
        assert result.exit_code == 0, result.output
        assert "audit batch failed (submitting a message batch: HTTP 500 api_error" in (
            result.stderr
        )
        assert "its 2 requests go to the ordinary API, one by one" in result.stderr
        assert api.calls["create"] == 1 + 3  # the audit's first pass, then each agent round
        assert api.calls["messages"] == 2 * 2 + 2 * 3  # both audit rounds, every turn
        for name in ("a", "b"):
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["outcome"]["kind"] == "model-written"
            assert record["citations"]["verdicts"]["supported"] == 1


def test_refused_credentials_at_the_batches_api_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    with BatchAPI(refuse_create=401) as api:
        _env(monkeypatch, api)
        result = _run(root, "--max-retries", "0")
        assert result.exit_code == 2, result.output
        assert "refused the credentials of the Message Batches API" in result.stderr
        assert KEY not in result.stderr
        assert api.calls["messages"] == 0


def test_a_state_folder_that_is_not_a_folder_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    (root / ".judge-batch").write_text("not a folder")
    result = _run(root)
    assert result.exit_code == 2
    assert ".judge-batch is not a folder: --batch-api keeps its batch ids" in result.stderr
    assert "remove or rename it" in result.stderr
    assert not (root / "a" / ".judge").exists()


def test_batch_api_needs_the_live_audit(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    for extra in (["--no-cite"], ["--max-output-tokens", "32000"]):
        result = _run(root, *extra)
        assert result.exit_code == 2 and "--batch-api" in result.stderr


def _turn(params: dict[str, object]) -> int:
    """Which agent turn a request is: turn n sends 2n - 1 messages."""
    messages = params["messages"]
    assert isinstance(messages, list)
    return (len(messages) + 1) // 2


def _agent_batches(api: BatchAPI) -> list[dict[str, object]]:
    batches = sorted(api.batches.values(), key=lambda b: b["ordinal"])
    return [b for b in batches if "output_config" not in b["requests"][0]["params"]]


def test_a_batch_killed_mid_conversation_resumes_each_conversation(tmp_path: Path) -> None:
    names = ["a", "b", "c"]
    root, whole = tmp_path / "root", tmp_path / "whole"
    sessions_under(root, names)
    sessions_under(whole, names)
    hold = threading.Event()
    # Batches 1-2 are the audit's, 3 the agents' first round; the second is held.
    with BatchAPI(hold=hold, hold_from=4) as api:
        env = api.child_env(KEY)
        cmd = [sys.executable, "-m", "harness", "batch", "--batch-api", "--batch-poll", "0.05"]
        cmd += ["--fetch", "off"]
        proc = subprocess.Popen([*cmd, str(root)], env=env, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        # The second agent round was submitted and polled: its ids were saved before that.
        while not any(b["ordinal"] == 4 and b["retrieves"] for b in api.batches.values()):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert api.calls["create"] == 4 and api.calls["messages"] == 0
        killed = _agent_batches(api)
        assert [sorted(_turn(r["params"]) for r in b["requests"]) for b in killed] == [
            [1, 1, 1],
            [2, 2, 2],
        ]
        saved = sorted((root / ".judge-batch" / "conversations").iterdir())
        assert len(saved) == 3
        for path in saved:
            state = json.loads(path.read_text())
            assert sorted(state["answers"]) == ["1"] and sorted(state["pending"]) == ["2"]
            assert state["inputs"].startswith("sha256:")

        hold.set()
        rec = tmp_path / "rec"
        again = subprocess.run(
            [*cmd, str(root), "--record-dir", str(rec)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
        later = _agent_batches(api)[2:]
        # No turn answered before the kill was asked again, the held round was polled (not
        # submitted again), and only the third turns went out, as one round.
        assert api.calls["create"] == 5 and api.calls["messages"] == 0, again.stderr
        assert [sorted(_turn(r["params"]) for r in b["requests"]) for b in later] == [[3, 3, 3]]
        held = next(b for b in api.batches.values() if b["ordinal"] == 4)
        held_id = next(k for k, v in api.batches.items() if v is held)
        assert f"resuming message batch {held_id}" in again.stderr
        assert "1 round(s), 3 turns, 0 fell back, 1 batch(es) resumed, 3 replayed" in again.stderr
        # Paid in this run, and so counted: the held round's 3 turns and the third round's
        # 3; not the replayed first turns, nor the audit's answers from the killed run.
        assert "0 in flight, 6 requests," in again.stderr, again.stderr
        assert list((root / ".judge-batch" / "conversations").iterdir()) == []
        for name in names:  # the recording holds the replayed turn and the polled one too
            kept = (rec / f"{name}.jsonl").read_text().splitlines()
            assert len(kept) == 1 + 3 and "judgeReplay" in kept[0]

        mark = api.calls["create"]
        uninterrupted = subprocess.run(
            [*cmd, str(whole)], env=env, capture_output=True, text=True, timeout=120
        )
        assert uninterrupted.returncode == 0, uninterrupted.stderr
        assert api.calls["create"] == mark + 2 + 3
    assert_replayed_alike(whole, root, names)  # judge.json bytes, turns, usage, verdicts
    for name in names:
        resumed = json.loads((root / name / ".judge" / "run.json").read_text())
        straight = json.loads((whole / name / ".judge" / "run.json").read_text())
        assert resumed["outcome"]["kind"] == straight["outcome"]["kind"] == "model-written"
        assert resumed["toolCalls"] == straight["toolCalls"]


def _slow_hand_outs(monkeypatch: pytest.MonkeyPatch, fast: int) -> list[int]:
    """Every session handed out after the first `fast` joins the lockstep 0.5 s late:
    time enough for the sessions already running to send a round of their own, were the
    count of sessions in flight short of them. The list records each hand-out."""
    from harness.batch.lockstep import Lockstep

    enter = Lockstep.enter
    entered: list[int] = []

    def slow(self: Lockstep) -> None:
        entered.append(len(entered))
        if len(entered) > fast:
            time.sleep(0.5)
        enter(self)

    monkeypatch.setattr(Lockstep, "enter", slow)
    return entered


def _round_sizes(root: Path) -> list[int]:
    log = [json.loads(x) for x in (root / ".judge-batch" / "lockstep.jsonl").open()]
    return [len(r["customIds"]) for r in log]


def test_every_session_handed_out_joins_the_first_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c", "d"])
    entered = _slow_hand_outs(monkeypatch, fast=1)  # b, c and d, while a could start
    with BatchAPI() as api:
        _env(monkeypatch, api)
        result = _run(root)
        assert result.exit_code == 0, result.output
        assert entered == [0, 1, 2, 3]
        # Submissions equal rounds: the audit's two, then three rounds of four turns.
        assert api.calls["create"] == 2 + 3
        assert _round_sizes(root) == [4, 4, 4]


def test_a_session_handed_out_in_place_of_one_that_ended_joins_the_next_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c", "d"])
    with BatchAPI() as api:
        _env(monkeypatch, api)
        assert _run(root, "a").exit_code == 0  # a is up to date from now on
        # c is handed out in place of a (up to date: it ends at once), d in place of b.
        entered = _slow_hand_outs(monkeypatch, fast=2)
        result = _run(root, "--sessions", "2")
        assert result.exit_code == 0, result.output
        assert entered == [0, 1, 2, 3]
        log = [json.loads(x) for x in (root / ".judge-batch" / "lockstep.jsonl").open()]
        # a's own run: three rounds of one; then b and c in step, and d after them.
        assert _round_sizes(root) == [1, 1, 1, 2, 2, 2, 1, 1, 1]
        assert [sorted(v["session"] for v in r["customIds"].values()) for r in log[3:6]] == [
            ["b", "c"]
        ] * 3


def test_the_batch_token_budget_stops_the_audit_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    with BatchAPI() as api:
        _env(monkeypatch, api)
        result = _run(root, "--max-batch-tokens", "100")
        # Round 1 of the audit was paid for (2 × 120 tokens): round 2 is not submitted,
        # and no session starts, each saying why.
        assert result.exit_code == 1, result.output
        assert api.calls["create"] == 1 and api.calls["messages"] == 0
        assert "audit batch not submitted: the batch's token budget (100 tokens)" in result.stderr
        lines = [json.loads(x) for x in result.stdout.splitlines()]
        assert {x["outcome"] for x in lines} == {"not-started"}
        assert all("token budget (100 tokens) was used up" in x["note"] for x in lines)
        assert "not submitted for the batch's limits: 2 audit requests" in result.stderr


def test_the_batch_token_budget_is_checked_before_each_agent_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])

    def fate(custom_id: str, params: dict[str, object]) -> str:
        return "expired" if custom_id == "t1-00000" else "succeeded"

    # Every reply counts 120 tokens: the audit 6 × 120, round 1 two more (960 < 1,000).
    # The turn that expired goes to the ordinary API, slowly: by the time its 120 tokens
    # spend the budget the two others have asked for turn 2, so the round's submission
    # is what must see the budget spent.
    with BatchAPI(fate=fate, latency=1.0) as api:
        _env(monkeypatch, api)
        result = _run(root, "--max-batch-tokens", "1000")
        assert result.exit_code == 0, result.output
        assert api.calls["create"] == 2 + 1 and api.calls["messages"] == 1
        assert "agent round not submitted: the batch's token budget (1,000 tokens)" in (
            result.stderr
        )
        assert "requests, 2 turns" in result.stderr  # the two turns 2 not submitted
        for line in result.stdout.splitlines():
            row = json.loads(line)
            assert row["outcome"] == "fallback" and row["wroteJudge"]
            assert (
                "the judge did not finish: the batch's token budget (1,000 tokens) was used up"
                in row["note"]
            ), row
            record = json.loads((root / row["session"] / ".judge" / "run.json").read_text())
            assert record["turns"] == 1  # the refused turn was never sent


def test_planning_hashes_only_sessions_that_may_be_up_to_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.run.digests as digests

    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    hashed: list[str] = []
    digest = digests.digest_session

    def counting(folder: Path, **kwargs: object) -> object:
        hashed.append(Path(folder).name)
        return digest(folder, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(digests, "digest_session", counting)
    with BatchAPI() as api:
        _env(monkeypatch, api)
        assert _run(root).exit_code == 0
        # Never judged: the planner does not hash them; each run hashes its own once.
        assert sorted(hashed) == ["a", "b", "c"]
        hashed.clear()
        (root / "b" / "answer.md").write_text("changed: b is to be judged again\n")
        assert _run(root).exit_code == 0
        # Completed runs: the planner asks each (one hash), the runs ask again under the lock.
        assert sorted(hashed) == ["a", "a", "b", "b", "c", "c"]
        # b alone, its 3 turns (its audit asks what the book already answered)
        assert api.calls["create"] == 5 + 3


def test_record_dir_with_batch_api_replays_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["a", "b"]
    live, offline, rec = tmp_path / "live", tmp_path / "offline", tmp_path / "rec"
    offline_too = tmp_path / "offline-too"
    sessions_under(live, names)
    sessions_under(offline, names)
    sessions_under(offline_too, names)
    with BatchAPI() as api:
        _env(monkeypatch, api)
        result = _run(live, "--record-dir", str(rec))
        assert result.exit_code == 0, result.output
        assert api.calls["create"] == 2 + 3 and api.calls["messages"] == 0
    assert sorted(p.name for p in rec.iterdir()) == sorted(
        f"{n}{ext}" for n in names for ext in (".jsonl", ".cite.jsonl")
    )
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # offline: no key, and nothing listening
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    again = CliRunner().invoke(cli, ["batch", str(offline), "--replay-dir", str(rec)])
    assert again.exit_code == 0, again.output
    assert {json.loads(x)["outcome"] for x in again.stdout.splitlines()} == {"model-written"}
    assert_replayed_alike(live, offline, names)
    # The recording command line with --replay-dir for --record-dir: nothing is sent.
    same = CliRunner().invoke(
        cli, ["batch", str(offline_too), "--batch-api", "--replay-dir", str(rec)]
    )
    assert same.exit_code == 0, same.output
    assert "--batch-api sends nothing" in same.stderr
    assert not (offline_too / ".judge-batch").exists()
    assert_replayed_alike(live, offline_too, names)


@pytest.mark.timeout(2 * WITHIN)
def test_the_time_limit_ends_a_wait_on_a_held_batch_and_a_restart_polls_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch may take up to 24 h: `--max-batch-seconds` (and Ctrl-C, through the same
    stop) ends the wait between polls, the turn stays saved as pending, and the next
    batch polls that batch instead of submitting the turn again."""
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    hold = threading.Event()
    # Unheld batches end at their first poll; the audit's 2 go, the agents' first is held.
    with BatchAPI(polls=0, hold=hold, hold_from=3) as api:
        _env(monkeypatch, api)
        started = time.monotonic()
        result = CliRunner().invoke(
            cli,
            [
                *("batch", str(root), "--batch-api", "--batch-poll", str(HANG), "--fetch", "off"),
                *("--max-batch-seconds", "3"),
            ],
        )
        # Not the HANG s between polls, nor the batch's end (never, while held): no load
        # stretches a 3 s limit to WITHIN.
        assert time.monotonic() - started < WITHIN
        assert result.exit_code == 0, result.output  # the advisory judge.json is valid
        ended = [json.loads(x) for x in result.stdout.splitlines()]
        assert {o["outcome"] for o in ended} == {"fallback"}
        assert all("time limit (3 s) was reached while" in o["note"] for o in ended), ended
        assert api.calls["create"] == 3
        saved = list((root / ".judge-batch" / "conversations").iterdir())
        pending = [json.loads(p.read_text())["pending"] for p in saved]
        held_id = list(api.batches)[2]  # in creation order: the 3rd is the held one
        assert all(p["1"]["batch"] == held_id for p in pending), pending

        hold.set()
        again = CliRunner().invoke(
            cli, ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off"]
        )
        assert again.exit_code == 0, again.output
        assert {json.loads(x)["outcome"] for x in again.stdout.splitlines()} == {"model-written"}
        # The held round polled, not submitted again: only turns 2 and 3 go out (the audit's
        # batches are done and saved).
        assert api.calls["create"] == 3 + 2
        assert "resuming message batch" in again.stderr


@pytest.mark.timeout(2 * WITHIN)
def test_ctrl_c_during_a_held_agent_round_ends_the_batch_at_once(tmp_path: Path) -> None:
    """Ctrl-C used to wait for the round in flight (a batch may take 24 h): now the wait
    ends at the next stop check, the batch exits 130, and the turn stays saved as pending."""
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    hold = threading.Event()
    with BatchAPI(polls=0, hold=hold, hold_from=3) as api:
        env = api.child_env(KEY)
        cmd = [sys.executable, "-m", "harness", "batch", "--batch-api"]
        cmd += ["--batch-poll", str(HANG)]
        proc = subprocess.Popen(
            [*cmd, "--fetch", "off", str(root)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not any(b["ordinal"] == 3 and b["retrieves"] for b in api.batches.values()):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        try:
            # Not the HANG s between polls, nor the batch's end: TimeoutExpired at WITHIN.
            _, err = proc.communicate(timeout=WITHIN)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 130, err
        assert "Traceback" not in err
        held_id = list(api.batches)[2]
        for path in (root / ".judge-batch" / "conversations").iterdir():
            assert json.loads(path.read_text())["pending"]["1"]["batch"] == held_id
