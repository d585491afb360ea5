"""Every `--json` command prints exactly one JSON object on stdout, even on error:
`{"error": {"code", "message"}}`, with the exit code the same error has without --json
(so `judge … --json | jq` always reads one document)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.cli.main import error_code
from harness.errors import ConfigError, JudgeError, UsageError
from tests.support.apiserver import Error, serve_with_env
from tests.support.sessions import write_small_session

KEY = "sk-ant-json-errors-key"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def _no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _boom(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr("harness.session.show.show_session", explode)


# (name, argv with {s} for a session and {t} for tmp_path, set-up, exit code, error code)
CASES: list[tuple[str, list[str], Callable[..., None] | None, int, str]] = [
    ("show: no such session", ["show", "nosuch", "--json"], None, 2, "usage"),
    ("show: unknown option", ["show", "{s}", "--json", "--bogus"], None, 2, "usage"),
    ("show: missing argument", ["show", "--json"], None, 2, "usage"),
    ("show: internal error", ["show", "{s}", "--json"], _boom, 1, "internal"),
    ("cite: no such session", ["cite", "nosuch", "--json"], None, 2, "usage"),
    ("cite: no key", ["cite", "{s}", "--json"], _no_key, 2, "config"),
    (
        "cite: missing replay",
        ["cite", "{s}", "--json", "--replay", "{t}/no.jsonl"],
        None,
        1,
        "replay",
    ),
    ("cite: bad --against", ["cite", "{s}", "--json", "--against", "x"], None, 2, "usage"),
    ("validate: missing argument", ["validate", "--json"], None, 2, "usage"),
    ("doctor: bad --timeout", ["doctor", "--json", "--timeout", "0"], None, 2, "usage"),
    ("json before the command's args", ["cite", "--json", "nosuch"], None, 2, "usage"),
]


def _argv(argv: list[str], session: Path, tmp_path: Path) -> list[str]:
    return [a.replace("{s}", str(session)).replace("{t}", str(tmp_path)) for a in argv]


@pytest.mark.parametrize(
    ("argv", "setup", "exit_code", "code"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_one_error_object_on_stdout(
    argv: list[str],
    setup: Callable[..., None] | None,
    exit_code: int,
    code: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = write_small_session(tmp_path / "s1")
    if setup is not None:
        setup(monkeypatch)
    args = _argv(argv, session, tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == exit_code, result.stderr
    assert result.stdout.count("\n") == 1, result.stdout  # one line: one document
    document = json.loads(result.stdout)
    assert list(document) == ["error"]
    assert document["error"]["code"] == code
    assert isinstance(document["error"]["message"], str) and document["error"]["message"]
    assert result.stderr  # the person still reads the error on stderr
    # Without --json: the same exit code, nothing on stdout.
    plain = CliRunner().invoke(cli, [a for a in args if a != "--json"])
    assert plain.exit_code == exit_code
    if code != "usage" or "--bogus" not in args:
        assert plain.stdout == ""


def test_a_refused_key_in_cite_is_one_error_object(api: Any, tmp_path: Path) -> None:
    api([Error(401, "authentication_error", "invalid x-api-key")] * 20, default=None)
    session = write_small_session(tmp_path / "s1")
    result = CliRunner().invoke(cli, ["cite", str(session), "--json"])
    assert result.exit_code == 2, result.stderr
    document = json.loads(result.stdout)
    assert document["error"]["code"] == "config"
    assert "HTTP 401" in document["error"]["message"]
    assert KEY not in result.stdout


def test_success_and_invalid_are_not_errors(tmp_path: Path) -> None:
    """A document the command has (an invalid judge.json, a missing file) is not wrapped."""
    missing = tmp_path / "judge.json"
    result = CliRunner().invoke(cli, ["validate", str(missing), "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["valid"] is False and "error" not in document


def test_without_json_no_object_is_printed(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["show", "nosuch"])
    assert result.exit_code == 2
    assert result.stdout == ""


# Each harness exception class's public `--json` code, as the class names gave them before
# the codes were declared: a rename must not change what scripts read.
PUBLIC_CODES = {
    "JudgeError": "judge",
    "UsageError": "usage",
    "ConfigError": "config",
    "TemplateError": "template",
    "WriteError": "write",
    "ReplayError": "replay",
    "ModelUnavailable": "model_unavailable",
    "RateLimited": "rate_limited",
    "OutOfTime": "out_of_time",
    "InvalidRequest": "invalid_request",
    "Halted": "halted",
    "ToolError": "tool",
    "AuditError": "audit",
    "LockTimeout": "lock_timeout",
    "NotWritable": "not_writable",
    "CiteOptionsError": "cite_options",
    "CiteDefinitionError": "cite_definition",
    "BatchBusy": "batch_busy",
}


def _judge_errors() -> list[type[JudgeError]]:
    import harness.audit.core
    import harness.batch.shard
    import harness.cite.concerns
    import harness.cite.options
    import harness.fs.artifacts  # noqa: F401  (each defines a JudgeError of its own)

    found: list[type[JudgeError]] = []
    todo: list[type[JudgeError]] = [JudgeError]
    while todo:
        kind = todo.pop()
        found.append(kind)
        todo.extend(kind.__subclasses__())
    return [k for k in found if k.__module__.startswith("harness.")]


def test_every_error_class_declares_its_own_code() -> None:
    kinds = _judge_errors()
    assert {k.__name__ for k in kinds} >= set(PUBLIC_CODES)
    for kind in kinds:
        assert "code" in vars(kind), kind  # declared, not inherited nor derived
        assert error_code(kind("x")) == kind.code
        if kind.__name__ in PUBLIC_CODES:
            assert kind.code == PUBLIC_CODES[kind.__name__]
    codes = [k.code for k in kinds]
    assert len(codes) == len(set(codes))  # one class per code


def test_a_class_name_is_not_the_code() -> None:
    renamed = type("SomethingElseEntirely", (ConfigError,), {"code": "config"})
    assert error_code(renamed("x")) == "config"
    with pytest.raises(TypeError, match="must declare its public error `code`"):
        type("Undeclared", (UsageError,), {})
