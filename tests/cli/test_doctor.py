"""`judge doctor` against the loopback API through the real SDK: each check, its fix, what
it spent, and exit 1 on any ✗ (good, wrong key, wrong URL, unknown model, a model whose
output limit is below the options, structured output refused, batches refused)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import cli
from tests.support.apiserver import Drip, Error, Reply, model_info, serve_with_env
from tests.support.fakes import message, text
from tests.support.sessions import write_small_session
from tests.support.tried import count

KEY = "sk-ant-doctor-test-key"
USAGE = {"input_tokens": 31, "output_tokens": 7}
ANSWER = Reply(message(text('{"ok": 1}'), model="claude-haiku-5-5", usage=USAGE))


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def doctor(*args: str) -> tuple[int, dict[str, Any], str]:
    """Run `judge doctor --json ARGS`: its exit code, its one JSON document, stderr."""
    result = CliRunner().invoke(cli, ["doctor", "--json", *args])
    document = json.loads(result.stdout)  # exactly one JSON document
    return result.exit_code, document, result.stderr


def checks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["check"]: c for c in document["checks"]}


def test_a_good_setup_passes_every_check_and_says_what_it_spent(api: Any, tmp_path: Path) -> None:
    server = api([ANSWER], default=None)
    write_small_session(tmp_path / "s1")
    code, document, _ = doctor("--batch-api", "--root", str(tmp_path))
    assert code == 0, document
    assert document["ok"] is True
    found = checks(document)
    assert list(found) == [
        "key",
        "endpoint",
        "model claude-sonnet-5-5",
        "model claude-haiku-5-5",
        "structured output",
        "batches",
        "session root",
    ]
    assert all(c["ok"] is True for c in found.values())
    assert "writes up to 64,000 tokens" in found["model claude-sonnet-5-5"]["detail"]
    assert "holds 1 session folder(s)" in found["session root"]["detail"]
    # Two model look-ups and a batch list (free), one Messages request of a few tokens.
    paths = [r.path.split("?")[0] for r in server.requests]
    assert paths == [
        "/v1/models/claude-sonnet-5-5",
        "/v1/models/claude-haiku-5-5",
        "/v1/messages",
        "/v1/messages/batches",
    ]
    probe = server.requests[2].body
    assert probe["model"] == "claude-haiku-5-5"
    assert probe["output_config"]["format"]["type"] == "json_schema"
    assert probe["max_tokens"] <= 64
    assert document["spent"] == {
        "requests": 4,
        "messages": 1,
        "inputTokens": 31,
        "outputTokens": 7,
    }


def test_human_lines_mark_each_check_and_name_the_fix(api: Any, tmp_path: Path) -> None:
    api([], models={"claude-haiku-5-5": 64_000})
    result = CliRunner().invoke(cli, ["doctor", "--no-cite", "--root", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == "✓ key: present and accepted"
    assert lines[1].startswith("✓ endpoint: http://127.0.0.1:")
    assert lines[2].startswith("✗ model claude-sonnet-5-5: the Models endpoint does not know")
    assert "-> pass a model id this endpoint lists" in lines[2]
    assert lines[-2] == "spent: 1 request(s): 1 free (models, batches), no Messages request"
    assert lines[-1] == "judge doctor: some checks failed (exit 1)"


def test_wrong_key_is_refused_after_one_free_request(api: Any, tmp_path: Path) -> None:
    server = api([], default=None, key="sk-ant-the-right-one")
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    found = checks(document)
    assert found["key"]["ok"] is False
    assert "HTTP 401" in found["key"]["detail"]
    assert "ANTHROPIC_API_KEY" in found["key"]["fix"]
    assert found["endpoint"]["ok"] is True
    assert found["structured output"]["ok"] is None  # not checked, and not passed
    assert len(server.requests) == 1
    assert KEY not in json.dumps(document)


def test_wrong_url_nothing_listening(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    code, document, _ = doctor("--root", str(tmp_path), "--timeout", "5")
    assert code == 1
    found = checks(document)
    assert found["endpoint"]["ok"] is False
    assert "nothing answered" in found["endpoint"]["detail"]
    assert "ANTHROPIC_BASE_URL" in found["endpoint"]["fix"]
    assert found["key"]["ok"] is None
    assert document["spent"]["messages"] == 0


def test_no_key_sends_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    assert checks(document)["key"] == {
        "check": "key",
        "ok": False,
        "detail": "no API key",
        "fix": "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) to a key this endpoint accepts",
    }
    assert document["spent"]["requests"] == 0


def test_unknown_model(api: Any, tmp_path: Path) -> None:
    api([ANSWER], default=None)
    code, document, _ = doctor("--model", "claude-nosuch-1", "--root", str(tmp_path))
    assert code == 1
    found = checks(document)
    assert found["model claude-nosuch-1"]["ok"] is False
    assert "does not know 'claude-nosuch-1'" in found["model claude-nosuch-1"]["detail"]
    assert found["model claude-haiku-5-5"]["ok"] is True
    assert found["structured output"]["ok"] is True


def test_output_limit_below_the_options(api: Any, tmp_path: Path) -> None:
    api([ANSWER], default=None, models={"claude-sonnet-5-5": 4096, "claude-haiku-5-5": None})
    code, document, _ = doctor("--max-output-tokens", "8192", "--root", str(tmp_path))
    assert code == 1
    found = checks(document)
    judge = found["model claude-sonnet-5-5"]
    assert judge["ok"] is False
    assert "writes at most 4,096 tokens and --max-output-tokens asks 8,192" in judge["detail"]
    assert judge["fix"] == "lower --max-output-tokens to 4,096 or less"
    assert "does not state its output limit" in found["model claude-haiku-5-5"]["detail"]
    assert found["model claude-haiku-5-5"]["ok"] is True


def test_structured_output_refused(api: Any, tmp_path: Path) -> None:
    refusal = Error(400, "invalid_request_error", "output_config.format: not supported")
    api([refusal], default=None)
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    found = checks(document)["structured output"]
    assert found["ok"] is False
    assert "not supported" in found["detail"]
    assert "--cite-model" in found["fix"] and "--no-cite" in found["fix"]


def test_structured_output_not_in_the_schema(api: Any, tmp_path: Path) -> None:
    api([Reply(message(text("Sure! ok.")))], default=None)
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    assert "did not answer in the schema" in checks(document)["structured output"]["detail"]


def test_batches_refused(api: Any, tmp_path: Path) -> None:
    api([ANSWER], default=None, batches=Error(403, "permission_error", "no batches for you"))
    code, document, _ = doctor("--batch-api", "--root", str(tmp_path))
    assert code == 1
    found = checks(document)["batches"]
    assert found["ok"] is False
    assert "HTTP 403" in found["detail"]
    assert "without --batch-api" in found["fix"]
    # Without --batch-api the endpoint is not asked.
    api([ANSWER], default=None, batches=Error(403, "permission_error", "no"))
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 0, document
    assert "batches" not in checks(document)


def test_unreadable_root(api: Any, tmp_path: Path) -> None:
    api([ANSWER], default=None)
    code, document, _ = doctor("--root", str(tmp_path / "missing"))
    assert code == 1
    root = checks(document)["session root"]
    assert root["ok"] is False
    assert "cannot be read" in root["detail"] and "--root" in root["fix"]


# -- issue 31 §3, §4: every wait bounded by --timeout, no redirect followed, hostile replies --


@pytest.mark.parametrize("interval", [0.3, 0.9])
def test_a_dripped_answer_ends_at_the_timeout_not_per_byte(
    api: Any, tmp_path: Path, interval: float
) -> None:
    """A Models answer dripped a byte every `interval` s kept one request going for half a
    minute or more and then passed; --timeout is for the whole request. No clock is needed
    to see it: each piece comes well within 2 s, so only a whole-request timeout can fail
    the endpoint, and a per-piece one would wait out the 30 s drip and tick it."""
    server = api([ANSWER], default=None)
    server.models_action = Drip(
        model_info("claude-sonnet-5-5", 64000), seconds=30, interval=interval
    )
    code, document, _ = doctor("--root", str(tmp_path), "--timeout", "2")
    assert code == 1 and document["ok"] is False
    found = checks(document)
    assert found["endpoint"]["ok"] is False and "--timeout" in found["endpoint"]["detail"]
    assert found["key"]["ok"] is None  # not ticked: nothing was accepted


def test_a_redirect_to_another_origin_is_not_followed_nor_ticked(api: Any, tmp_path: Path) -> None:
    other = api([ANSWER], default=None)  # a second endpoint, which would accept anything
    server = api([ANSWER], default=None)
    server.models_action = Error(
        307, "redirect", headers={"location": f"{other.url}/v1/models/claude-sonnet-5-5"}
    )
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    found = checks(document)
    assert found["key"]["ok"] is None
    assert found["endpoint"]["ok"] is False
    assert (
        "redirect" in found["endpoint"]["detail"]
        and "does not follow" in found["endpoint"]["detail"]
    )
    assert other.requests == []  # nothing was sent to where it pointed


@pytest.mark.parametrize(
    "usage",
    [{"input_tokens": "lots", "output_tokens": 7}, {"input_tokens": 1e400, "output_tokens": 7},
     {"input_tokens": [1, 2], "output_tokens": None}, {"input_tokens": True, "output_tokens": -5}],
)  # fmt: skip
def test_hostile_usage_in_the_probe_is_counted_as_nothing(
    api: Any, tmp_path: Path, usage: dict[str, Any]
) -> None:
    api([Reply(message(text('{"ok": 1}'), model="claude-haiku-5-5", usage=usage))], default=None)
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 0, document
    assert checks(document)["structured output"]["ok"] is True
    assert document["spent"]["inputTokens"] == 0


def test_a_probe_reply_without_content_is_a_failed_check(api: Any, tmp_path: Path) -> None:
    reply = message(text('{"ok": 1}'), model="claude-haiku-5-5", usage=USAGE)
    reply["content"] = None
    api([Reply(reply)], default=None)
    code, document, _ = doctor("--root", str(tmp_path))
    assert code == 1
    assert checks(document)["structured output"]["ok"] is False


def test_an_enormous_model_name_is_shown_short(api: Any, tmp_path: Path) -> None:
    server = api([ANSWER], default=None)
    info = model_info("claude-sonnet-5-5", 64000)
    info["display_name"] = "N\x1b[31m" + "x" * 8_000_000
    server.models_action = Reply(info)
    _, document, _ = doctor("--root", str(tmp_path))
    detail = checks(document)["model claude-sonnet-5-5"]["detail"]
    assert len(detail) < 300 and "\x1b" not in detail and "…" in detail


def test_the_default_endpoint_unreachable_names_the_network_not_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 33: with ANTHROPIC_BASE_URL unset, the fix said to check and unset it."""
    from harness.model import doctor as probe

    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert "ANTHROPIC_BASE_URL is not set" in probe._endpoint_fix("https://api.anthropic.com")
    assert "network" in probe._endpoint_fix("https://api.anthropic.com")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert "check ANTHROPIC_BASE_URL" in probe._endpoint_fix("http://127.0.0.1:9")


JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(input_tokens=JSONISH, output_tokens=JSONISH, content=st.one_of(st.none(), JSONISH))
def test_any_probe_reply_is_a_check_never_a_crash(
    api: Any, tmp_path: Path, input_tokens: Any, output_tokens: Any, content: Any
) -> None:
    """Issue 31 §4: whatever usage and content the probe's reply holds, doctor ends with its
    checks and a spend it can state, never an internal error."""
    count("doctor: hostile probe reply")
    reply = message(text('{"ok": 1}'), model="claude-haiku-5-5", usage=USAGE)
    reply["usage"] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if content is not None:
        reply["content"] = content
    api([Reply(reply)], default=None)
    result = CliRunner().invoke(cli, ["doctor", "--json", "--root", str(tmp_path)])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    assert "structured output" in checks(document)
    spent = document["spent"]
    assert all(isinstance(spent[k], int) and spent[k] >= 0 for k in spent)


def test_a_root_holding_no_session_says_where_to_point_it(tmp_path: Path) -> None:
    from harness.cli.doctor import root_check

    (tmp_path / "notes").mkdir()
    check = root_check(tmp_path)
    assert check.ok is True  # readable: not a failure, but said with its fix
    assert "holds no session folder" in check.detail and "--root DIR" in check.detail
    write_small_session(tmp_path / "s1")
    assert "holds 1 session folder(s)" in root_check(tmp_path).detail
