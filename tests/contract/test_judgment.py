"""judge.json: every strictness rule, valid and invalid documents side by side.

Each case says what each layer should make of the document:
- the strict check (`check_judge_text`): the exact pointers, and what `expected`/`found` say;
- the JSON Schema file alone, given the document as a plain JSON parser reads it;
- the pydantic `Judgment` mirror, given the same plain parse.
`None` for a layer means the plain parser cannot read the document at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from harness.contract.judgment import (
    DIMENSIONS,
    MAX_JUDGE_BYTES,
    RUBRIC_VERSION,
    SCORE_EXPECTED,
    Judgment,
    _plainly_valid,
    check_judge_file,
    check_judge_text,
    fallback_judgment,
    write_judgment_atomic,
)
from harness.errors import WriteError
from harness.resources import schema_path

SCHEMA = json.loads(schema_path("judge.schema.json").read_text(encoding="utf-8"))
SCORES = ("factualAccuracy", "citationAccuracy", "completeness", "sourceQuality", "toolEfficiency")
NAMES = "factualAccuracy, citationAccuracy, completeness, sourceQuality, toolEfficiency"


def judge(
    fa: str = "4",
    ca: str = "5",
    co: str = "3",
    sq: str = "4",
    te: str = '"Unknown"',
    unknowns: str = '["toolEfficiency"]',
    note: str = '"Claims match their quotes; no tool log."',
    rv: str = '"deep-judge-v1"',
    scores_extra: str = "",
    top_extra: str = "",
    drop: tuple[str, ...] = (),
) -> str:
    """A judge.json text built from raw JSON fragments, so that 4.0 or NaN stay as written."""
    scores = [("factualAccuracy", fa), ("citationAccuracy", ca), ("completeness", co)]
    scores += [("sourceQuality", sq), ("toolEfficiency", te)]
    inner = [f'"{k}": {v}' for k, v in scores if k not in drop] + (
        [scores_extra] * bool(scores_extra)
    )
    fields = [("scores", "{" + ", ".join(inner) + "}"), ("unknowns", unknowns)]
    fields += [("note", note), ("rubricVersion", rv)]
    outer = [f'"{k}": {v}' for k, v in fields if k not in drop] + ([top_extra] * bool(top_extra))
    return "{" + ", ".join(outer) + "}"


ALL_UNKNOWN = judge(*(['"Unknown"'] * 5), unknowns=json.dumps(list(SCORES)))


@dataclass(frozen=True)
class Bad:
    text: str
    # (pointer, a phrase of `expected`, a phrase of `found`) for every issue, in order.
    issues: list[tuple[str, str, str]]
    schema_rejects: bool | None  # the schema file alone, on a plain parse
    model_rejects: bool | None  # the pydantic mirror, on a plain parse


VALID: dict[str, str] = {
    "brief-example": judge(),
    "all-integers": judge(te="2", unknowns="[]"),
    "bounds-0-and-5": judge(fa="0", ca="5", co="0", sq="5", te="1", unknowns="[]"),
    "negative-zero": judge(fa="-0"),
    "all-unknown": ALL_UNKNOWN,
    "unknowns-any-order": judge(
        fa='"Unknown"',
        co='"Unknown"',
        unknowns='["toolEfficiency", "factualAccuracy", "completeness"]',
    ),
    "fields-reordered": json.dumps(
        {
            "rubricVersion": "deep-judge-v1",
            "note": "n",
            "unknowns": [],
            "scores": dict(reversed([(d, 3) for d in SCORES])),
        }
    ),
    "pretty-printed": json.dumps(json.loads(judge()), indent=4) + "\n",
    "note-unicode-and-padding": judge(note='"  Sources solides — 👍  "'),
    "note-escapes": judge(note='"line one\\nline two \\u00e9"'),
}

S = "/scores/factualAccuracy"
BAD: dict[str, Bad] = {
    # -- scores ---------------------------------------------------------------
    "score-4.0": Bad(judge(fa="4.0"), [(S, "whole number", "4.0")], False, True),
    "score-string-4": Bad(judge(fa='"4"'), [(S, SCORE_EXPECTED, '"4" (a string)')], True, True),
    "score-true": Bad(judge(fa="true"), [(S, SCORE_EXPECTED, "true (a boolean)")], True, True),
    "score-false": Bad(judge(fa="false"), [(S, SCORE_EXPECTED, "false (a boolean)")], True, True),
    "score-null": Bad(judge(fa="null"), [(S, SCORE_EXPECTED, "null")], True, True),
    "score-6": Bad(judge(fa="6"), [(S, SCORE_EXPECTED, "6")], True, True),
    "score-minus-1": Bad(judge(fa="-1"), [(S, SCORE_EXPECTED, "-1")], True, True),
    "score-lower-unknown": Bad(
        judge(fa='"unknown"'), [(S, SCORE_EXPECTED, 'write exactly "Unknown"')], True, True
    ),
    "score-unknown-space": Bad(
        judge(fa='"Unknown "'), [(S, SCORE_EXPECTED, 'write exactly "Unknown"')], True, True
    ),
    "score-lower-unknown-listed": Bad(
        judge(te='"unknown"'),
        [("/scores/toolEfficiency", SCORE_EXPECTED, 'write exactly "Unknown"')],
        True,
        True,
    ),
    "score-1e0": Bad(judge(fa="1e0"), [(S, "whole number", "1e0")], False, True),
    "score-4.5": Bad(judge(fa="4.5"), [(S, "whole number", "4.5")], True, True),
    "score-array": Bad(judge(fa="[4]"), [(S, SCORE_EXPECTED, "[4]")], True, True),
    "score-object": Bad(judge(fa="{}"), [(S, SCORE_EXPECTED, "an empty object {}")], True, True),
    "missing-dimension": Bad(
        judge(drop=("completeness",)),
        [("/scores/completeness", SCORE_EXPECTED, "the field is missing")],
        True,
        True,
    ),
    "extra-dimension": Bad(
        judge(scores_extra='"clarity": 4'),
        [("/scores/clarity", f"no such field (allowed here: {NAMES})", 'an extra field "clarity"')],
        True,
        True,
    ),
    "extra-dimension-escaped": Bad(
        judge(scores_extra='"a/b~c": 1'),
        [("/scores/a~1b~0c", "no such field", 'an extra field "a/b~c"')],
        True,
        True,
    ),
    "scores-not-object": Bad(
        judge(drop=("scores",), top_extra='"scores": []'),
        [("/scores", "an object with the five dimension scores", "an empty array []")],
        True,
        True,
    ),
    "scores-missing": Bad(
        judge(drop=("scores",)),
        [("/scores", "an object with the five dimension scores", "the field is missing")],
        True,
        True,
    ),
    # -- top level ----------------------------------------------------------------
    "extra-top-field": Bad(
        judge(top_extra='"confidence": 0.9'),
        [
            (
                "/confidence",
                "no such field (allowed here: scores, unknowns, note, rubricVersion)",
                'an extra field "confidence"',
            )
        ],
        True,
        True,
    ),
    # -- unknowns -------------------------------------------------------------
    "unknowns-missing-one": Bad(
        judge(unknowns="[]"),
        [("/unknowns", '"toolEfficiency" listed in unknowns', "an empty array []")],
        True,
        True,
    ),
    "unknowns-extra-one": Bad(
        judge(unknowns='["toolEfficiency", "completeness"]'),
        [
            (
                "/unknowns",
                '"completeness" not listed in unknowns, since its score is 3',
                '["toolEfficiency", "completeness"]',
            )
        ],
        True,
        True,
    ),
    "unknowns-duplicate": Bad(
        judge(unknowns='["toolEfficiency", "toolEfficiency"]'),
        [
            (
                "/unknowns",
                "each dimension listed at most once",
                '["toolEfficiency", "toolEfficiency"]',
            )
        ],
        True,
        True,
    ),
    "unknowns-not-a-dimension": Bad(
        judge(unknowns='["toolEfficiency", "speed"]'),
        [("/unknowns/1", f"one of the dimension names {NAMES}", '"speed"')],
        True,
        True,
    ),
    "unknowns-wrong-case": Bad(
        judge(unknowns='["ToolEfficiency"]'),
        [
            ("/unknowns", '"toolEfficiency" listed in unknowns', '["ToolEfficiency"]'),
            ("/unknowns/0", "one of the dimension names", '"ToolEfficiency"'),
        ],
        True,
        True,
    ),
    "unknowns-all-five-missing": Bad(
        ALL_UNKNOWN.replace(json.dumps(list(SCORES)), "[]"),
        [("/unknowns", f'"{d}" listed in unknowns', "an empty array []") for d in SCORES],
        True,
        True,
    ),
    "unknowns-not-array": Bad(
        judge(unknowns='"toolEfficiency"'),
        [("/unknowns", "an array of dimension names", '"toolEfficiency"')],
        True,
        True,
    ),
    "unknowns-absent": Bad(
        judge(drop=("unknowns",)),
        [("/unknowns", 'an array of the dimensions scored "Unknown"', "the field is missing")],
        True,
        True,
    ),
    # -- note ---------------------------------------------------------------------
    "note-empty": Bad(judge(note='""'), [("/note", "a non-blank string", '""')], True, True),
    "note-whitespace": Bad(
        judge(note='" \\n\\t "'), [("/note", "a non-blank string", '" \\n\\t "')], True, True
    ),
    "note-number": Bad(judge(note="5"), [("/note", "a non-blank string", "5")], True, True),
    "note-null": Bad(judge(note="null"), [("/note", "a non-blank string", "null")], True, True),
    "note-array": Bad(judge(note='["x"]'), [("/note", "a non-blank string", '["x"]')], True, True),
    "note-missing": Bad(
        judge(drop=("note",)), [("/note", "a non-blank string", "the field is missing")], True, True
    ),
    # -- rubricVersion ------------------------------------------------------------
    "rubric-v2": Bad(
        judge(rv='"deep-judge-v2"'),
        [("/rubricVersion", 'exactly "deep-judge-v1"', '"deep-judge-v2"')],
        True,
        True,
    ),
    "rubric-number": Bad(
        judge(rv="1"), [("/rubricVersion", 'exactly "deep-judge-v1"', "1")], True, True
    ),
    "rubric-missing": Bad(
        judge(drop=("rubricVersion",)),
        [("/rubricVersion", 'exactly "deep-judge-v1"', "the field is missing")],
        True,
        True,
    ),
    # -- what only the strict reader sees ---------------------------------------------
    "duplicate-top-key": Bad(
        judge(top_extra='"note": "a second note"'),
        [("/note", 'the key "note" at most once', "a duplicate key")],
        False,
        False,
    ),
    "duplicate-nested-key": Bad(
        judge(scores_extra='"completeness": 2'),
        [("/scores/completeness", 'the key "completeness" at most once', "a duplicate key")],
        False,
        False,
    ),
    "nan": Bad(judge(fa="NaN"), [(S, "a finite JSON number", "NaN")], True, True),
    "infinity": Bad(judge(fa="Infinity"), [(S, "a finite JSON number", "Infinity")], True, True),
    "minus-infinity": Bad(
        judge(fa="-Infinity"), [(S, "a finite JSON number", "-Infinity")], True, True
    ),
    "nan-in-note": Bad(
        judge(note="NaN"), [("/note", "a non-blank string", "NaN (not valid JSON)")], True, True
    ),
    "fraction-in-note": Bad(
        judge(note="4.0"), [("/note", "a non-blank string", "4.0")], True, True
    ),
    "fraction-in-unknowns": Bad(
        judge(unknowns='["toolEfficiency", 1.0]'),
        [("/unknowns/1", "one of the dimension names", "1.0")],
        True,
        True,
    ),
    "nan-in-extra-field": Bad(
        judge(top_extra='"x": [NaN, 1.5]'),
        [("/x", "no such field", 'an extra field "x"')],
        True,
        True,
    ),
    "top-array": Bad("[]", [("", "a JSON object with scores", "an empty array []")], True, True),
    "top-string": Bad('"judge"', [("", "a JSON object with scores", '"judge"')], True, True),
    "top-number": Bad("4", [("", "a JSON object with scores", "4")], True, True),
    "top-null": Bad("null", [("", "a JSON object with scores", "null")], True, True),
    "trailing-data": Bad(
        judge() + "\n{}",
        [("", "exactly one JSON value", "more data after the JSON value")],
        None,
        None,
    ),
    "trailing-garbage": Bad(
        judge() + " x", [("", "exactly one JSON value", "line 1 column")], None, None
    ),
    "empty-text": Bad("", [("", "a JSON document", "empty text")], None, None),
    "whitespace-text": Bad("\n  \n", [("", "a JSON document", "only whitespace")], None, None),
    "invalid-json": Bad(
        judge()[:-1], [("", "a JSON document", "invalid JSON: Expecting ',' delimiter")], None, None
    ),
    "python-dict": Bad("{'scores': {}}", [("", "a JSON document", "invalid JSON")], None, None),
    "byte-order-mark": Bad("\ufeff" + judge(), [("", "JSON text", "byte-order mark")], None, None),
    "too-deep": Bad(
        judge(note="[" * 100 + "]" * 100),
        [("", "JSON nested at most 64 levels deep", "nesting 101 levels deep")],
        True,
        True,
    ),
    # -- several at once, reported in document order -------------------------------------
    "several": Bad(
        judge(fa="4.0", te='"unknown"', note='""', top_extra='"x": 1'),
        [
            (S, "whole number", "4.0"),
            ("/scores/toolEfficiency", SCORE_EXPECTED, '"unknown"'),
            ("/note", "a non-blank string", '""'),
            ("/x", "no such field", 'an extra field "x"'),
        ],
        True,
        True,
    ),
}


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_valid(text: str) -> None:
    check = check_judge_text(text)
    assert check.valid, check.error_lines()
    assert check.issues == []
    assert check.raw == text
    assert isinstance(check.judgment, Judgment)
    assert check.judgment.model_dump() == json.loads(text)


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_invalid(case: Bad) -> None:
    check = check_judge_text(case.text)
    assert not check.valid
    assert check.judgment is None
    assert check.raw == case.text
    got = [(i.pointer, i.expected, i.found) for i in check.issues]
    assert [g[0] for g in got] == [c[0] for c in case.issues], check.error_lines()
    for (_, expected, found), issue in zip(case.issues, check.issues, strict=True):
        assert expected in issue.expected, issue
        assert found in issue.found, issue
        assert issue.message() == f"at {issue.pointer or '(top level)'}: expected " + (
            f"{issue.expected}; found {issue.found}"
        )


def _plain(text: str) -> Any:
    # What any ordinary JSON reader makes of the text (last duplicate wins, NaN accepted).
    return json.loads(text)


SCHEMA_CASES = {k: c for k, c in BAD.items() if c.schema_rejects is not None}


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_schema_file_alone_accepts_valid(text: str) -> None:
    assert list(Draft202012Validator(SCHEMA).iter_errors(_plain(text))) == []


@pytest.mark.parametrize("case", SCHEMA_CASES.values(), ids=SCHEMA_CASES.keys())
def test_schema_file_alone_on_invalid(case: Bad) -> None:
    # True: the schema expresses this rule itself (the unknowns rule included).
    # False: only the strict reader can see it (duplicates, 4.0 / 1e0 are integers to a schema).
    assert (not Draft202012Validator(SCHEMA).is_valid(_plain(case.text))) is case.schema_rejects


def test_schema_file_is_a_valid_2020_12_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_model_accepts_valid(text: str) -> None:
    Judgment.model_validate(_plain(text))


MODEL_CASES = {k: c for k, c in BAD.items() if c.model_rejects is not None}


@pytest.mark.parametrize("case", MODEL_CASES.values(), ids=MODEL_CASES.keys())
def test_model_on_invalid(case: Bad) -> None:
    try:
        Judgment.model_validate(_plain(case.text))
    except ValidationError:
        rejected = True
    else:
        rejected = False
    assert rejected is case.model_rejects


def test_every_dimension_is_checked() -> None:
    # The table uses factualAccuracy; each of the others has its own rule too.
    for index, dim in enumerate(DIMENSIONS):
        values = ["4", "5", "3", "4", "2"]
        values[index] = "4.0"
        check = check_judge_text(judge(*values, unknowns="[]"))
        assert [i.pointer for i in check.issues] == [f"/scores/{dim}"]
        values[index] = '"Unknown"'
        check = check_judge_text(judge(*values, unknowns="[]"))
        assert [i.pointer for i in check.issues] == ["/unknowns"]
        assert f'"{dim}" listed in unknowns' in check.issues[0].expected


def test_data_is_kept_for_an_invalid_but_parsed_document() -> None:
    check = check_judge_text(judge(fa="6"))
    assert check.data["scores"]["factualAccuracy"] == 6
    assert check_judge_text("{").data is None


# -- fallback ----------------------------------------------------------------------


def test_fallback_is_valid() -> None:
    fallback = fallback_judgment("  The model never wrote judge.json.  ")
    check = check_judge_text(fallback.to_json())
    assert check.valid, check.error_lines()
    assert check.judgment == fallback
    assert set(fallback.scores.model_dump().values()) == {"Unknown"}
    assert fallback.unknowns == list(DIMENSIONS)
    assert fallback.note == "The model never wrote judge.json."
    assert fallback.rubricVersion == RUBRIC_VERSION


@pytest.mark.parametrize("note", ["", "   \n"])
def test_fallback_with_blank_note_still_valid(note: str) -> None:
    assert check_judge_text(fallback_judgment(note).to_json()).valid


# -- files --------------------------------------------------------------------------


def test_file_valid(tmp_path: Path) -> None:
    path = tmp_path / "judge.json"
    path.write_text(judge(), encoding="utf-8")
    assert check_judge_file(path).valid


@pytest.mark.parametrize(
    ("make", "expected", "found"),
    [
        pytest.param(lambda p: None, "a judge.json file at", "no such file", id="missing"),
        pytest.param(lambda p: p.mkdir(), "a file at", "a directory", id="directory"),
        pytest.param(
            lambda p: p.write_bytes(b'{"note": "caf\xe9"}'),
            "UTF-8 text",
            "not UTF-8 at offset 13",
            id="latin-1",
        ),
        pytest.param(
            lambda p: p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00"),
            "UTF-8 text",
            "not UTF-8 at offset 0",
            id="binary",
        ),
        pytest.param(
            lambda p: p.write_bytes(b" " * (MAX_JUDGE_BYTES + 1)),
            "at most 256 KiB",
            f"larger than {MAX_JUDGE_BYTES} bytes",
            id="oversized",
        ),
        pytest.param(
            lambda p: p.write_bytes(b""), "a JSON document", "empty text", id="empty-file"
        ),
        pytest.param(
            lambda p: p.symlink_to(p.parent / "nowhere"),
            "a judge.json file at",
            "no such file",
            id="dangling-symlink",
        ),
    ],
)
def test_file_invalid(tmp_path: Path, make: Any, expected: str, found: str) -> None:
    path = tmp_path / "judge.json"
    make(path)
    check = check_judge_file(path)
    assert not check.valid
    assert [i.pointer for i in check.issues] == [""]
    assert expected in check.issues[0].expected
    assert found in check.issues[0].found
    if expected.endswith(" at"):
        assert str(path) in check.issues[0].expected


def test_file_exactly_at_the_cap_is_read(tmp_path: Path) -> None:
    text = judge()
    path = tmp_path / "judge.json"
    path.write_text(text + " " * (MAX_JUDGE_BYTES - len(text)), encoding="utf-8")
    assert path.stat().st_size == MAX_JUDGE_BYTES
    assert check_judge_file(path).valid


def test_file_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    check = check_judge_file(tmp_path / "plain" / "judge.json")
    assert not check.valid
    assert "a readable file at" in check.issues[0].expected
    assert "Not a directory" in check.issues[0].found


# -- atomic write ------------------------------------------------------------------


def test_write_creates(tmp_path: Path) -> None:
    target = tmp_path / "judge.json"
    write_judgment_atomic(target, judge())
    assert target.read_text(encoding="utf-8") == judge()
    assert os.listdir(tmp_path) == ["judge.json"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_write_replaces(tmp_path: Path) -> None:
    target = tmp_path / "judge.json"
    target.write_text("old", encoding="utf-8")
    text = fallback_judgment("replaced").to_json()
    write_judgment_atomic(target, text)
    assert target.read_text(encoding="utf-8") == text
    assert os.listdir(tmp_path) == ["judge.json"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda d: (d / "file").write_text("x") and d / "file" / "judge.json",
            id="parent-is-a-file",
        ),
        pytest.param(lambda d: d / "absent" / "judge.json", id="parent-missing"),
    ],
)
def test_write_error_names_the_path(tmp_path: Path, make: Any) -> None:
    target: Path = make(tmp_path)
    with pytest.raises(WriteError) as info:
        write_judgment_atomic(target, judge())
    assert str(target) in str(info.value)
    assert info.value.data["path"] == str(target)
    assert info.value.exit_code == 1


def test_write_failure_leaves_no_temp_file(tmp_path: Path) -> None:
    # The rename fails (a directory is in the way): the temp file must not linger.
    target = tmp_path / "judge.json"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(WriteError) as info:
        write_judgment_atomic(target, judge())
    assert str(target) in str(info.value)
    assert sorted(os.listdir(tmp_path)) == ["judge.json"]
    assert (target / "keep").read_text() == "x"


# -- the fast path and the layers agree on generated documents -------------------------------

_GOOD_SCORES = st.one_of(st.integers(0, 5), st.just("Unknown"))
_BAD_SCORES = st.one_of(
    st.integers(-2, 7).filter(lambda v: not 0 <= v <= 5),
    st.sampled_from(["unknown", "Unknown ", "4", "", True, False, None, [], {}]),
)


def _bent(draw: st.DrawFn, good: Any, bad: Any) -> Any:
    # Mostly right, sometimes wrong: most documents are valid or wrong in one place.
    return draw(bad) if draw(st.integers(0, 11)) == 0 else draw(good)


@st.composite
def near_judgments(draw: st.DrawFn) -> Any:
    """Documents close to the contract: each field kept, dropped, or bent a little."""
    scores: Any = {d: _bent(draw, _GOOD_SCORES, _BAD_SCORES) for d in SCORES}
    if draw(st.integers(0, 11)) == 0:
        scores[draw(st.sampled_from(["clarity", "Completeness"]))] = draw(_GOOD_SCORES)
    if draw(st.integers(0, 11)) == 0:
        scores.pop(draw(st.sampled_from(SCORES)))
    plain = [d for d in SCORES if scores.get(d) == "Unknown"]
    unknowns = _bent(
        draw,
        st.permutations(plain).map(list),
        st.one_of(
            st.lists(st.sampled_from([*SCORES, "speed", 3]), max_size=6),
            st.permutations(plain).map(lambda u: [*u, *u[:1]]),
            st.sampled_from(["toolEfficiency", None, {}]),
        ),
    )
    doc: dict[str, Any] = {
        "scores": _bent(draw, st.just(scores), st.sampled_from([[], None, "x"])),
        "unknowns": unknowns,
        "note": _bent(
            draw,
            st.text(min_size=1, max_size=8).filter(lambda t: not t.isspace()),
            st.one_of(st.text(" \t\n\x0b\x1c\u00a0\u2003", max_size=3), st.sampled_from([None, 5])),
        ),
        "rubricVersion": _bent(
            draw, st.just("deep-judge-v1"), st.sampled_from(["deep-judge-v2", "", 1, None])
        ),
    }
    if draw(st.integers(0, 11)) == 0:
        doc.pop(draw(st.sampled_from(list(doc))))
    if draw(st.integers(0, 11)) == 0:
        doc["extra"] = 1
    return doc


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_judgments())
def test_layers_agree_on_generated_documents(doc: Any) -> None:
    # Ints only (no floats to tell apart), so the strict reader adds nothing here.
    schema_ok = Draft202012Validator(SCHEMA).is_valid(doc)
    try:
        Judgment.model_validate(doc)
        model_ok = True
    except ValidationError:
        model_ok = False
    check = check_judge_text(json.dumps(doc))
    assert check.valid is schema_ok is model_ok, check.error_lines()
    # The fast path may only ever say "valid" where the schema does.
    if _plainly_valid(doc):
        assert schema_ok
    if not check.valid:
        assert check.issues and all(i.expected and i.found for i in check.issues)


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_valid_documents_take_the_fast_path(text: str) -> None:
    assert _plainly_valid(json.loads(text))


def test_a_valid_check_imports_neither_pydantic_nor_jsonschema(tmp_path: Path) -> None:
    # Start-up of `judge validate` / `judge show`: a plainly valid file needs neither.
    path = tmp_path / "judge.json"
    path.write_text(judge(), encoding="utf-8")
    code = (
        "import sys; from pathlib import Path; "
        "from harness.contract.judgment import check_judge_file; "
        f"assert check_judge_file(Path({str(path)!r})).valid; "
        "print(sorted(m for m in ('pydantic', 'jsonschema') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
