"""Helpers for batch tests: many small named sessions, and stateless fakes to judge them.

`responder` answers both kinds of Messages-API request a run makes, from the request
alone, so any number of sessions in threads or processes can share one fake: the audit's
(`output_config` asks for JSON: every answer field gets 0.9) and the judge's
(`apiserver.judge_responder`: read findings, write judge.json, end).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import Message
from click.testing import CliRunner, Result

from tests.support.apiserver import judge_responder
from tests.support.fakes import message, strict_refusal, text
from tests.support.sessions import write_small_session


def cite_answer(request: dict[str, Any]) -> dict[str, Any]:
    schema = request["output_config"]["format"]["schema"]
    answers: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if spec.get("type") == "object":
            answers[name] = {"value": spec["properties"]["value"]["enum"][0], "confidence": 0.9}
        else:
            answers[name] = 0.9
    return message(text(json.dumps(answers)), model="claude-haiku-5-5")


def responder(request: dict[str, Any]) -> dict[str, Any]:
    if "output_config" in request:
        return cite_answer(request)
    return judge_responder(request)


class StatelessModel:
    """In-process stand-in for `anthropic.Anthropic` answering with `responder`;
    thread-safe; keeps every request (without `timeout`) in `requests`. Strict: a request
    the real API refuses raises the SDK's error for it (`fakes.strict_refusal`)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.messages = self
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._delay = delay

    def create(self, **params: Any) -> Message:
        params.pop("timeout", None)
        refused = strict_refusal(params)  # refused as the real API would refuse it
        if refused is not None:
            raise refused
        with self._lock:
            self.requests.append(params)
        if self._delay:
            import time

            time.sleep(self._delay)
        return Message.model_validate(responder(params))


def write_named_session(folder: Path) -> Path:
    """A small session whose claim names the session, so requests can be told apart."""
    write_small_session(folder)
    path = folder / "findings" / "sq1.json"
    finding = json.loads(path.read_text())
    finding["claims"][0]["text"] = f"Aspirin reduces fever (as {folder.name} says)."
    path.write_text(json.dumps(finding, indent=2))
    return folder


def sessions_under(root: Path, names: list[str]) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    return [write_named_session(root / name) for name in names]


def mentions(body: Any, name: str) -> bool:
    return f"as {name} says" in json.dumps(body) or f"session `{name}`" in json.dumps(body)


def copy_fixtures(root: Path, fixtures: Path, names: list[str]) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        shutil.copytree(fixtures / name, root / name, symlinks=True)
        out.append(root / name)
    return out


def assert_replayed_alike(live: Path, offline: Path, names: list[str]) -> None:
    """Each session replayed offline got the live batch's judge.json bytes, turns, usage,
    judge and audit verdicts (one claim supported)."""
    for name in names:
        assert (offline / name / "judge.json").read_bytes() == (
            live / name / "judge.json"
        ).read_bytes()
        first = json.loads((live / name / ".judge" / "run.json").read_text())
        second = json.loads((offline / name / ".judge" / "run.json").read_text())
        for key in ("turns", "usage", "judge"):
            assert first[key] == second[key], key
        assert first["citations"]["verdicts"] == second["citations"]["verdicts"]
        assert second["citations"]["verdicts"]["supported"] == 1


def use_batch_api(monkeypatch: pytest.MonkeyPatch, url: str, key: str) -> None:
    """Point the SDK at a loopback Batches API with a canary key (no AUTH_TOKEN)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)


def run_batch_api(root: Path, *extra: str) -> Result:
    """`judge batch ROOT --batch-api`, polling fast and fetching nothing, in process."""
    from harness.cli import cli

    args = ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off", *extra]
    return CliRunner().invoke(cli, args)
