"""#21 §2: the Kubernetes Indexed Job manifest and the Slurm array script of docs/batch.md,
tested as far as this machine allows: parsed, and their commands run once per index with
the scheduler's variable set, on one ROOT against the loopback batches API."""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.batch_helpers import mentions, sessions_under
from tests.support.batchapiserver import BatchAPI

DOC = Path(__file__).resolve().parents[2] / "docs" / "batch.md"
KEY = "sk-ant-canary-batch-docs-0001"
NAMES = [f"s{i}" for i in range(8)]


def _block(after: str, lang: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(after)
    found = re.compile(rf"```{lang}\n(.*?)```", re.S).search(text, start)
    assert found is not None, f"no ```{lang} block after {after!r} in {DOC}"
    return found.group(1)


def _judge_on_path(tmp_path: Path) -> dict[str, str]:
    """A `judge` command on PATH that runs this checkout's harness."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    judge = bin_dir / "judge"
    judge.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m harness "$@"\n')
    judge.chmod(judge.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def _merged(
    root: Path, env: dict[str, str], tmp_path: Path, code: int = 0
) -> list[dict[str, object]]:
    target = tmp_path / "merged.jsonl"
    cmd = [sys.executable, "-m", "harness", "batch", str(root), "--merge-results", str(target)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stderr
    return [json.loads(x) for x in target.read_text().splitlines()]


def _machine(tmp_path: Path, name: str, **env: str) -> dict[str, str]:
    """A separate container or node: a state folder of its own (so no origin key of the
    others' unless JUDGE_KEY_FILE names one they share)."""
    return {"JUDGE_STATE_DIR": str(tmp_path / "machines" / name), **env}


def _once_each(api: BatchAPI) -> None:
    assert api.calls["messages"] == 0
    for name in NAMES:
        asked = [
            r for b in api.batches.values() for r in b["requests"] if mentions(r["params"], name)
        ]
        assert len(asked) == 5, name  # 2 audit requests, 3 turns: judged exactly once


def test_the_kubernetes_indexed_job_runs_every_shard(tmp_path: Path) -> None:
    job = yaml.safe_load(_block("### A Kubernetes Indexed Job", "yaml"))
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    (container,) = job["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    count = int(command[command.index("--shard") + 1].removeprefix("auto/"))
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == count
    mount = container["volumeMounts"][0]["mountPath"]
    assert command[:3] == ["judge", "batch", mount]
    # The origin key: a Secret mounted as a regular file (subPath), named by JUDGE_KEY_FILE.
    named = {e["name"]: e.get("value") for e in container["env"]}
    (key_mount,) = [
        m for m in container["volumeMounts"] if m["mountPath"] == named["JUDGE_KEY_FILE"]
    ]
    (key_volume,) = [
        v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == key_mount["name"]
    ]
    assert key_volume["secret"]["secretName"] and key_mount["subPath"] == "key"
    # What `kubectl create secret … --from-literal=key=$(openssl rand -hex 32)` holds.
    secret = tmp_path / "secret" / "key"
    secret.parent.mkdir()
    secret.write_text(secrets.token_hex(32))
    secret.chmod(0o400)  # the manifest's defaultMode: a key others can read is refused
    root = tmp_path / "sessions"
    sessions_under(root, NAMES)
    with BatchAPI() as api:
        env = api.child_env(KEY, **_judge_on_path(tmp_path))
        argv = [str(root) if a == mount else a for a in command]
        argv += ["--batch-poll", "0.05", "--fetch", "off"]

        def pod(index: int, attempt: int) -> subprocess.CompletedProcess[str]:
            run = {
                **env,
                **_machine(tmp_path, f"pod-{index}-{attempt}", JUDGE_KEY_FILE=str(secret)),
            }
            run["JOB_COMPLETION_INDEX"] = str(index)
            return subprocess.run(argv, env=run, capture_output=True, text=True, timeout=180)

        for index in range(count):  # each pod, one after another on this one machine
            done = pod(index, 0)
            assert done.returncode == 0, done.stderr
            assert (root / ".judge-batch" / f"shard-{index}-of-{count}").is_dir()
        _once_each(api)
        # A pod retried in a new container resumes: its shard is up to date, nothing is sent.
        sent = dict(api.calls)
        done = pod(0, 1)  # shard 0 of 4 holds s1, s2 and s5
        assert done.returncode == 0 and dict(api.calls) == sent, done.stderr
        lines = [json.loads(x) for x in done.stdout.splitlines()]
        assert len(lines) == 3 and all(x["skipped"] for x in lines), done.stdout
        rows = _merged(
            root, {**env, **_machine(tmp_path, "merge", JUDGE_KEY_FILE=str(secret))}, tmp_path
        )
        # Without the shared key the records verify nowhere: the merge names each an error.
        alone = _merged(root, {**env, **_machine(tmp_path, "no-key")}, tmp_path, code=1)
    assert [r["session"] for r in rows] == NAMES
    assert {r["outcome"] for r in rows} == {"model-written"}
    assert {r["outcome"] for r in alone} == {"error"}


def test_the_slurm_array_script_runs_every_task(tmp_path: Path) -> None:
    script = _block("### A Slurm array", "sh")
    array = re.search(r"^#SBATCH --array=0-(\d+)$", script, re.M)
    shard = re.search(r"--shard auto/(\d+)", script)
    assert array is not None and shard is not None
    count = int(shard.group(1))
    assert int(array.group(1)) == count - 1  # tasks 0..N-1, one per shard
    path = tmp_path / "judge-array.sh"
    path.write_text(script)
    root = tmp_path / "cluster-root"  # the ROOT every array task shares
    sessions_under(root, NAMES)
    assert "export JUDGE_KEY_FILE=" in script  # one origin key for every task
    # On the cluster's file system, where the script's default key lies: made by the first task.
    cluster_key = tmp_path / "cluster-fs" / "judge" / "key"
    with BatchAPI() as api:
        env = api.child_env(KEY, ROOT=str(root), **_judge_on_path(tmp_path))
        env["JUDGE_KEY_FILE"] = str(cluster_key)
        for task in range(count):  # each task on a node of its own
            run = {**env, **_machine(tmp_path, f"node-{task}"), "SLURM_ARRAY_TASK_ID": str(task)}
            cmd = ["bash", str(path), "--batch-poll", "0.05", "--fetch", "off"]
            done = subprocess.run(cmd, env=run, capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stderr
        _once_each(api)
        rows = _merged(root, {**env, **_machine(tmp_path, "merge")}, tmp_path)
    assert cluster_key.is_file()
    assert [r["session"] for r in rows] == NAMES
    assert {r["outcome"] for r in rows} == {"model-written"}
