"""One home per concept, checked from the code: each class name is defined once in harness/,
one strict pydantic base, one time budget, one token usage, one terminal escaper."""

from __future__ import annotations

import ast
from collections import defaultdict

from tests.support.paths import REPO

HARNESS = REPO / "harness"
# Still twice, each with its slice of issue 30: the run record's ArtifactSet and the saved
# artifacts' reader (one typed reader per artifact); RunOptions' own forbid (the options).
PENDING_NAMES: set[str] = set()
PENDING_FORBID: set[str] = set()


def _modules() -> dict[str, ast.Module]:
    return {
        path.relative_to(HARNESS).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(HARNESS.rglob("*.py"))
    }


def _classes() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for rel, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(rel)
    return where


def test_each_class_name_is_defined_once() -> None:
    twice = {name: at for name, at in _classes().items() if len(at) > 1}
    assert set(twice) <= PENDING_NAMES, twice


def test_one_deadline_one_out_of_time_one_usage() -> None:
    classes = _classes()
    assert classes["Deadline"] == ["clock.py"]
    assert classes["OutOfTime"] == ["errors.py"]
    assert classes["Usage"] == ["usage.py"]
    assert "TokenUsage" not in classes and "TokenTotals" in classes  # run.json's: Usage + sum


def test_one_strict_base() -> None:
    """`extra="forbid"` is said once: every record derives from harness.strict."""
    said = [
        rel
        for rel, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword)
        and node.arg == "extra"
        and isinstance(node.value, ast.Constant)
        and node.value.value == "forbid"
    ]
    assert set(said) - PENDING_FORBID == {"strict.py"}, said


def test_one_terminal_escaper() -> None:
    """No module but harness/text/terminal.py defines a function that escapes for a
    terminal (the page's `clean` is HTML's, the prompt's `escape_controls` the model's)."""
    names = {"safe", "printable", "one_line", "escape"}
    defined = [
        (rel, node.name)
        for rel, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name in names
    ]
    assert {rel for rel, _ in defined} == {"text/terminal.py"}, defined
