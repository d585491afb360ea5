"""`judge render | validate | show` through click's CliRunner: streams, exit codes, documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from harness.cli.main import cli
from harness.contract.judgment import fallback_judgment
from harness.session.loader import ENV_ROOT

VALID = {
    "scores": {
        "factualAccuracy": 4,
        "citationAccuracy": 5,
        "completeness": 3,
        "sourceQuality": 4,
        "toolEfficiency": "Unknown",
    },
    "unknowns": ["toolEfficiency"],
    "note": "Claims match their quotes; no tool log.",
    "rubricVersion": "deep-judge-v1",
}


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_ROOT, raising=False)


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    # Whatever happens, no Python traceback reaches the user.
    assert "Traceback" not in result.stderr + result.stdout
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def make_session(root: Path, name: str = "sess-1", judge: Any = None) -> Path:
    folder = root / name
    (folder / "findings").mkdir(parents=True)
    claim = {"id": "c1", "text": "t", "sourceIds": ["s1"], "quotes": []}
    finding = {"id": "sq1", "subQuestion": "q", "claims": [claim]}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = {"sources": [{"id": "s1", "url": "https://example.org"}]}
    (folder / "sources.json").write_text(json.dumps(sources))
    if isinstance(judge, bytes):
        (folder / "judge.json").write_bytes(judge)
    elif isinstance(judge, str):
        (folder / "judge.json").write_text(judge)
    elif judge is not None:
        (folder / "judge.json").write_text(json.dumps(judge))
    return folder


# -- render ------------------------------------------------------------------------------


def test_render_prints_the_brief_on_stdout(tmp_path: Path) -> None:
    folder = make_session(tmp_path)
    result = invoke("render", str(folder))
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout.startswith("# Judge brief — deep-research session `sess-1`")
    assert "`judge show sess-1 --json`" in result.stdout
    assert f"{folder.resolve()}/findings/*.json" in result.stdout
    assert "{{" not in result.stdout


def test_render_warnings_go_to_stderr(tmp_path: Path) -> None:
    folder = make_session(tmp_path)
    brief = tmp_path / "brief.md"
    brief.write_text("{{sessionId}} {{model}} {{ cli }} {{model}}\n")
    result = invoke("render", str(folder), "--brief", str(brief))
    assert result.exit_code == 0
    assert result.stdout == "sess-1 {{model}} {{ cli }} {{model}}\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert "{{model}}" in lines[0]
    assert "{{ cli }}" in lines[1]


def test_render_options(tmp_path: Path) -> None:
    folder = make_session(tmp_path)
    brief = tmp_path / "brief.md"
    brief.write_text("{{sessionId}}|{{sessionDir}}|{{cli}}")
    result = invoke(
        "render", str(folder), "--brief", str(brief), "--session-id", "S", "--cli", "py -m harness"
    )
    assert result.exit_code == 0
    assert result.stdout == f"S|{folder.resolve()}|py -m harness\n"


def test_render_by_id_under_root(tmp_path: Path) -> None:
    make_session(tmp_path / "root", "abc")
    result = invoke("render", "abc", "--root", str(tmp_path / "root"))
    assert result.exit_code == 0
    assert "session `abc`" in result.stdout


def test_render_by_id_under_env_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_session(tmp_path / "root", "abc")
    monkeypatch.setenv(ENV_ROOT, str(tmp_path / "root"))
    assert invoke("render", "abc").exit_code == 0


def test_render_missing_session(tmp_path: Path) -> None:
    result = invoke("render", "no-such-session", "--root", str(tmp_path))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "no-such-session" in result.stderr
    assert "--root" in result.stderr


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        pytest.param(["--brief", "{tmp}/nope.md"], "does not exist", id="brief-missing"),
        pytest.param(["--brief", "{tmp}"], "is a directory", id="brief-directory"),
        pytest.param(["--cli", ""], "{{cli}} is empty", id="empty-cli"),
        pytest.param(["--cli", "  "], "{{cli}} is empty", id="blank-cli"),
    ],
)
def test_render_usage_errors(tmp_path: Path, args: list[str], phrase: str) -> None:
    folder = make_session(tmp_path)
    result = invoke("render", str(folder), *[a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert phrase in result.stderr
    assert result.stderr.startswith("judge: error: ")


# -- validate ---------------------------------------------------------------------------------


def test_validate_valid(tmp_path: Path) -> None:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps(VALID))
    result = invoke("validate", str(path))
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "valid judge.json" in result.stderr


def test_validate_invalid_lists_errors_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({**VALID, "note": " ", "extra": 1}))
    result = invoke("validate", str(path))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "invalid judge.json (2 error(s))" in result.stderr
    assert "at /note: expected a non-blank string" in result.stderr
    assert "at /extra: expected no such field" in result.stderr


@pytest.mark.parametrize(
    ("content", "valid", "pointers"),
    [
        pytest.param(json.dumps(VALID), True, [], id="valid"),
        pytest.param(json.dumps({**VALID, "unknowns": []}), False, ["/unknowns"], id="unknowns"),
        pytest.param(b"\x89PNG\r\n\x1a\n\x00", False, [""], id="binary"),
        pytest.param("", False, [""], id="empty"),
        pytest.param("[" * 10_000, False, [""], id="deep"),
    ],
)
def test_validate_json_document(
    tmp_path: Path, content: str | bytes, valid: bool, pointers: list[str]
) -> None:
    path = tmp_path / "judge.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    result = invoke("validate", str(path), "--json")
    assert result.exit_code == (0 if valid else 1)
    assert result.stderr == ""
    document = json.loads(result.stdout)
    assert document == {"file": str(path), "valid": valid, "errors": document["errors"]}
    assert [e["pointer"] for e in document["errors"]] == pointers
    for error in document["errors"]:
        assert set(error) == {"pointer", "expected", "found", "message"}


@pytest.mark.parametrize("make", ["missing", "directory"])
def test_validate_unreadable(tmp_path: Path, make: str) -> None:
    path = tmp_path / "judge.json"
    if make == "directory":
        path.mkdir()
    result = invoke("validate", str(path))
    assert result.exit_code == 1
    assert str(path) in result.stderr


# -- show -----------------------------------------------------------------------------------------


def test_show_valid(tmp_path: Path) -> None:
    folder = make_session(tmp_path, judge=VALID)
    result = invoke("show", str(folder))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == VALID
    assert "session sess-1" in result.stderr
    assert "findings 1, claims 1" in result.stderr
    assert "judge.json valid" in result.stderr


def test_show_invalid(tmp_path: Path) -> None:
    folder = make_session(tmp_path, judge={**VALID, "rubricVersion": "v0"})
    result = invoke("show", str(folder))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert 'at /rubricVersion: expected exactly "deep-judge-v1"' in result.stderr


def test_show_without_judge_json(tmp_path: Path) -> None:
    result = invoke("show", str(make_session(tmp_path)))
    assert result.exit_code == 1
    assert "no such file" in result.stderr


SUMMARY_KEYS = {"findings", "claims", "quotes", "sources", "sourcesJson", "problems"}


@pytest.mark.parametrize(
    ("judge", "valid"),
    [
        pytest.param(VALID, True, id="valid"),
        pytest.param(json.loads(fallback_judgment("no model").to_json()), True, id="fallback"),
        pytest.param({**VALID, "scores": {}}, False, id="invalid"),
        pytest.param(None, False, id="absent"),
        pytest.param(b"\x00\xff\xfe garbage", False, id="binary"),
    ],
)
def test_show_json(tmp_path: Path, judge: Any, valid: bool) -> None:
    folder = make_session(tmp_path, judge=judge)
    result = invoke("show", str(folder), "--json")
    assert result.exit_code == (0 if valid else 1)
    document = json.loads(result.stdout)
    required = {"sessionId", "sessionDir", "valid", "errors", "judge", "problems"}
    assert required <= set(document)
    assert document["sessionId"] == "sess-1"
    assert document["sessionDir"] == str(folder.resolve())
    assert document["valid"] is valid
    assert (document["judge"] is not None) is valid
    assert bool(document["errors"]) is not valid
    if valid:
        assert document["judge"] == judge
    assert set(document["summary"]) >= SUMMARY_KEYS
    assert document["summary"]["claims"] == 1
    assert document["problems"] == []


def test_show_round_trip_by_id_from_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the brief tells the model to run: `{{cli}} show {{sessionId}} --json`.
    make_session(tmp_path, "run-42", judge=VALID)
    monkeypatch.chdir(tmp_path)
    result = invoke("show", "run-42", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["valid"] is True


def test_show_by_root(tmp_path: Path) -> None:
    make_session(tmp_path / "r", "x", judge=VALID)
    assert invoke("show", "x", "--root", str(tmp_path / "r")).exit_code == 0


def test_show_missing_session(tmp_path: Path) -> None:
    result = invoke("show", "gone", "--root", str(tmp_path), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"  # one object, even so
    assert "'gone'" in result.stderr


def test_show_session_with_everything_broken(tmp_path: Path) -> None:
    folder = tmp_path / "wreck"
    (folder / "findings").mkdir(parents=True)
    (folder / "findings" / "a.json").write_bytes(b"\xff\xfe")
    (folder / "findings" / "b.json").write_text("[" * 100_000)
    (folder / "findings" / "c.json").write_text('{"claims": {"x": 1}}')
    (folder / "findings" / "d.json").mkdir()
    (folder / "sources.json").write_text('{"sources": "none"}')
    (folder / "trace.jsonl").write_bytes(b"\x00\n{\n")
    (folder / "judge.json").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)))
    result = invoke("show", str(folder))
    assert result.exit_code == 1
    assert "problem(s) in the session files" in result.stderr
    assert "not UTF-8" in result.stderr
    as_json = invoke("show", str(folder), "--json")
    assert as_json.exit_code == 1
    document = json.loads(as_json.stdout)
    assert document["valid"] is False
    assert len(document["problems"]) >= 6
    files = {p["file"] for p in document["problems"]}
    assert {"findings/a.json", "findings/b.json", "findings/c.json", "sources.json"} <= files


def test_show_many_problems_are_summarised(tmp_path: Path) -> None:
    folder = make_session(tmp_path, judge=VALID)
    claims = [{"id": f"c{i}", "text": i} for i in range(80)]
    (folder / "findings" / "sq2.json").write_text(
        json.dumps({"id": "x", "subQuestion": "q", "claims": claims})
    )
    result = invoke("show", str(folder))
    assert result.exit_code == 0
    assert "and 30 more (see --json)" in result.stderr


def test_unknown_command_is_a_usage_error() -> None:
    result = invoke("frobnicate")
    assert result.exit_code == 2
    assert "No such command" in result.stderr


def test_help_lists_the_commands() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for name in ("render", "validate", "show"):
        assert name in result.stdout


def test_show_empty_session_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `judge show "$SID"` with SID unset must not audit the current folder.
    make_session(tmp_path, judge=VALID)
    monkeypatch.chdir(tmp_path / "sess-1")
    result = invoke("show", "")
    assert result.exit_code == 2
    assert "SESSION is empty" in result.stderr


def test_render_empty_session_id_is_refused(tmp_path: Path) -> None:
    result = invoke("render", str(make_session(tmp_path)), "--session-id", "")
    assert result.exit_code == 2
    assert "{{sessionId}} is empty" in result.stderr


@pytest.mark.parametrize(
    ("sources", "said"),
    [
        (None, "(no sources.json)"),
        ("{", "(sources.json unusable: ids from the findings)"),
        ('{"sources": []}', "sources 0,"),
    ],
)
def test_show_says_where_the_source_set_came_from(
    tmp_path: Path, sources: str | None, said: str
) -> None:
    folder = make_session(tmp_path, judge=VALID)
    if sources is None:
        (folder / "sources.json").unlink()
    else:
        (folder / "sources.json").write_text(sources)
    result = invoke("show", str(folder))
    assert said in result.stderr
