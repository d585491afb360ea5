"""The test tree mirrors the code: one folder per harness package, end-to-end, adversarial
and packaging tests in folders of their own, and the shared helpers in `tests.support`,
imported by name (no test imports conftest, none edits sys.path)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO

TESTS = REPO / "tests"
OWN_FOLDERS = {"e2e", "adversarial", "packaging", "support"}
TOP_FILES = {"__init__.py", "conftest.py"}


def _harness_packages() -> set[str]:
    return {p.parent.name for p in (REPO / "harness").glob("*/__init__.py")}


def _folders() -> list[Path]:
    return sorted(
        p
        for p in TESTS.iterdir()
        if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".")
    )


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_no_test_file_sits_at_the_top_of_tests() -> None:
    top = sorted(p.name for p in TESTS.glob("*.py"))
    assert set(top) == TOP_FILES, [name for name in top if name not in TOP_FILES]


def test_every_folder_is_a_harness_package_or_one_of_the_own_folders() -> None:
    allowed = _harness_packages() | OWN_FOLDERS
    strays = [p.name for p in _folders() if p.name not in allowed]
    assert not strays, f"folders under tests/ that are no harness package: {strays}"


def test_every_folder_is_a_package_and_support_holds_no_test() -> None:
    """An `__init__.py` in each folder names a module by its folder (tests.cli.test_exit),
    so two folders may hold files of one name; support/ holds helpers only."""
    missing = [_rel(p) for p in _folders() if not (p / "__init__.py").is_file()]
    assert not missing, missing
    assert (TESTS / "__init__.py").is_file()
    tests_in_support = sorted(_rel(p) for p in (TESTS / "support").rglob("test_*.py"))
    assert not tests_in_support, tests_in_support


def _sys_path_edits(tree: ast.AST) -> list[int]:
    """Lines that change the import path: `sys.path.<anything>(…)`, `sys.path = …`,
    `sys.path += …`, `site.addsitedir(…)`. Source text inside a string (a program a test
    runs in a child process) is that program's, not the test module's."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if _is_sys_path(target) or (
                node.func.attr == "addsitedir"
                and isinstance(target, ast.Name)
                and target.id == "site"
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            lines.extend(node.lineno for t in targets if _is_sys_path(t))
    return lines


def _is_sys_path(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _imports_conftest(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.split(".")[-1] == "conftest":
                lines.append(node.lineno)
        elif isinstance(node, ast.Import):
            lines.extend(node.lineno for a in node.names if a.name.split(".")[-1] == "conftest")
    return lines


def test_no_module_imports_conftest_or_edits_sys_path() -> None:
    found = []
    for path in _modules():
        tree = ast.parse(path.read_bytes(), filename=str(path))
        found += [f"{_rel(path)}:{n}: imports conftest" for n in _imports_conftest(tree)]
        found += [f"{_rel(path)}:{n}: edits sys.path" for n in _sys_path_edits(tree)]
    assert not found, "\n".join(found)


def test_the_checks_above_see_what_they_forbid() -> None:
    """The AST checks find each spelling they are meant to find, and not a child program."""
    bad = ast.parse(
        "import sys, site\n"
        "sys.path.insert(0, 'x')\n"
        "sys.path.append('x')\n"
        "sys.path = ['x']\n"
        "sys.path += ['x']\n"
        "site.addsitedir('x')\n"
        "from conftest import REPO\n"
        "from tests.conftest import REPO\n"
        "import conftest\n"
        "CHILD = 'import sys; sys.path.insert(0, sys.argv[1])'\n"
    )
    assert sorted(_sys_path_edits(bad)) == [2, 3, 4, 5, 6]
    assert sorted(_imports_conftest(bad)) == [7, 8, 9]


# Names the test files once gave their own hang bounds, now tests.support.waits' two.
HANG_BOUND_NAMES = {"WITHIN", "HANG", "GRACE", "HOLD", "HANG_SECONDS", "POLL"}


def test_the_hang_bounds_have_one_home() -> None:
    """How long a test waits for what must end, and how long a fake hangs, are said once
    (tests/support/waits.py); a module of its own would drift from it."""
    own = [
        f"{_rel(path)}:{node.lineno} {target.id}"
        for path in _modules()
        if path != TESTS / "support" / "waits.py"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id in HANG_BOUND_NAMES
    ]
    assert not own, f"define no hang bound here, import it from tests.support.waits: {own}"


def test_every_test_that_names_its_health_checks_keeps_too_slow_suppressed() -> None:
    """A `settings(suppress_health_check=[…])` replaces the profile's list (conftest's
    `too_slow`) instead of adding to it: a list without `too_slow` lets a loaded machine
    fail the test on the health check, so each such list names it again."""
    lost = [
        f"{_rel(path)}:{node.lineno}"
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "settings"
        for keyword in node.keywords
        if keyword.arg == "suppress_health_check"
        and "too_slow" not in {getattr(n, "attr", None) for n in ast.walk(keyword.value)}
    ]
    assert not lost, f"add HealthCheck.too_slow to suppress_health_check at {lost}"
