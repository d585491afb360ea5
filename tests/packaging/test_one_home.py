"""One home per concept, checked from the code: each class name is defined once in harness/,
one strict pydantic base, one time budget, one token usage, one terminal escaper."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

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


def _import_graph() -> dict[str, set[str]]:
    """harness's modules and the harness modules each imports: at the top, inside a
    function (lazy) or under TYPE_CHECKING alike, read from the syntax tree."""
    modules: dict[str, Path] = {}
    for path in HARNESS.rglob("*.py"):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package[: len(package) - node.level + 1] + ([base] if base else [])
                    )
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
                    break
    return graph


def test_no_import_circle_in_harness() -> None:
    """Issue 30: no module of harness/ reaches itself through imports, lazy and
    TYPE_CHECKING ones included (strongly connected components of the import graph)."""
    graph = _import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part: list[str] = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []
