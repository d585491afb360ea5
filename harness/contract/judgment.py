"""judge.json: the strict check, the pydantic mirror, the advisory fallback, atomic writes.

`check_judge_text` is the one check used everywhere: `judge validate`,
`judge show`, the agent's Write tool and the final check of a run. A plainly valid
document needs neither pydantic nor jsonschema (start-up time): `Judgment` and
`Scores` are re-exported from `harness.contract.model` and loaded on first use.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.contract.rubric import DIMENSIONS, RUBRIC_VERSION, UNKNOWN
from harness.errors import WriteError
from harness.fs.confined import ConfinedError, real_path
from harness.fs.files import NotRegularFile, open_regular
from harness.fs.names import JUDGE_FILE
from harness.resources import schema_path
from harness.text.jsonstrict import Issue, describe, loads_strict, pointer_join

if TYPE_CHECKING:
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

    from harness.contract.model import Judgment as Judgment
    from harness.contract.model import Score as Score
    from harness.contract.model import Scores as Scores
    from harness.fs.artifacts import ArtifactDir
    from harness.fs.confined import SessionReader

TOP_FIELDS = ("scores", "unknowns", "note", "rubricVersion")
MAX_JUDGE_BYTES = 256 * 1024
SCORE_EXPECTED = 'an integer from 0 to 5 or the exact string "Unknown"'
# The schema's note pattern, "\\S", as Python's re reads it (jsonschema uses re too).
_NON_SPACE = re.compile(r"\S")


def __getattr__(name: str) -> Any:
    # The pydantic mirror is loaded on first use: see harness/contract/model.py.
    if name in ("Judgment", "Scores", "Score"):
        from harness.contract import model as judgment_model

        return getattr(judgment_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fallback_judgment(note: str) -> Judgment:
    """The advisory all-Unknown judgment, used when no model judgment can stand."""
    from harness.contract.model import Judgment, Scores

    return Judgment(
        scores=Scores.model_validate(dict.fromkeys(DIMENSIONS, UNKNOWN)),
        unknowns=list(DIMENSIONS),
        note=note.strip() or "No judgment could be made.",
        rubricVersion=RUBRIC_VERSION,
    )


def score_text(judgment: Judgment) -> str:
    """The five scores in rubric order: `factualAccuracy 4, citationAccuracy 5, ...`."""
    scores = judgment.scores.model_dump()
    return ", ".join(f"{d} {scores[d]}" for d in DIMENSIONS)


@dataclass(slots=True)
class JudgeCheck:
    """The outcome of checking one judge.json text; keeps the raw text."""

    valid: bool
    issues: list[Issue] = field(default_factory=list)
    raw: str | None = None
    data: Any = None
    # The bytes checked, as "sha256:<hex>": what a sealed run record vouches for (None when
    # the file could not be read, or is over the size limit).
    sha256: str | None = None
    # Why the session's judge.json was not read, when it is there but refused or
    # unreadable (a link, a special file, permissions); None when it was read or is absent.
    unread: str | None = None
    _judgment: Judgment | None = field(default=None, repr=False, compare=False)

    @property
    def judgment(self) -> Judgment | None:
        """The pydantic mirror of a valid document (None if invalid), built on first use."""
        if self.valid and self._judgment is None:
            from harness.contract.model import Judgment

            self._judgment = Judgment.model_validate(self.data)
        return self._judgment

    def error_lines(self) -> list[str]:
        return [issue.message() for issue in self.issues]


@cache
def _validator() -> Validator:
    # jsonschema is imported here, not at module import: CLI start-up matters.
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_path("judge.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def check_judge_text(text: str) -> JudgeCheck:
    """Strict check of a judge.json text. Every issue names its JSON pointer."""
    strict = loads_strict(text)
    if not strict.parsed:
        return JudgeCheck(valid=False, issues=strict.issues, raw=text)
    data = strict.value
    if not strict.issues and _plainly_valid(data):
        return JudgeCheck(valid=True, raw=text, data=data)
    issues = _in_document_order(_one_per_spot(strict.issues, _schema_issues(data)))
    if issues:
        return JudgeCheck(valid=False, issues=issues, raw=text, data=data)
    return JudgeCheck(valid=True, raw=text, data=data)


def _plainly_valid(data: Any) -> bool:
    """A document that is valid beyond doubt, decided without jsonschema.

    Importing jsonschema is a third of `judge show`'s start-up, and the round-trip the
    brief asks for is nearly always a valid file. So a plain document (exactly the
    contract's shape, ints that are ints) skips the schema; anything else, however
    slightly off, goes through the schema, which stays the authority and the explainer.
    Tests hold this to the schema: it may only say True where the schema says valid.
    """
    if type(data) is not dict or data.keys() != set(TOP_FIELDS):
        return False
    scores, unknowns, note = data["scores"], data["unknowns"], data["note"]
    if type(scores) is not dict or scores.keys() != set(DIMENSIONS):
        return False
    for value in scores.values():
        if not (value == UNKNOWN and type(value) is str) and not (
            type(value) is int and 0 <= value <= 5
        ):
            return False
    if type(unknowns) is not list or any(type(u) is not str for u in unknowns):
        return False
    expected = {d for d in DIMENSIONS if scores[d] == UNKNOWN}
    return (
        len(unknowns) == len(expected)
        and set(unknowns) == expected
        and type(note) is str
        and _NON_SPACE.search(note) is not None
        and type(data["rubricVersion"]) is str
        and data["rubricVersion"] == RUBRIC_VERSION
    )


def check_judge_file(path: Path) -> JudgeCheck:
    """Read and check a judge.json file an operator names; unreadable files are issues,
    not exceptions. The session's own judge.json: `check_session_judge`."""
    try:
        with open_regular(path) as handle:
            blob = handle.read(MAX_JUDGE_BYTES + 1)
    except FileNotFoundError:
        return JudgeCheck(False, [Issue("", f"a judge.json file at {path}", "no such file")])
    except IsADirectoryError:
        return JudgeCheck(False, [Issue("", f"a file at {path}", "a directory")])
    except NotRegularFile as exc:
        return JudgeCheck(False, [Issue("", f"a regular file at {path}", str(exc.strerror))])
    except OSError as exc:
        return JudgeCheck(False, [Issue("", f"a readable file at {path}", exc.strerror or "")])
    return _check_blob(blob)


def check_session_judge(
    folder: Path, name: str = JUDGE_FILE, reader: SessionReader | None = None
) -> JudgeCheck:
    """Check the session's own judge.json, read through the confined reader (`reader`,
    the caller's, left open, if given).

    A symlink, a hard link (its other name may be a file outside the session) or a
    special file planted as judge.json is an issue; what it leads to is never read.
    """
    from harness.fs.confined import ConfinedError, reading  # not on validate's path

    path = folder / name
    try:
        with reading(folder, reader) as opened:
            blob = opened.read_bytes(name, MAX_JUDGE_BYTES + 1).data
    except ConfinedError as exc:
        unread = None if exc.why in ("missing", "notdir") else exc.message
        if exc.why == "missing":
            found = [Issue("", f"a judge.json file at {path}", "no such file")]
        elif exc.why == "dir":
            found = [Issue("", f"a file at {path}", "a directory")]
        else:
            found = [Issue("", f"a regular file at {path}", exc.reason)]
        return JudgeCheck(False, found, unread=unread)
    return _check_blob(blob)


def _check_blob(blob: bytes) -> JudgeCheck:
    if len(blob) > MAX_JUDGE_BYTES:
        found = f"a file larger than {MAX_JUDGE_BYTES} bytes (not read further)"
        return JudgeCheck(False, [Issue("", "a judge.json of at most 256 KiB", found)])
    sha = "sha256:" + hashlib.sha256(blob).hexdigest()
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        found = f"bytes that are not UTF-8 at offset {exc.start}"
        return JudgeCheck(False, [Issue("", "UTF-8 text", found)], sha256=sha)
    return replace(check_judge_text(text), sha256=sha)


def write_judgment_atomic(
    path: Path,
    text: str,
    *,
    temp_dir: Path | None = None,
    artifacts: ArtifactDir | None = None,
) -> None:
    """Write via a temp file and rename: never a torn file.

    With `artifacts` (a run's :class:`ArtifactDir`) the temp file is created in the
    artifact folder's descriptor and renamed into the session folder's descriptor, so
    neither folder swapped for a link mid-run can redirect the write. Otherwise the temp
    file goes in `temp_dir` (a folder on the same file system), else beside `path`.
    The file gets mode 0o666 less the umask, like every file the run writes.
    """
    if artifacts is not None:
        try:
            parent = Path(real_path(path.parent))
        except ConfinedError as exc:
            raise WriteError(f"cannot write {path}: {exc.reason}", path=str(path)) from None
        if parent != artifacts.session:
            raise ValueError(f"{path} is not in the session folder {artifacts.session}")
        try:
            artifacts.publish(path.name, text.encode("utf-8"))
        except OSError as exc:
            raise WriteError(
                f"cannot write {path}: {exc.strerror or exc}; check free space and permissions",
                path=str(path),
            ) from exc
        return
    from harness.fs.artifacts import FILE_MODE

    folder = temp_dir if temp_dir is not None else path.parent
    try:
        tmp_name = str(folder / f".judge.{secrets.token_hex(6)}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp_name, flags, FILE_MODE)
    except OSError as exc:
        raise WriteError(
            f"cannot write {path}: {exc.strerror or exc}; make the session folder writable",
            path=str(path),
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
        _sync_folder(path.parent)  # where the new entry is (the temp folder may differ)
    except OSError as exc:
        Path(tmp_name).unlink(missing_ok=True)
        raise WriteError(
            f"cannot write {path}: {exc.strerror or exc}; check free space and permissions",
            path=str(path),
        ) from exc


def _sync_folder(folder: Path) -> None:
    # The rename is durable only once the folder entry itself reaches the disk.
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _one_per_spot(reader: list[Issue], schema: list[Issue]) -> list[Issue]:
    """Merge the reader's value issues (4.0, NaN) with the schema's, one complaint a spot.

    At a score, "write 4, not 4.0" says more than the schema's "integer or Unknown".
    Anywhere else the schema knows what belongs there: `"note": 4.0` wants a string
    and `"confidence": 0.9` is a field that should not exist, not a badly written number.
    """
    score_spots = {pointer_join("/scores", d) for d in DIMENSIONS}
    schema_spots = {issue.pointer for issue in schema}

    def covered(pointer: str) -> bool:
        return any(pointer == s or pointer.startswith(s + "/") for s in schema_spots)

    kept = [
        issue
        for issue in reader
        if issue.rule != "value" or issue.pointer in score_spots or not covered(issue.pointer)
    ]
    replaced = {i.pointer for i in reader if i.rule == "value" and i.pointer in score_spots}
    return kept + [issue for issue in schema if issue.pointer not in replaced]


def _in_document_order(issues: list[Issue]) -> list[Issue]:
    order = {name: index for index, name in enumerate(TOP_FIELDS + DIMENSIONS)}

    def key(issue: Issue) -> tuple[int, ...]:
        parts = issue.pointer.split("/")[1:]
        return tuple(order.get(p, int(p) + 100 if p.isdigit() else 99) for p in parts)

    return sorted(issues, key=key)


def _schema_issues(data: Any) -> list[Issue]:
    issues: list[Issue] = []
    for error in _validator().iter_errors(data):
        issues.extend(_translate(error, data))
    # One schema failure can surface twice (e.g. through oneOf); keep the first.
    unique: dict[tuple[str, str], Issue] = {}
    for issue in issues:
        unique.setdefault((issue.pointer, issue.expected), issue)
    return list(unique.values())


def _translate(error: ValidationError, data: Any) -> list[Issue]:
    pointer = "".join(pointer_join("", p) for p in error.absolute_path)
    kind = error.validator
    path = list(error.absolute_path)
    schema_path = list(error.schema_path)
    if schema_path and schema_path[0] == "allOf":
        return [_unknowns_rule(error, data)]
    if kind == "type" and not path:
        return [
            Issue("", "a JSON object with scores, unknowns, note, rubricVersion", describe(data))
        ]
    if kind == "additionalProperties":
        allowed = _allowed_at(path)
        instance = error.instance if isinstance(error.instance, dict) else {}
        extras = [k for k in instance if k not in allowed]
        return [
            Issue(
                pointer_join(pointer, k),
                f"no such field (allowed here: {', '.join(allowed)})",
                f"an extra field {json.dumps(k)}",
            )
            for k in extras
        ]
    if kind == "required":
        allowed = _allowed_at(path)
        missing = [
            k for k in allowed if isinstance(error.instance, dict) and k not in error.instance
        ]
        return [
            Issue(
                pointer_join(pointer, k),
                _expected_for([*path, k]),
                "nothing (the field is missing)",
            )
            for k in missing
        ]
    if kind == "type" and path == ["scores"]:
        return [
            Issue(pointer, "an object with the five dimension scores", describe(error.instance))
        ]
    if len(path) == 2 and path[0] == "scores":
        return [Issue(pointer, SCORE_EXPECTED, _found_score(error.instance))]
    if path and path[0] == "unknowns":
        if kind == "uniqueItems":
            return [Issue(pointer, "each dimension listed at most once", describe(error.instance))]
        if len(path) == 2:
            return [
                Issue(pointer, f"one of the dimension names {_names()}", describe(error.instance))
            ]
        return [Issue(pointer, "an array of dimension names", describe(error.instance))]
    if path == ["note"]:
        return [Issue(pointer, "a non-blank string: a short rationale", describe(error.instance))]
    if path == ["rubricVersion"]:
        return [Issue(pointer, f'exactly "{RUBRIC_VERSION}"', describe(error.instance))]
    return [Issue(pointer, error.message, describe(error.instance))]


def _unknowns_rule(error: ValidationError, data: Any) -> Issue:
    # allOf/<i>/then/(then|else)/...: the cross-field rule for dimension i, which
    # the schema applies only once scores holds a valid score for that dimension.
    branch = error.schema_path[3] if len(error.schema_path) > 3 else ""
    dimension = DIMENSIONS[int(error.schema_path[1])]
    found = describe(data.get("unknowns")) if isinstance(data, dict) else describe(data)
    if branch == "then":
        expected = f'"{dimension}" listed in unknowns, since it is scored "Unknown"'
    else:
        scores = data.get("scores") if isinstance(data, dict) else None
        score = scores.get(dimension) if isinstance(scores, dict) else None
        expected = (
            f'"{dimension}" not listed in unknowns, since its score is {describe(score)}, '
            'not "Unknown"'
        )
    return Issue("/unknowns", expected, found)


def _allowed_at(path: list[str | int]) -> tuple[str, ...]:
    return DIMENSIONS if path == ["scores"] else TOP_FIELDS


def _expected_for(path: list[str | int]) -> str:
    if len(path) == 2 and path[0] == "scores":
        return SCORE_EXPECTED
    return {
        "scores": "an object with the five dimension scores",
        "unknowns": 'an array of the dimensions scored "Unknown" (empty if none)',
        "note": "a non-blank string: a short rationale",
        "rubricVersion": f'exactly "{RUBRIC_VERSION}"',
    }.get(str(path[-1]), "this field")


def _found_score(value: Any) -> str:
    text = describe(value)
    if isinstance(value, bool):
        return f"{text} (a boolean)"
    if isinstance(value, str) and value.strip().lower() == "unknown" and value != UNKNOWN:
        return f'{text} (write exactly "Unknown": case and spaces matter)'
    if isinstance(value, str):
        return f"{text} (a string)"
    return text


def _names() -> str:
    return ", ".join(DIMENSIONS)
