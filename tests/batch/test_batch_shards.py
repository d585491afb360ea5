"""#21 §2: `judge batch ROOT --shard K/N` and `--merge-results`: N processes on one ROOT
(standing for N machines on a shared file system) judge every session exactly once, a shard
killed midway is rerun alone and resumes, and the merged table names every session."""

from __future__ import annotations

import csv
import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from harness.batch.shard import Shard, parse_shard, shard_of
from harness.cli import cli
from harness.errors import UsageError
from tests.support.batch_helpers import mentions, sessions_under
from tests.support.batchapiserver import BatchAPI

KEY = "sk-ant-canary-batch-shards-0001"


# -- which sessions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "count", "shard"),
    [  # pinned: sha256 of the path's bytes, big-endian, modulo N (any machine, any Python)
        ("a", 3, 1),
        ("a", 1000, 499),
        ("b", 3, 2),
        ("sess-001", 1000, 408),
        ("é", 1000, 588),
        ("anything", 1, 0),
    ],
)
def test_the_shard_of_a_session_is_pinned(name: str, count: int, shard: int) -> None:
    assert shard_of(name, count) == shard


@given(st.lists(st.text(min_size=1), min_size=1, max_size=30, unique=True), st.integers(1, 9))
def test_each_session_is_in_exactly_one_shard_whatever_the_listing(
    names: list[str], count: int
) -> None:
    shards = [Shard(k, count) for k in range(count)]
    owners = {n: [s.index for s in shards if s.holds(n)] for n in names}
    assert all(len(v) == 1 for v in owners.values())
    shuffled = names[:]
    random.Random(0).shuffle(shuffled)
    assert {n: shard_of(n, count) for n in shuffled} == {n: v[0] for n, v in owners.items()}
    # A session added moves no other.
    grown = {n: shard_of(n, count) for n in [*names, "a-new-session"]}
    assert all(grown[n] == owners[n][0] for n in names)


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("0/4", {}, Shard(0, 4)),
        ("3/4", {}, Shard(3, 4)),
        ("auto/4", {"JOB_COMPLETION_INDEX": "2"}, Shard(2, 4)),
        ("auto/4", {"SLURM_ARRAY_TASK_ID": "1"}, Shard(1, 4)),
        ("auto/4", {"JOB_COMPLETION_INDEX": "0", "SLURM_ARRAY_TASK_ID": "3"}, Shard(0, 4)),
    ],
)
def test_shard_forms(text: str, env: dict[str, str], expected: Shard) -> None:
    assert parse_shard(text, env) == expected


@pytest.mark.parametrize(
    ("text", "env", "says"),
    [
        ("4/4", {}, "K must be from 0 to 3"),
        ("1/0", {}, "N must be from 1"),
        ("x", {}, "give K/N"),
        ("-1/4", {}, "give K/N"),
        ("auto/4", {}, "neither JOB_COMPLETION_INDEX nor SLURM_ARRAY_TASK_ID is set"),
        ("auto/4", {"SLURM_ARRAY_TASK_ID": "4"}, "--array=0-3"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "two"}, "is not a shard number"),
        # Digits that str.isdigit takes and int does not, or takes as another number.
        ("auto/4", {"JOB_COMPLETION_INDEX": "\u00b2"}, "is not a shard number"),
        ("auto/4", {"SLURM_ARRAY_TASK_ID": "\u0661"}, "is not a shard number"),
        ("\u0661/4", {}, "give K/N"),
        # Too large a number is told its range, not the form.
        ("0/1000000000000", {}, "N must be from 1 to 1,000,000"),
        ("99999999/4", {}, "K must be from 0 to 3"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "12345678901"}, "K must be from 0 to 3"),
        ("auto/4", {"JOB_COMPLETION_INDEX": "1" * 21}, "is not a shard number"),
    ],
)
def test_bad_shards_are_usage_errors(text: str, env: dict[str, str], says: str) -> None:
    with pytest.raises(UsageError, match=says.replace("(", r"\(")):
        parse_shard(text, env)


@given(
    text=st.one_of(st.text(max_size=30), st.from_regex(r"(auto|[0-9]{1,25})/[0-9]{1,25}")),
    index=st.text(max_size=25),
)
def test_any_shard_text_or_scheduler_index_is_a_shard_or_a_usage_error(
    text: str, index: str
) -> None:
    # Whatever the operator types and the scheduler sets: a shard, or the usage error.
    try:
        shard = parse_shard(text, {"JOB_COMPLETION_INDEX": index})
    except UsageError:
        return
    assert 0 <= shard.index < shard.count <= 1_000_000


def test_a_bad_shard_exits_2_before_anything(tmp_path: Path) -> None:
    sessions_under(tmp_path / "root", ["a"])
    result = CliRunner().invoke(cli, ["batch", str(tmp_path / "root"), "--shard", "5/2"])
    assert result.exit_code == 2 and "K must be from 0 to 1" in result.output
    assert not (tmp_path / "root" / "a" / ".judge").exists()


# -- N processes on one ROOT ---------------------------------------------------------------

NAMES = [f"s{i}" for i in range(9)]  # shards of 3: s3 s4 s5 s8 | s1 s6 s7 | s0 s2


def _merge(root: Path, target: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness", "batch", str(root), "--merge-results", str(target)]
    from tests.support.apiserver import child_env

    return subprocess.run(
        cmd, env=child_env("http://127.0.0.1:9", "x"), capture_output=True, text=True, timeout=60
    )


def test_three_shards_on_one_root_judge_each_session_once_and_a_killed_one_resumes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    sessions_under(root, NAMES)
    assert {shard_of(n, 3) for n in NAMES} == {0, 1, 2}
    hold = threading.Event()
    with BatchAPI(hold=hold) as api:
        base = [sys.executable, "-m", "harness", "batch", str(root), "--batch-api", "-q"]
        base += ["--batch-poll", "0.05", "--fetch", "off", "--shard", "auto/3"]
        # The scheduler's variable picks each process's shard: two as Kubernetes Indexed
        # Job pods, one as a Slurm array task.
        envs = [
            api.child_env(KEY, JOB_COMPLETION_INDEX="0"),
            api.child_env(KEY, JOB_COMPLETION_INDEX="1"),
            api.child_env(KEY, SLURM_ARRAY_TASK_ID="2"),
        ]
        procs = [
            subprocess.Popen(base, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for e in envs
        ]
        try:
            states = [root / ".judge-batch" / f"shard-{k}-of-3" / "state.json" for k in range(3)]
            deadline = time.monotonic() + 90
            while not all(s.exists() for s in states):  # each submitted its first batch
                assert time.monotonic() < deadline
                assert all(p.poll() is None for p in procs), [p.stderr for p in procs]
                time.sleep(0.05)
            procs[0].send_signal(signal.SIGKILL)  # shard 0 dies midway, its batch pending
            procs[0].wait(10)
            submitted = json.loads(states[0].read_text())["batches"][0]["id"]
            hold.set()
            outs = [p.communicate(timeout=180) for p in procs[1:]]
        finally:
            hold.set()
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait(10)
        for proc, (_, err) in zip(procs[1:], outs, strict=True):
            assert proc.returncode == 0, err
        done = {json.loads(x)["session"] for out, _ in outs for x in out.decode().splitlines()}
        assert done == {n for n in NAMES if shard_of(n, 3) != 0}

        # The merged table names the sessions no shard has judged yet (shard 0's).
        merged = _merge(root, tmp_path / "merged.csv")
        assert merged.returncode == 1, merged.stderr
        rows = {r["session"]: r for r in csv.DictReader((tmp_path / "merged.csv").open())}
        assert set(rows) == set(NAMES)
        for name in NAMES:
            judged = shard_of(name, 3) != 0
            assert rows[name]["outcome"] == ("model-written" if judged else "not-judged")
        assert "4 not judged yet" in merged.stderr

        # Shard 0 rerun alone resumes: it polls the batch it submitted, not a new one.
        again = subprocess.run(base, env=envs[0], capture_output=True, text=True, timeout=180)
        assert again.returncode == 0, again.stderr
        assert {json.loads(x)["session"] for x in again.stdout.splitlines()} == {
            n for n in NAMES if shard_of(n, 3) == 0
        }

        # Every session judged exactly once: its audit's two requests and its loop's three
        # turns each went out once, in one batch, and nothing to the ordinary API.
        assert api.calls["messages"] == 0
        for name in NAMES:
            asked = [
                r
                for b in api.batches.values()
                for r in b["requests"]
                if mentions(r["params"], name)
            ]
            assert len(asked) == 5, name
        # Three shards, each two audit rounds and three agent rounds: the killed shard's
        # first batch was polled again, not submitted anew.
        assert api.calls["create"] == 3 * (2 + 3)
        assert api.batches[submitted]["status"] == "ended"

        merged = _merge(root, tmp_path / "merged.jsonl")
        assert merged.returncode == 0, merged.stderr
        lines = [json.loads(x) for x in (tmp_path / "merged.jsonl").read_text().splitlines()]
        assert [x["session"] for x in lines] == NAMES
        assert {x["outcome"] for x in lines} == {"model-written"}
        assert all(x["factualAccuracy"] is not None for x in lines)


def test_merge_names_what_it_cannot_use_and_follows_no_link(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["fine", "linked", "garbage", "fresh", "planted"])
    import harness
    from tests.support.batch_helpers import StatelessModel

    harness.judge_batch(root, ["fine", "linked", "garbage"], client=StatelessModel(), fetch="off")
    outside = tmp_path / "outside.json"
    outside.write_bytes((root / "fine" / ".judge" / "run.json").read_bytes())
    (root / "linked" / ".judge" / "run.json").unlink()
    (root / "linked" / ".judge" / "run.json").symlink_to(outside)
    (root / "garbage" / ".judge" / "run.json").write_text('{"version": [[[')
    # A record that came with the session (the pipeline's files are the web's): fine's own
    # run.json and judge.json without its seal, made to claim 99 supported claims.
    forged = json.loads((root / "fine" / ".judge" / "run.json").read_text())
    forged.pop("origin")
    forged["citations"]["verdicts"] = {"supported": 99, "uncertain": 0, "unsupported": 0}
    (root / "planted" / ".judge").mkdir()
    (root / "planted" / ".judge" / "run.json").write_text(json.dumps(forged))
    (root / "planted" / "judge.json").write_bytes((root / "fine" / "judge.json").read_bytes())
    target = tmp_path / "m.csv"
    result = CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(target)])
    assert result.exit_code == 1
    rows = {r["session"]: r for r in csv.DictReader(target.open())}
    assert rows["fine"]["outcome"] == "model-written" and rows["fine"]["factualAccuracy"]
    assert rows["fresh"]["outcome"] == "not-judged"
    assert rows["linked"]["outcome"] == "error" and rows["garbage"]["outcome"] == "error"
    notes = {json.loads(x)["session"]: json.loads(x)["note"] for x in result.stdout.splitlines()}
    assert "symbolic link" in notes["linked"] and "not valid JSON" in notes["garbage"]
    assert "not judged yet" in notes["fresh"]
    assert rows["planted"]["outcome"] == "error" and rows["planted"]["supported"] == ""
    assert "did not write" in notes["planted"] and "proof of origin" in notes["planted"]


@pytest.mark.parametrize("option", ["--results", "--merge-results"])
@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("a/merged.csv", "is inside the session a"),
        ("a/findings/deep/merged.jsonl", "is inside the session a"),
        ("merged.txt", "the extension must be .csv, .jsonl or .ndjson"),
    ],
)
def test_a_results_file_inside_a_session_or_of_no_format_is_refused_up_front(
    tmp_path: Path, option: str, target: str, says: str
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    result = CliRunner().invoke(cli, ["batch", str(root), option, str(root / target)])
    assert result.exit_code == 2
    assert f"{option} " in result.stderr and says in result.stderr, result.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # nothing written


def test_a_results_file_in_root_itself_or_a_new_folder_there_is_written(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a"])
    for target in (root / "merged.csv", root / "results" / "merged.jsonl"):
        result = CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(target)])
        # Exit 1: a is not judged yet, and the merged file says so.
        assert result.exit_code == 1 and "not-judged" in target.read_text(), result.stderr


def test_merge_names_a_result_the_session_has_moved_on_from_as_stale(tmp_path: Path) -> None:
    # A result no longer the session's: its files changed since it was judged, or its
    # judge.json was replaced by another (valid) one. Each is `stale`, named, exit 1.
    root = tmp_path / "root"
    sessions_under(root, ["same", "edited", "replaced"])
    import harness
    from tests.support.batch_helpers import StatelessModel

    harness.judge_batch(root, None, client=StatelessModel(), fetch="off")
    with (root / "edited" / "answer.md").open("a", encoding="utf-8") as answer:
        answer.write("\nA paragraph the pipeline added after the judging.\n")
    other = json.loads((root / "replaced" / "judge.json").read_text())
    other["scores"]["factualAccuracy"] = 5 if other["scores"]["factualAccuracy"] != 5 else 0
    (root / "replaced" / "judge.json").write_text(json.dumps(other))
    target = tmp_path / "m.jsonl"
    result = CliRunner().invoke(cli, ["batch", str(root), "--merge-results", str(target)])
    assert result.exit_code == 1
    rows = {r["session"]: r for r in map(json.loads, target.read_text().splitlines())}
    assert rows["same"]["outcome"] == "model-written"
    assert rows["edited"]["outcome"] == rows["replaced"]["outcome"] == "stale"
    notes = {json.loads(x)["session"]: json.loads(x)["note"] for x in result.stdout.splitlines()}
    assert "files changed since" in notes["edited"] and "judge it again" in notes["edited"]
    assert "not the one its run left" in notes["replaced"]
