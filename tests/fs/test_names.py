"""Every file name under a session is said once in harness/: in harness/fs/names.py."""

from __future__ import annotations

import ast
from pathlib import Path

from harness.fs import names

HARNESS = Path(names.__file__).resolve().parent.parent
HOME = Path(names.__file__).resolve()
# The file names only the artifacts use (their spelling says they are files).
FILE_NAMES = {
    names.ARTIFACT_DIR,
    names.JUDGE_FILE,
    names.RUN_FILE,
    names.CITATIONS_FILE,
    names.PREVIOUS_JUDGE_FILE,
    names.PREVIOUS_CITATIONS_FILE,
    names.PAGE_FILE,
}
# Every name, the plain words included ("samples", "sources", "lock" are also words of
# the formats, so only a module constant holding one is counted for them).
EVERY_NAME = FILE_NAMES | {names.SAMPLES_DIR, names.CACHE_DIR, names.LOCK_FILE}


def _modules() -> list[Path]:
    return sorted(HARNESS.rglob("*.py"))


def _literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def test_each_artifact_file_name_is_a_literal_once_in_harness() -> None:
    seen: dict[str, list[str]] = {name: [] for name in FILE_NAMES}
    for path in _modules():
        for value in _literals(path):
            if value in seen:
                seen[value].append(str(path.relative_to(HARNESS)))
    assert {name: where for name, where in seen.items() if where != ["fs/names.py"]} == {}


def test_no_module_spells_an_artifact_path_of_its_own() -> None:
    """`".judge/run.json"` is the same name again: paths are made by `artifact_rel`."""
    paths = {names.artifact_rel(name) for name in EVERY_NAME}
    found = [
        f"{path.relative_to(HARNESS)}: {value}"
        for path in _modules()
        for value in _literals(path)
        if value in paths
    ]
    assert found == []


def test_no_other_module_defines_an_artifact_name() -> None:
    """A module constant holding a name (`CACHE_DIR = "sources"`) is a second home."""
    found: list[str] = []
    for path in _modules():
        if path == HOME:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign | ast.AnnAssign)
                and isinstance(node.value, ast.Constant)
                and node.value.value in EVERY_NAME
            ):
                found.append(f"{path.relative_to(HARNESS)}:{node.lineno}")
    assert found == []
