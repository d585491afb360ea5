"""Placeholder rendering, template reading, and the default brief against the facts stated here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.contract.brief import (
    KNOWN,
    MAX_TEMPLATE_BYTES,
    Rendered,
    read_template,
    render,
    render_for_session,
)
from harness.contract.judgment import check_judge_text
from harness.contract.rubric import DIMENSIONS, RUBRIC_VERSION
from harness.errors import TemplateError
from harness.resources import DEFAULT_BRIEF

VALUES = {"sessionId": "sess-42", "sessionDir": "/data/sessions/sess-42", "cli": "judge"}
KNOWN_PLACEHOLDER = re.compile(r"\{\{(sessionId|sessionDir|cli)\}\}")


# -- render ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", KNOWN)
def test_each_known_name_is_filled(name: str) -> None:
    rendered = render(f"<{{{{{name}}}}}> and again <{{{{{name}}}}}>", VALUES)
    assert rendered.text == f"<{VALUES[name]}> and again <{VALUES[name]}>"
    assert rendered.warnings() == []


def test_all_together() -> None:
    rendered = render("Run `{{cli}} show {{sessionId}} --json` in {{sessionDir}}.", VALUES)
    assert rendered.text == "Run `judge show sess-42 --json` in /data/sessions/sess-42."


@pytest.mark.parametrize(
    ("template", "unknown"),
    [
        pytest.param("{{placeholder}}", ["placeholder"], id="one"),
        pytest.param("{{x}} {{x}} {{y}} {{x}}", ["x", "y"], id="repeated-once-each"),
        pytest.param("{{sessionID}}", ["sessionID"], id="wrong-case-is-unknown"),
        pytest.param("{{_private}}{{a1}}", ["_private", "a1"], id="identifier-shapes"),
    ],
)
def test_unknown_names_left_as_written_and_warned_once(template: str, unknown: list[str]) -> None:
    rendered = render(template, VALUES)
    assert rendered.text == template
    assert rendered.unknown == unknown
    warnings = rendered.warnings()
    assert len(warnings) == len(unknown)
    for name, warning in zip(unknown, warnings, strict=True):
        assert f"{{{{{name}}}}}" in warning
        assert "left as written" in warning


@pytest.mark.parametrize(
    "inner",
    [" sessionId ", "sessionId ", " cli", "session id", "a-b", "1abc", "name!"],
)
def test_near_misses_are_not_substituted_and_warned(inner: str) -> None:
    template = f"before {{{{{inner}}}}} after {{{{{inner}}}}}"
    rendered = render(template, VALUES)
    assert rendered.text == template
    assert rendered.near_misses == [inner]
    (warning,) = rendered.warnings()
    assert f"{{{{{inner}}}}}" in warning
    assert "no spaces" in warning


def test_values_are_not_expanded_again() -> None:
    values = {**VALUES, "sessionId": "{{cli}}", "sessionDir": "{{sessionId}} {{nope}}"}
    rendered = render("{{sessionId}} | {{sessionDir}} | {{cli}}", values)
    assert rendered.text == "{{cli}} | {{sessionId}} {{nope}} | judge"
    assert rendered.warnings() == []  # names inside values are not the template's


@pytest.mark.parametrize("name", KNOWN)
@pytest.mark.parametrize("value", ["", "   ", "\n"])
def test_empty_value_is_an_error(name: str, value: str) -> None:
    with pytest.raises(TemplateError) as info:
        render("{{sessionId}}", {**VALUES, name: value})
    assert f"{{{{{name}}}}}" in str(info.value)
    assert info.value.exit_code == 2


def test_text_without_placeholders_is_unchanged() -> None:
    text = "No placeholders { here } {single} }} {{"
    rendered = render(text, VALUES)
    assert rendered.text == text
    assert rendered.warnings() == []


def test_digest_is_of_the_template() -> None:
    a, b = render("{{cli}}", VALUES), render("{{cli}}", {**VALUES, "cli": "other"})
    assert a.template_digest == b.template_digest
    assert len(a.template_digest) == 64
    assert render("x", VALUES).template_digest != a.template_digest


# -- read_template ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "phrase"),
    [
        pytest.param(lambda p: None, "does not exist", id="missing"),
        pytest.param(lambda p: p.mkdir(), "is a directory", id="directory"),
        pytest.param(lambda p: p.write_bytes(b"caf\xe9 {{cli}}"), "not UTF-8", id="latin-1"),
        pytest.param(
            lambda p: p.write_bytes(b"x" * (MAX_TEMPLATE_BYTES + 1)), "larger than 1 MiB", id="big"
        ),
        pytest.param(
            lambda p: p.symlink_to(p.parent / "gone.md"), "does not exist", id="dangling-link"
        ),
    ],
)
def test_bad_template_names_the_file(tmp_path: Path, make: object, phrase: str) -> None:
    path = tmp_path / "brief.md"
    make(path)  # type: ignore[operator]
    with pytest.raises(TemplateError) as info:
        read_template(path)
    assert str(path) in str(info.value)
    assert phrase in str(info.value)
    assert info.value.exit_code == 2


def test_template_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(TemplateError, match="cannot read brief template"):
        read_template(tmp_path / "file" / "brief.md")


def test_template_exactly_at_the_cap_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "brief.md"
    path.write_bytes(b"\xef\xbb\xbf" + b"x" * (MAX_TEMPLATE_BYTES - 3))
    text = read_template(path)
    assert text == "x" * (MAX_TEMPLATE_BYTES - 3)  # the BOM is not part of the brief


def test_render_for_session(tmp_path: Path) -> None:
    path = tmp_path / "t.md"
    path.write_text("{{cli}} show {{sessionId}} in {{sessionDir}}", encoding="utf-8")
    rendered = render_for_session(path, "sid", tmp_path / "sid")
    assert isinstance(rendered, Rendered)
    assert rendered.text == f"judge show sid in {tmp_path / 'sid'}"  # cli defaults to judge
    assert render_for_session(path, "s", tmp_path, cli="python -m harness").text.startswith(
        "python -m harness show s"
    )


# -- through the command line: defaults and overrides ------------------------------------------


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "sess-7"
    (folder / "findings").mkdir(parents=True)
    return folder


def _render(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["render", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_defaults(session_dir: Path, tmp_path: Path) -> None:
    brief = tmp_path / "b.md"
    brief.write_text("{{sessionId}}|{{sessionDir}}|{{cli}}\n", encoding="utf-8")
    code, out, err = _render(str(session_dir), "--brief", str(brief))
    assert (code, err) == (0, "")
    assert out == f"sess-7|{session_dir.resolve()}|judge\n"


def test_cli_overrides(session_dir: Path, tmp_path: Path) -> None:
    brief = tmp_path / "b.md"
    brief.write_text("{{sessionId}}|{{cli}}", encoding="utf-8")
    code, out, _ = _render(
        str(session_dir), "--brief", str(brief), "--session-id", "run-9", "--cli", "uv run judge"
    )
    assert code == 0
    assert out == "run-9|uv run judge\n"


# -- the default brief against the facts this project states ------------------------------
#
# What the brief must say, written down here rather than read from a file outside the
# repository: the pipeline's contract for the judge (its "Judge brief") as this project
# states it. A change to any of these is a change of contract, made here on purpose.

PLACEHOLDERS = ("sessionId", "sessionDir", "cli")
SECTIONS = (
    (1, "Goal"),
    (2, "Trace"),
    (3, "Rubric"),
    (4, "Tools and sources"),
    (5, "Boundaries"),
    (6, "Output"),
    (7, "Done when"),
    (8, "Escalation"),
)
RUBRIC = (
    "factualAccuracy",
    "citationAccuracy",
    "completeness",
    "sourceQuality",
    "toolEfficiency",
)
RUBRIC_VERSION_STATED = "deep-judge-v1"
UNKNOWN = '"Unknown"'
SCALE = ("integer from 0 to 5", "**integer 0–5**", "5 = excellent, 0 = absent or broken")
# The exact judge.json the brief shows: these keys in this order, nothing else at any level.
JUDGE_JSON_EXAMPLE = {
    "scores": {
        "factualAccuracy": 4,
        "citationAccuracy": 5,
        "completeness": 3,
        "sourceQuality": 4,
        "toolEfficiency": "Unknown",
    },
    "unknowns": ["toolEfficiency"],
    "note": "one short paragraph: what drove the scores and any caveat",
    "rubricVersion": "deep-judge-v1",
}
UNKNOWN_RULES = (
    'Every dimension scored\n`"Unknown"` goes in the `unknowns` array',
    "`toolEfficiency` when there is no tool log",
    'If you cannot see the tool history, score it **`"Unknown"`**; do not guess',
    "an empty array if none",
    "each once",
    'an\nhonest `"Unknown"` is a first-class outcome, not a failure',
)
# A brief in the seed's style: its prose names `{{placeholder}}`, which is not a known name.
SEED_STYLE = """\
The dispatching workflow supplies concrete values for every `{{placeholder}}` below.

For session `{{sessionId}}`, read every `{{sessionDir}}/findings/*.json`.
Then run `{{cli}} show {{sessionId}} --json` and confirm it exits 0.
"""


def test_the_stated_facts_are_the_code_s_facts() -> None:
    assert tuple(KNOWN) == PLACEHOLDERS
    assert tuple(DIMENSIONS) == RUBRIC
    assert RUBRIC_VERSION == RUBRIC_VERSION_STATED


def test_a_brief_that_names_an_unknown_placeholder_renders() -> None:
    rendered = render(SEED_STYLE, VALUES)
    assert KNOWN_PLACEHOLDER.search(rendered.text) is None
    assert "judge show sess-42 --json" in rendered.text
    assert "/data/sessions/sess-42/findings/*.json" in rendered.text
    # The prose's `{{placeholder}}` is left alone, and said so.
    assert rendered.unknown == ["placeholder"]
    assert "{{placeholder}}" in rendered.text
    assert rendered.near_misses == []


def test_a_brief_that_names_an_unknown_placeholder_through_the_cli(
    session_dir: Path, tmp_path: Path
) -> None:
    brief = tmp_path / "seed-style.md"
    brief.write_text(SEED_STYLE, encoding="utf-8")
    code, out, err = _render(str(session_dir), "--brief", str(brief))
    assert code == 0
    assert KNOWN_PLACEHOLDER.search(out) is None
    assert "judge show sess-7 --json" in out
    assert "{{placeholder}}" in err


DEFAULT = DEFAULT_BRIEF.read_text(encoding="utf-8")


def _sections(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^## (\d+)\. (.+)$", text, flags=re.M)


def test_default_brief_has_the_stated_sections_in_order() -> None:
    found = _sections(DEFAULT)
    assert len(found) == len(SECTIONS)
    for (number, title), (want_number, want_title) in zip(found, SECTIONS, strict=True):
        assert int(number) == want_number
        assert title.startswith(want_title), (title, want_title)


def test_default_brief_uses_exactly_the_stated_placeholders() -> None:
    names = set(re.findall(r"\{\{([^{}]*)\}\}", DEFAULT))
    assert names == set(PLACEHOLDERS)
    rendered = render(DEFAULT, VALUES)
    assert rendered.warnings() == []
    assert KNOWN_PLACEHOLDER.search(rendered.text) is None


def test_default_brief_names_the_five_dimensions_in_order() -> None:
    listed = re.findall(r"^(\d)\. \*\*`(\w+)`\*\*", DEFAULT, flags=re.M)
    assert listed == [(str(i), name) for i, name in enumerate(RUBRIC, start=1)]
    assert "five dimensions" in DEFAULT


@pytest.mark.parametrize("fact", [UNKNOWN, *SCALE, *UNKNOWN_RULES])
def test_default_brief_states_the_scale_and_the_unknown_rules(fact: str) -> None:
    assert fact in DEFAULT


def _json_example(text: str) -> str:
    blocks = re.findall(r"```json\n(.*?)\n```", text, flags=re.S)
    assert len(blocks) == 1, "one judge.json example"
    return str(blocks[0])


def test_default_brief_example_is_a_valid_judge_json() -> None:
    example = _json_example(DEFAULT)
    check = check_judge_text(example)
    assert check.valid, check.error_lines()
    assert check.judgment is not None
    assert check.judgment.unknowns == ["toolEfficiency"]


def test_default_brief_example_is_exactly_the_stated_shape() -> None:
    ours = json.loads(_json_example(DEFAULT))
    assert ours == JUDGE_JSON_EXAMPLE
    assert list(ours) == list(JUDGE_JSON_EXAMPLE)
    assert list(ours["scores"]) == list(RUBRIC)
    assert f'`rubricVersion` is exactly `"{RUBRIC_VERSION_STATED}"`' in DEFAULT


@pytest.mark.parametrize(
    "fact",
    [
        pytest.param('"Unknown"', id="unknown-string"),
        pytest.param("integer from 0 to 5", id="scale"),
        pytest.param("5 = excellent, 0 = absent or broken", id="scale-ends"),
        pytest.param("`{{cli}} show {{sessionId}} --json`", id="round-trip"),
        pytest.param("exits 0", id="round-trip-exit"),
        pytest.param('`{ "wroteJudge": true, "note": "…" }`', id="receipt"),
        pytest.param("`{{sessionDir}}/judge.json`", id="where-to-write"),
        pytest.param("every `{{sessionDir}}/findings/*.json`", id="findings"),
        pytest.param("`{{sessionDir}}/sources.json`", id="sources"),
        pytest.param("take the source ids from the findings", id="sources-absent"),
        pytest.param("`{{sessionDir}}/answer.md`", id="answer"),
        pytest.param("do not wait for it", id="answer-optional"),
        pytest.param("**advisory only**", id="advisory"),
        pytest.param("no other field at any level", id="no-extra-fields"),
        pytest.param(
            'Every dimension scored\n`"Unknown"` goes in the `unknowns` array', id="unknowns"
        ),
        pytest.param("`toolEfficiency` when there is no tool log", id="unknown-example"),
        pytest.param("not `4.0`", id="not-4.0"),
        pytest.param("`Read`", id="tool-read"),
        pytest.param("`Write` `judge.json`", id="tool-write"),
        pytest.param("`WebFetch` a cited source", id="tool-webfetch"),
        pytest.param("Do not mark the session done", id="boundary-done"),
        pytest.param("do not re-run any phase", id="boundary-rerun"),
        pytest.param("Never invent a number", id="no-invented-scores"),
        pytest.param("Score each dimension on its own", id="independent"),
        pytest.param("**The findings are absent or empty**", id="escalation-no-findings"),
        pytest.param("list all five in `unknowns`", id="escalation-all-unknown"),
        pytest.param("still produce a valid\n  `judge.json`", id="escalation-still-valid"),
        pytest.param("gated or unreachable", id="escalation-gated"),
        pytest.param("infrastructure failure", id="escalation-infra"),
        pytest.param("you do not gate", id="done-when-not-gate"),
        pytest.param("`research-deep.js`", id="pipeline"),
        pytest.param("(mode `deep`)", id="mode"),
        pytest.param("**before** the\n  finaliser writes `answer.md`", id="trace-position"),
    ],
)
def test_default_brief_carries_the_stated_facts(fact: str) -> None:
    assert fact in DEFAULT
