"""Round 2 is one request per finding, in every mode and through every command.

The seed: "Round 2: judge — One request per finding"; "A finding is one request". A
confirm reads its passage for its part in the whole finding, beside every other passage
gathered with it and nothing else, so a request holding two findings (or half of one)
judges a different finding.

Every command runs through the real SDK and the real `AnthropicCiteClient` against a
loopback Messages API (`judge batch --batch-api`: the loopback Message Batches API). The
server turns each citation request back into the engine's request (`cite_prompt.expand`),
answers round 1 by a fixed hash of each key (so the claims citing one source gather
different, overlapping sets of passages), and keeps every request. The test then rebuilds
each finding from the round-1 answers alone (a passage is gathered for a claim when its
detect scored above the threshold) and checks that every round-2 request is exactly one
of them: its confirms are that claim's passages, its state holds those passages and no
other, and no finding is asked twice or left out.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.model.cite_client import answer_fields
from harness.model.cite_prompt import expand
from tests.support.apiserver import FakeAPI, Reply, judge_responder, serve_with_env
from tests.support.fakes import message, text
from tests.support.paths import FIXTURES

KEY = "sk-ant-one-finding-" + "7" * 24
SESSION = "shared-source"  # 24 claims over 3 sources with text, up to 9 claims a source
THRESHOLD = 0.5  # the engine's default: a detect above it is a match


def _detect(key: str) -> float:
    # Two matches in three, by a hash of the key: claims of one source gather different,
    # overlapping sets, which a request merging findings would join.
    return 0.1 if hashlib.blake2b(key.encode(), digest_size=1).digest()[0] % 3 == 0 else 0.9


class Audit:
    """The loopback API's answers to the citation audit, and the engine requests it got."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if "output_config" not in body:
            return judge_responder(body)  # the judge's own conversation (`judge run`)
        (turn,) = body["messages"]
        request = expand(json.loads(turn["content"]))
        with self._lock:
            self.requests.append(request)
        names = answer_fields(list(request["questions"]))
        answers = {field: 0.9 if _round2(request) else _detect(key) for field, key in names.items()}
        return message(text(json.dumps(answers)), model="claude-haiku-5-5")

    def check_one_finding_per_request(self) -> int:
        """Every round-2 request is one finding rebuilt from round 1; returns their count."""
        gathered: dict[tuple[str, str], set[str]] = {}  # (group, concern) -> passage ids
        for request in self.requests:
            if _round2(request):
                continue
            ((group, passages),) = request["state"].items()
            for key in request["questions"]:
                pid, concern = key.split(":")
                assert pid in passages
                if _detect(key) > THRESHOLD:
                    gathered.setdefault((_owner(group, pid, concern), concern), set()).add(pid)

        asked: list[tuple[str, str]] = []
        for request in (r for r in self.requests if _round2(r)):
            ((group, passages),) = request["state"].items()
            confirms = [k for k in request["questions"] if k.startswith("confirm:")]
            others = [k for k in request["questions"] if not k.startswith("confirm:")]
            ids = [k.removeprefix("confirm:") for k in confirms]
            # Its confirms are keyed `confirm:<passage id>`, one per passage of its state.
            assert sorted(ids) == sorted(passages), request["questions"]
            if group == "quotes":  # one claim's quotes; no descriptor
                assert others == []
                claims = {pid.rsplit("-q", 1)[0] for pid in ids}
                assert len(claims) == 1, f"quotes of several claims in one request: {claims}"
                finding = (claims.pop(), "supports")
            else:  # one claim's concern over one source: its one descriptor names it
                assert len(others) == 1, f"questions of several findings: {others}"
                finding = (_owner(group, ids[0], others[0]), others[0])
            assert set(ids) == gathered[finding], f"{finding} is not the finding gathered"
            asked.append(finding)
        # Each finding asked once (never split into two requests), and none left out.
        assert sorted(asked) == sorted(gathered)
        return len(asked)


def _round2(request: dict[str, Any]) -> bool:
    return any("confirm:" in k for k in request["questions"])


def _owner(group: str, pid: str, concern: str) -> str:
    """What one finding belongs to: a claim's quotes, or a source's passages."""
    if group == "quotes":
        return pid.rsplit("-q", 1)[0]
    return pid.rsplit("-p", 1)[0]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "root" / SESSION
    shutil.copytree(FIXTURES / SESSION, folder)
    return folder


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.stderr
    return result


@pytest.mark.parametrize("against", ["quotes", "sources", "auto"])
def test_judge_cite_sends_one_finding_per_round2_request(
    api: Any, session: Path, against: str
) -> None:
    audit = Audit()
    server: FakeAPI = api(default=Reply(audit))
    result = _invoke("cite", str(session), "--against", against, "--json")
    report = json.loads(result.stdout)
    findings = audit.check_one_finding_per_request()
    assert findings >= 10  # many of the 24 claims gathered something to confirm
    assert len(server.requests) == len(audit.requests) == report["totals"]["requests"]


@pytest.mark.parametrize("against", ["quotes", "sources", "auto"])
def test_the_audit_inside_judge_run_sends_one_finding_per_round2_request(
    api: Any, session: Path, against: str
) -> None:
    audit = Audit()
    api(default=Reply(audit))
    _invoke("run", str(session), "--fetch", "off", "--cite-against", against)
    assert audit.check_one_finding_per_request() >= 10
    recorded = json.loads((session / ".judge" / "citations.json").read_text())
    assert recorded["offline"] is False
    assert recorded["totals"]["requests"] == len(audit.requests)


def test_judge_batch_sends_one_finding_per_round2_request(api: Any, session: Path) -> None:
    audit = Audit()
    api(default=Reply(audit))
    _invoke("batch", str(session.parent), "--fetch", "off", "--cite-against", "sources")
    assert audit.check_one_finding_per_request() >= 10
    assert json.loads((session / ".judge" / "citations.json").read_text())["offline"] is False


def test_judge_batch_through_message_batches_sends_one_finding_per_round2_request(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support import batchapiserver

    audit = Audit()
    monkeypatch.setattr(batchapiserver, "responder", audit)  # each batch request's answer
    with batchapiserver.BatchAPI() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        args = ["batch", str(session.parent), "--batch-api", "--batch-poll", "0.01"]
        _invoke(*args, "--fetch", "off", "--cite-against", "sources")
        assert server.calls["create"] >= 2  # the audit's rounds went out as batches
    assert audit.check_one_finding_per_request() >= 10
    assert json.loads((session / ".judge" / "citations.json").read_text())["offline"] is False
