"""#21 §1: with `judge batch --batch-api`, each session's run.json prices its run by channel
(`channels`: the audit's requests and the agent's turns, each `batch` or `ordinary`), so a
turn that fell back to the full-price API shows in the session's own record, and the
sessions' records add up to the batch summary's `by channel` line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.batch_helpers import mentions, run_batch_api, sessions_under, use_batch_api
from tests.support.batchapiserver import BatchAPI

KEY = "sk-ant-canary-batch-channels-0001"
NAMES = ["a", "b", "c"]

_USE = r"([\d,]+) through batches \(([\d,]+) tokens, half price\), ([\d,]+) through the " + (
    r"ordinary API \(([\d,]+) tokens, full price\)"
)
_LINE = re.compile(rf"by channel: audit {_USE}; agent turns {_USE}")


def summary_channels(stderr: str) -> dict[str, dict[str, dict[str, int]]]:
    """The summary's `by channel` line, as run.json's `channels` spells it."""
    found = _LINE.search(" ".join(stderr.split()))  # whole or folded to a width
    assert found is not None, stderr
    n = [int(x.replace(",", "")) for x in found.groups()]

    def use(i: int) -> dict[str, dict[str, int]]:
        return {
            "batch": {"requests": n[i], "tokens": n[i + 1]},
            "ordinary": {"requests": n[i + 2], "tokens": n[i + 3]},
        }

    return {"audit": use(0), "judge": use(4)}


def records(root: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    return {n: json.loads((root / n / ".judge" / "run.json").read_text()) for n in names}


def summed(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    total = {
        part: {ch: {"requests": 0, "tokens": 0} for ch in ("batch", "ordinary")}
        for part in ("audit", "judge")
    }
    for record in runs.values():
        for part, channels in record["channels"].items():
            for channel, use in channels.items():
                for key, value in use.items():
                    total[part][channel][key] += value
    return total


def judge_tokens(record: dict[str, Any]) -> int:
    """What the channels count of the run's turns: input + output + cache writes."""
    usage = record["usage"]
    return usage["input_tokens"] + usage["output_tokens"] + usage["cache_creation_input_tokens"]


def assert_turns_priced(record: dict[str, Any]) -> None:
    """Every turn of the run is in one channel, with the tokens its usage says."""
    judge = record["channels"]["judge"]
    assert judge["batch"]["requests"] + judge["ordinary"]["requests"] == record["turns"]
    assert judge["batch"]["tokens"] + judge["ordinary"]["tokens"] == judge_tokens(record)
    for use in judge.values():
        assert (use["tokens"] > 0) == (use["requests"] > 0)


def test_each_run_json_has_its_agent_turns_by_channel_and_a_fallback_is_ordinary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, NAMES)

    def fate(custom_id: str, params: dict[str, object]) -> str:
        if custom_id == "r1-000000":  # an audit request: the audit's ordinary channel
            return "expired"
        if custom_id == "t1-00001":  # a turn of round 1, and one of round 2
            return "expired"
        if custom_id == "t2-00002":
            return "errored"
        return "succeeded"

    with BatchAPI(fate=fate) as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root)
        assert result.exit_code == 0, result.output
        judge_bodies = [b for b in api.messages if "output_config" not in b]
        assert len(judge_bodies) == 2  # the two failed turns, each once, at full price
    runs = records(root, NAMES)
    for name, record in runs.items():
        assert record["outcome"]["kind"] == "model-written", name
        assert record["turns"] == 3
        assert_turns_priced(record)
        # This session's full-price turns are exactly those the ordinary API was sent.
        sent = sum(mentions(b, name) for b in judge_bodies)
        assert record["channels"]["judge"]["ordinary"]["requests"] == sent, name
        # Nothing was kept from before: the audit in place is this run's.
        assert record["channels"]["audit"] == record["citations"]["channels"], name
    ordinary = [r["channels"]["judge"]["ordinary"]["requests"] for r in runs.values()]
    assert sum(ordinary) == 2
    total = summed(runs)
    assert total == summary_channels(result.stderr)
    assert total["judge"]["batch"]["requests"] == 3 * 3 - 2
    assert total["audit"]["ordinary"]["requests"] >= 1


def test_a_failed_round_submission_prices_every_turn_ordinary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, NAMES[:2])
    with BatchAPI(refuse_create=500) as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root, "--max-retries", "0")
        assert result.exit_code == 0, result.output
    runs = records(root, NAMES[:2])
    for record in runs.values():
        assert_turns_priced(record)
        assert record["channels"]["judge"]["batch"] == {"requests": 0, "tokens": 0}
        assert record["channels"]["judge"]["ordinary"]["requests"] == 3
        assert record["channels"]["audit"]["batch"]["requests"] == 0
    assert summed(runs) == summary_channels(result.stderr)


def test_every_sample_s_turns_are_priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    sessions_under(root, NAMES[:2])

    def fate(custom_id: str, params: dict[str, object]) -> str:
        return "expired" if custom_id == "t5-00000" else "succeeded"  # a turn of sample 2

    with BatchAPI(fate=fate) as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = run_batch_api(root, "--samples", "2")
        assert result.exit_code == 0, result.output
    runs = records(root, NAMES[:2])
    for record in runs.values():
        assert len(record["samples"]["made"]) == 2
        assert record["turns"] == 2 * 3  # both samples' turns
        assert_turns_priced(record)
    assert sum(r["channels"]["judge"]["ordinary"]["requests"] for r in runs.values()) == 1
    assert summed(runs) == summary_channels(result.stderr)


def test_a_run_that_keeps_the_previous_set_prices_its_own_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`citations` is then the previous run's record (it describes the report in place);
    `channels` is what THIS run paid, so the records still add up to the summary."""
    root = tmp_path / "root"
    sessions_under(root, NAMES[:2])
    with BatchAPI() as api:
        use_batch_api(monkeypatch, api.url, KEY)
        plain = CliRunner().invoke(cli, ["batch", str(root), "--fetch", "off"])
        assert plain.exit_code == 0, plain.output
        result = run_batch_api(root, "--force", "--max-turns", "1")
        assert result.exit_code == 0, result.output
    runs = records(root, NAMES[:2])
    for record in runs.values():
        assert record["outcome"]["kind"] == "kept-previous"
        assert record["citations"]["channels"] is None  # the plain run's audit, in place
        assert record["channels"]["audit"]["batch"]["requests"] == 2  # this run's, batched
        assert record["channels"]["judge"]["batch"]["requests"] == 1
        assert_turns_priced(record)
    assert summed(runs) == summary_channels(result.stderr)


def test_without_batch_api_run_json_has_no_channels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    sessions_under(root, NAMES[:1])
    with BatchAPI() as api:
        use_batch_api(monkeypatch, api.url, KEY)
        result = CliRunner().invoke(cli, ["batch", str(root), "--fetch", "off"])
        assert result.exit_code == 0, result.output
    record = records(root, NAMES[:1])["a"]
    assert record["outcome"]["kind"] == "model-written"
    assert "channels" not in record  # an ordinary run's record is as it was
    assert record["citations"]["channels"] is None
