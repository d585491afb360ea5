"""#22 §6: the answer book keys an answer by everything that shapes it; two --batch-api
batches on one ROOT; the --results CSV escaping is injective."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from harness.batch.batchapi import params_key
from harness.batch.table import csv_text, csv_untext
from harness.cli import cli
from tests.support.batch_helpers import run_batch_api, sessions_under, use_batch_api
from tests.support.batchapiserver import BatchAPI

KEY = "sk-ant-canary-batch-keys-0001"


def _env(monkeypatch: pytest.MonkeyPatch, api: BatchAPI) -> None:
    use_batch_api(monkeypatch, api.url, KEY)


_run = run_batch_api


def _audit_params(api: BatchAPI) -> list[dict[str, object]]:
    return [
        r["params"]
        for b in api.batches.values()
        for r in b["requests"]
        if "output_config" in r["params"]
    ]


def test_force_with_another_cite_model_asks_that_model_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b"])
    with BatchAPI() as api:
        _env(monkeypatch, api)
        first = _run(root, "--cite-model", "claude-haiku-4-5")
        assert first.exit_code == 0, first.output
        asked = len(_audit_params(api))
        assert asked == 4 and {p["model"] for p in _audit_params(api)} == {"claude-haiku-4-5"}

        again = _run(root, "--force", "--cite-model", "claude-sonnet-4-6")
        assert again.exit_code == 0, again.output
        later = _audit_params(api)[asked:]
        # Every audit request is asked again, of the model named: none of the other
        # model's answers is reused.
        assert len(later) == 4 and {p["model"] for p in later} == {"claude-sonnet-4-6"}
        assert api.calls["messages"] == 0
        for name in ("a", "b"):
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            assert record["citations"]["model"] == "claude-sonnet-4-6"
            assert record["citations"]["requests"] == 2

        # The same model again: the book answers all of it, nothing is submitted.
        batches = len(api.batches)
        third = _run(root, "--force", "--cite-model", "claude-sonnet-4-6")
        assert third.exit_code == 0, third.output
        assert len(_audit_params(api)) == asked + 4
        assert len(api.batches) == batches + 3  # only the three agent rounds


@pytest.mark.parametrize(
    "change",
    [
        {"model": "claude-sonnet-4-6"},
        {"max_tokens": 2048},
        {"system": [{"type": "text", "text": "other"}]},
        {"temperature": 0.5},
        {"output_config": {"format": {"type": "json_schema", "schema": {}}}},
    ],
)
def test_the_key_changes_with_every_parameter(change: dict[str, object]) -> None:
    base: dict[str, object] = {
        "model": "claude-haiku-4-5",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": "instructions"}],
        "messages": [{"role": "user", "content": "q"}],
        "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}},
    }
    assert params_key(base) != params_key({**base, **change})
    assert params_key(base) == params_key(dict(reversed(list(base.items()))))


# -- --results CSV: two session names never give one cell --------------------------------

PAIRS = [
    ("alpha\x1b", "alpha\\x1b"),  # an ESC, and the four characters that show one
    ("=1+1", "'=1+1"),  # a formula, and the text the guard makes of it
    ("a\u2028b", "a\\u2028b"),
    ("tag\U000e0041", "tag\\ue0041"),  # a tag character, and a BMP escape then a digit
    ("back\\slash", "back\\\\slash"),
]


@pytest.mark.parametrize(("one", "other"), PAIRS)
def test_two_session_names_never_share_a_csv_cell(tmp_path: Path, one: str, other: str) -> None:
    root = tmp_path / "root"
    sessions_under(root, [one, other])
    empty, results = tmp_path / "none", tmp_path / "r.csv"
    empty.mkdir()
    args = ["batch", str(root), "--replay-dir", str(empty), "-q", "--results", str(results)]
    outcome = CliRunner().invoke(cli, args)
    assert outcome.exit_code == 1  # no replay: not written, but each still a row
    with results.open(newline="") as handle:
        cells = [r["session"] for r in csv.DictReader(handle)]
    assert len(set(cells)) == 2
    assert sorted(csv_untext(c) for c in cells) == sorted([one, other])
    for cell in cells:
        assert "\x1b" not in cell and "\u2028" not in cell and not cell.startswith("=")


@given(st.text(), st.text())
def test_csv_text_is_injective_and_shows_no_control(a: str, b: str) -> None:
    assert csv_untext(csv_text(a)) == a
    if a != b:
        assert csv_text(a) != csv_text(b)
    cell = csv_text(a)
    assert cell.isprintable() or all(
        unicodedata.category(c) not in {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"} for c in cell
    )
    assert not cell.startswith(("=", "+", "-", "@"))


# -- two --batch-api batches on one ROOT -------------------------------------------------


def test_a_second_batch_api_batch_on_one_root_is_refused_at_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    sessions_under(root, ["a", "b", "c"])
    hold = threading.Event()
    with BatchAPI(hold=hold) as api:
        env = api.child_env(KEY)
        cmd = [sys.executable, "-m", "harness", "batch", str(root), "--batch-api", "-q"]
        # A second that waited on the lock would wait 600 s, far past its run's 120 s timeout.
        cmd += ["--batch-poll", "0.05", "--fetch", "off", "--lock-timeout", "600"]
        first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while api.calls["retrieve"] < 2:  # the first holds its state, polling
                assert time.monotonic() < deadline and first.poll() is None
                time.sleep(0.05)
            # Not after --lock-timeout: it would raise TimeoutExpired after 120 s.
            second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            assert second.returncode == 1, second.stderr
            assert "another `judge batch --batch-api` is running on these sessions" in (
                second.stderr
            )
            assert f"(process {first.pid})" in second.stderr
            assert second.stdout == ""  # it judged nothing
            hold.set()
            out, err = first.communicate(timeout=120)
        finally:
            hold.set()
            if first.poll() is None:
                first.kill()
                first.wait(10)
        assert first.returncode == 0, err
        assert {json.loads(x)["outcome"] for x in out.decode().splitlines()} == {"model-written"}
        # Once the first has ended, the same command finds every session up to date.
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert {json.loads(x)["outcome"] for x in again.stdout.splitlines()} == {"up-to-date"}
