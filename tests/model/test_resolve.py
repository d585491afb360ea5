"""The one client resolver: what the judge and the audit get for what the caller handed in."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cite.client import ScriptedClient
from harness.model.client import ClientSettings
from harness.model.messages import AnthropicModel
from harness.model.resolve import FirstAlone, resolve_cite, resolve_judge, resolve_run_cite
from tests.support.fakes import ScriptedAPI, ScriptedModel, message, text


def test_our_own_model_api_is_used_as_it_is() -> None:
    fake = ScriptedAPI([message(text("hi"))], strict=False)
    judge = resolve_judge(fake, ClientSettings())
    assert judge.model is fake and judge.given and judge.owned == [] and judge.built is None
    judge.bound_replies(1.0, 0.0)  # a caller's ModelAPI keeps its own clock
    assert judge.model.generate({"messages": []}, 1.0).content == [{"type": "text", "text": "hi"}]


def test_an_sdk_shaped_client_goes_behind_the_sdk_boundary() -> None:
    sdk = ScriptedModel([message(text("hi"))], strict=False)
    judge = resolve_judge(sdk, ClientSettings(), stream=False)
    assert isinstance(judge.model, AnthropicModel) and judge.given and judge.owned == []
    assert judge.built is not None and judge.built.client is sdk
    reply = judge.model.generate({"model": "m", "max_tokens": 5, "messages": []}, 1.0)
    assert reply.content == [{"type": "text", "text": "hi"}]


def test_no_client_builds_one_the_caller_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    judge = resolve_judge(None, ClientSettings())
    assert not judge.given and judge.built is not None
    assert judge.owned == [judge.built.client]
    judge.built.client.close()


def test_the_audit_client_is_the_callers_or_claude_first_request_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    given = ScriptedClient({})
    assert resolve_cite(given).client is given
    handle, why = resolve_run_cite(given, model="m")
    assert handle is not None and handle.client is given and why is None
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    live = resolve_cite(model="m")
    assert isinstance(live.client, FirstAlone) and live.kind == "live"
    live.finish()


def test_the_run_audits_offline_and_says_why(tmp_path: Path) -> None:
    handle, why = resolve_run_cite(None, model="m", judge_given=True)
    assert handle is None and why == "the caller supplied the judge's client and no cite client"
    handle, why = resolve_run_cite(None, model="m", judge_replay=tmp_path / "run.jsonl")
    assert handle is None and why is not None and "run.cite.jsonl" in why
