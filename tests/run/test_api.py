"""The Python API: `harness.judge_session` and `harness.judge_batch` take typed keywords
with `judge run`'s defaults (exactly RunOptions' fields), `JudgeError` is exported, and
the results' reprs are one short line."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.run import RunOptions
from tests.support.paths import FIXTURES
from tests.support.sessions import write_small_session

# Not judging options: what the caller hands in beside them.
SESSION_EXTRA = {"path", "force", "progress", "stop", "client", "cite_client"}
BATCH_EXTRA = {
    "root", "sessions", "limits", "replay_dir", "record_dir", "force", "batch_api",
    "batch_poll", "shard", "on_result", "tracker", "client", "cite_client",
}  # fmt: skip
PER_RUN_FILES = {"replay", "cite_replay", "record", "transcript", "session_id"}


def _params(func: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(func).parameters)


def test_judge_session_keywords_are_exactly_the_run_options() -> None:
    params = _params(harness.judge_session)
    assert set(params) - SESSION_EXTRA == set(RunOptions.model_fields)
    defaults = RunOptions()
    for name in RunOptions.model_fields:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        expected = getattr(defaults, name) if name != "fetch" else None
        assert params[name].default == expected, name
    assert "options" not in params  # no **options to guess into


def test_judge_batch_keywords_are_the_run_options_less_the_per_run_files() -> None:
    params = _params(harness.judge_batch)
    assert set(params) - BATCH_EXTRA == set(RunOptions.model_fields) - PER_RUN_FILES
    defaults = RunOptions()
    for name in set(RunOptions.model_fields) - PER_RUN_FILES - {"fetch"}:
        assert params[name].default == getattr(defaults, name), name
    from harness.batch import core

    engine = _params(core.judge_batch)
    assert params["batch_poll"].default == engine["batch_poll"].default
    # Every keyword of the engine's own is offered by the typed API (none left behind).
    assert set(engine) - {"options"} <= set(params), set(engine) - set(params)


def test_a_guessed_keyword_is_a_type_error_not_a_silent_option(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        harness.judge_session(tmp_path, replay_file="x")  # type: ignore[call-arg]


def test_judge_error_is_exported_and_caught(tmp_path: Path) -> None:
    assert issubclass(harness.UsageError, harness.JudgeError)
    assert issubclass(harness.ConfigError, harness.JudgeError)
    with pytest.raises(harness.JudgeError) as caught:
        harness.judge_session(tmp_path / "missing")
    assert caught.value.exit_code == 2
    with pytest.raises(harness.JudgeError, match="invalid run options"):
        harness.judge_session(write_small_session(tmp_path / "s"), max_turns=0)


def test_a_replayed_run_and_its_short_repr(tmp_path: Path) -> None:
    folder = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", folder)
    result = harness.judge_session(folder, replay=FIXTURES / "replays" / "clean.jsonl")
    assert result.outcome == "model-written" and result.exit_code == 0
    assert result.record is not None and result.judgment is not None
    text = repr(result)
    assert len(text) < 600 and "\n" not in text, text
    assert "toolCalls" not in text and "RunRecord" not in text
    assert text.startswith("RunResult(receipt=Receipt(wroteJudge=True")


def test_a_batch_and_its_short_reprs(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("clean", "with-trace"):
        shutil.copytree(FIXTURES / name, root / name)
    batch = harness.judge_batch(
        root, replay_dir=FIXTURES / "replays", limits=harness.BatchLimits(sessions=2)
    )
    assert batch.exit_code == 0
    assert [s.outcome for s in batch.sessions] == ["model-written", "model-written"]
    text = repr(batch)
    assert text.startswith("BatchResult(root=") and "sessions=2, ok=2, failed=0" in text
    assert len(text) < 300
    # The batch keeps each session's table row, not its run record (memory flat in the
    # number of sessions); `on_result` hears each whole, and its repr is short too.
    whole: list[harness.SessionResult] = []
    harness.judge_batch(root, replay_dir=FIXTURES / "replays", force=True, on_result=whole.append)
    assert whole and whole[0].record is not None
    for result in (batch.sessions[0], whole[0]):
        one = repr(result)
        assert len(one) < 600 and "toolCalls" not in one and "RunRecord" not in one, one


def test_the_typed_keywords_are_exactly_the_run_options_fields_and_types() -> None:
    from typing import get_type_hints

    from harness.api import BatchKeywords, RunKeywords

    fields = {name: info.annotation for name, info in RunOptions.model_fields.items()}
    assert get_type_hints(RunKeywords) == fields
    batch = {n: t for n, t in fields.items() if n not in RunOptions.per_session()}
    assert get_type_hints(BatchKeywords) == batch
    assert set(RunOptions.per_session()) == PER_RUN_FILES
    # The signature a person reads (help(), inspect) carries each field's type too.
    params = _params(harness.judge_session)
    for name, annotation in fields.items():
        assert params[name].annotation == annotation, name


def test_a_per_run_file_given_to_the_batch_is_a_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="replay"):
        harness.judge_batch(tmp_path, replay=tmp_path / "x.jsonl")  # type: ignore[call-arg]
