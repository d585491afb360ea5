"""The commands that call no model never import the anthropic SDK.

Importing the SDK costs about a second of start-up (1.3–1.7 s against 0.2 s for `judge
show` on this project's machine, measured by bench/bench_load.py), so it is imported only
where a client is built. An import chain through the audit's package (the record's types
→ `harness.audit` → the client resolver → the SDK's module) had brought it back into
`show`, `report`, `cite --offline` and `compare`; this keeps every such command free of it,
through the real CLI in a fresh interpreter.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES

PROBE = """
import atexit, os, runpy, sys
atexit.register(lambda: os.write(2, f"\\nSDK={'anthropic' in sys.modules}\\n".encode()))
sys.argv = ["judge", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__")
"""

COMMANDS = [
    ["validate", "{s}/judge.json"],
    ["show", "{s}", "--json"],
    ["show", "{s}"],
    ["render", "{s}"],
    ["report", "{s}"],
    ["cite", "{s}", "--offline"],
    ["compare", "{root}", "{root}"],
    ["agree", str(FIXTURES / "labelled" / "labels.jsonl"), "--root", "{root}"],
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding one judged session (replayed, so no key and no network)."""
    root = tmp_path_factory.mktemp("no-sdk") / "root"
    session = root / "showcase"
    shutil.copytree(FIXTURES / "showcase", session)
    replays = FIXTURES / "replays"
    replay = ["--replay", str(replays / "showcase.jsonl")]
    cite_replay = ["--cite-replay", str(replays / "showcase.cite.jsonl")]
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "run",
            str(session),
            "-q",
            "--fetch",
            "stored",
            *replay,
            *cite_replay,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    return root


def _id(command: list[str]) -> str:
    return " ".join([command[0], *(a for a in command[1:] if a.startswith("--"))])


@pytest.mark.parametrize("command", COMMANDS, ids=_id)
def test_a_command_that_calls_no_model_does_not_import_the_sdk(
    root: Path, command: list[str], tmp_path: Path
) -> None:
    args = [a.format(s=root / "showcase", root=root) for a in command]
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode in (0, 1), ran.stderr  # 1: a finding of the command, not a crash
    assert "SDK=False" in ran.stderr.splitlines(), ran.stderr[-2000:]


def test_the_artifacts_readers_load_neither_the_audit_nor_the_tools() -> None:
    # run.json's types hold the audit's record and the tool call: both live in modules of
    # their own, and the audit's package exports on first use, so a reader of run.json
    # (`show`, the page, the merge) loads no engine, no checks, no tools and no client.
    code = (
        "import sys, harness.artifacts.read; "
        "print(sorted(m for m in sys.modules if m.startswith(('harness.audit.core', "
        "'harness.cite', 'harness.agent.tools', 'harness.model', 'anthropic'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_audit_package_exports_each_name_from_its_home() -> None:
    import importlib

    import harness.audit as audit

    assert set(audit.__all__) == set(audit._HOMES)
    for name in audit.__all__:
        home = importlib.import_module(audit._HOMES[name])
        assert getattr(audit, name) is getattr(home, name), name
        assert name in dir(audit)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = audit.nothing_here


FORMATS = ("harness.artifacts.record", "harness.audit.report")
FORMATS_PROBE = PROBE.replace(
    "'anthropic' in sys.modules",
    f"sorted(m for m in sys.modules if m in {FORMATS!r})",
).replace("SDK=", "FORMATS=")


@pytest.mark.parametrize("judged", [False, True], ids=["unjudged", "judged"])
def test_show_builds_the_artifact_formats_only_for_a_file_to_check(
    root: Path, tmp_path: Path, judged: bool
) -> None:
    # The formats' pydantic models are most of what `judge show` would pay over reading the
    # session (bench_load's start-up row): a session no run has judged has no run.json or
    # citations.json to check against them, so they are not built; one that has, is.
    session = tmp_path / "s"
    shutil.copytree(root / "showcase", session)
    if not judged:
        shutil.rmtree(session / ".judge")
    ran = subprocess.run(
        [sys.executable, "-c", FORMATS_PROBE, "show", str(session), "--json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert ran.returncode in (0, 1), ran.stderr
    want = sorted(FORMATS) if judged else []
    assert f"FORMATS={want}" in ran.stderr.splitlines(), ran.stderr[-2000:]
