"""The origin key: outside every session, made once, 0600 in a 0700 folder; the MAC."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.fs import origin
from tests.support.paths import REPO


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "state" / "judge"
    monkeypatch.setenv("JUDGE_STATE_DIR", str(folder))
    monkeypatch.delenv("JUDGE_KEY_FILE", raising=False)
    origin.forget_keys()
    yield folder
    origin.forget_keys()


def test_the_key_is_made_on_first_use_private_and_only_by_a_writer(state: Path) -> None:
    assert origin.load_key(create=False) is None and not state.exists()  # readers never make it
    assert not origin.sealed_by_us("run", {"a": 1, "origin": {"mac": "hmac-sha256:00"}})
    key = origin.load_key(create=True)
    assert key is not None and len(key) == origin.KEY_BYTES
    assert stat.S_IMODE((state / "key").stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert [p.name for p in state.iterdir()] == ["key"]  # no temp file left


def test_processes_starting_together_agree_on_one_key(state: Path) -> None:
    code = "from harness.fs import origin; print(origin.load_key(create=True).hex())"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            text=True,
            env={"JUDGE_STATE_DIR": str(state), "PYTHONPATH": str(REPO)},
        )
        for _ in range(6)
    ]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and len(next(iter(keys))) == 2 * origin.KEY_BYTES


def test_a_shared_key_file_is_honoured(
    state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sealed = origin.seal("run", {"runId": "r1"})
    shared = tmp_path / "shared.key"
    shared.write_bytes((state / "key").read_bytes())
    monkeypatch.setenv("JUDGE_KEY_FILE", str(shared))
    monkeypatch.setenv("JUDGE_STATE_DIR", str(tmp_path / "elsewhere"))
    origin.forget_keys()
    assert origin.sealed_by_us("run", sealed)  # another shard, the same key file
    shared.write_text("00" * origin.KEY_BYTES + "\n")
    origin.forget_keys()
    assert not origin.sealed_by_us("run", sealed)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(runId="r2"),
        lambda d: d.update(extra=True),
        # the last hex digit changed (to "1" where it was "0": always a change)
        lambda d: d["origin"].update(
            mac=d["origin"]["mac"][:-1] + ("1" if d["origin"]["mac"].endswith("0") else "0")
        ),
        lambda d: d.pop("origin"),
    ],
)
def test_any_change_breaks_the_seal(state: Path, change: object) -> None:
    sealed = origin.seal("run", {"runId": "r1", "n": [1, 2]})
    assert origin.sealed_by_us("run", sealed) and not origin.sealed_by_us("citations", sealed)
    assert callable(change)
    change(sealed)
    assert not origin.sealed_by_us("run", sealed)


@pytest.mark.parametrize("bad", ["under-a-file", "not-a-key"])
def test_no_key_to_keep_never_blocks_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    """A state folder that cannot hold a key (or a key file that is not one): the run still
    ends with its judge.json (the judge never blocks the pipeline), sealed with a key of the
    process's own, and the receipt says later runs will not trust its artifacts."""
    import harness
    from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
    from tests.support.sessions import write_small_session

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    if bad == "under-a-file":
        monkeypatch.setenv("JUDGE_KEY_FILE", str(blocker / "key"))
    else:
        monkeypatch.setenv("JUDGE_KEY_FILE", str(blocker))
    origin.forget_keys()
    try:
        session = write_small_session(tmp_path / "s1")
        model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("done"))])
        result = harness.judge_session(session, client=model, cite=False)
        assert result.exit_code == 0 and result.outcome == "model-written"
        assert "no origin key could be kept" in result.receipt.note
        assert origin.ephemeral_reason() is not None
        assert blocker.read_text(encoding="utf-8") == "not a folder"  # nothing written over it
    finally:
        origin.forget_keys()
