"""A built wheel, installed outside the checkout, runs every command.

The wheel is built once for this module (no build isolation: hatchling is a test extra, so no
network is needed) and installed with ``--no-deps --no-index`` into a fresh virtual environment
in a temporary folder. The dependencies are made visible through a ``.pth`` file naming this
interpreter's site-packages: a path added that way has its own ``.pth`` files (the editable
install's finder among them) left unprocessed, so the checkout itself is not importable there,
which the first test checks. Every command then runs from an unrelated folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.fakes import GOOD_JUDGE
from tests.support.paths import FIXTURES, REPO

REPLAYS = FIXTURES / "replays"
VALID = GOOD_JUDGE
INVALID_TEXT = json.dumps(VALID).replace('"completeness": 3', '"completeness": 3.0')


@dataclass(frozen=True)
class Installed:
    wheel: Path
    python: Path
    judge: Path
    site: Path
    work: Path  # an unrelated folder to run from
    env: dict[str, str]

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.judge), *args],
            cwd=cwd or self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _run(*cmd: str | Path, cwd: Path) -> None:
    result = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, f"{cmd}: {result.stdout}\n{result.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("wheel")
    dist, venv, work = root / "dist", root / "venv", root / "work"
    work.mkdir()
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, REPO, cwd=root)
    (wheel,) = dist.glob("judge_harness-*.whl")
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    python = venv / "bin" / "python"
    _run(*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel, cwd=root)
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUDGE_SESSIONS_ROOT"}
    }
    env["ANTHROPIC_API_KEY"] = ""
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return Installed(wheel, python, venv / "bin" / "judge", site, work, env)


@pytest.fixture
def session(installed: Installed, tmp_path: Path) -> Path:
    folder = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", folder)
    return folder


def test_the_wheel_carries_the_briefs_schemas_and_package_data(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    for folder in ("briefs", "schemas"):
        for path in (REPO / folder).iterdir():
            assert f"harness/_data/{folder}/{path.name}" in names, path
    for path in (REPO / "harness").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            assert path.relative_to(REPO).as_posix() in names, path
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(installed.wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text


def test_harness_imports_from_the_fresh_environment(installed: Installed) -> None:
    probe = (
        "import harness, harness.resources as r; "
        "print(harness.__file__); print(r.DEFAULT_BRIEF); print(r.schema_path('judge.schema.json'))"
    )
    result = subprocess.run(
        [str(installed.python), "-c", probe],
        cwd=installed.work,
        env=installed.env,
        capture_output=True,
        text=True,
        check=True,
    )
    module, brief, schema = (Path(line) for line in result.stdout.splitlines())
    package = installed.site / "harness"
    assert module == package / "__init__.py"
    assert brief == package / "_data" / "briefs" / "judge-deep.md"
    assert schema == package / "_data" / "schemas" / "judge.schema.json"
    assert brief.read_bytes() == (REPO / "briefs" / "judge-deep.md").read_bytes()
    assert REPO not in module.parents


def test_render(installed: Installed, session: Path) -> None:
    result = installed.run("render", str(session))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# Judge brief — deep-research session `clean`")
    assert "`judge show clean --json`" in result.stdout
    assert f"`{session.resolve()}/judge.json`" in result.stdout
    assert "{{" not in result.stdout


def test_validate_valid_and_invalid(installed: Installed, tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(VALID))
    bad.write_text(INVALID_TEXT)
    ok = installed.run("validate", str(good))
    assert ok.returncode == 0, ok.stderr
    refused = installed.run("validate", str(bad))
    assert refused.returncode == 1
    assert "at /scores/completeness: expected a whole number" in refused.stderr
    assert "internal error" not in refused.stderr
    as_json = installed.run("validate", "--json", str(bad))
    assert as_json.returncode == 1
    (error,) = json.loads(as_json.stdout)["errors"]
    assert error["pointer"] == "/scores/completeness"


def test_show_json_with_an_invalid_then_a_valid_judge(installed: Installed, session: Path) -> None:
    (session / "judge.json").write_text(INVALID_TEXT)
    invalid = installed.run("show", str(session), "--json")
    assert invalid.returncode == 1, invalid.stderr
    assert "internal error" not in invalid.stderr
    shown = json.loads(invalid.stdout)
    assert shown["valid"] is False
    assert [e["pointer"] for e in shown["errors"]] == ["/scores/completeness"]
    (session / "judge.json").write_text(json.dumps(VALID))
    valid = installed.run("show", str(session), "--json")
    assert valid.returncode == 0, valid.stderr
    assert json.loads(valid.stdout)["judge"] == VALID


def test_cite_offline(installed: Installed, session: Path) -> None:
    result = installed.run("cite", str(session), "--offline", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["offline"] is True
    assert report["sessionId"] == "clean"
    assert len(report["claims"]) == 9
    assert {c["verdict"] for c in report["claims"]} == {"unchecked"}


def test_replayed_run_on_a_copied_fixture(installed: Installed, session: Path) -> None:
    result = installed.run(
        "run",
        str(session),
        "--replay",
        str(REPLAYS / "clean.jsonl"),
        "--cite-replay",
        str(REPLAYS / "clean.cite.jsonl"),
        "--fetch",
        "stored",
        "-q",
    )
    assert result.returncode == 0, result.stderr
    receipt = json.loads(result.stdout)
    assert receipt["wroteJudge"] is True
    assert "wrote a valid judge.json" in receipt["note"]
    assert installed.run("validate", str(session / "judge.json")).returncode == 0
    record = json.loads((session / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "model-written"
    citations = json.loads((session / ".judge" / "citations.json").read_text())
    assert citations["offline"] is False
    # The brief the run rendered is the one the wheel carries.
    assert record["brief"]["path"] == str(installed.site / "harness/_data/briefs/judge-deep.md")
    shown = installed.run("show", str(session), "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["valid"] is True


def test_a_checkout_reads_its_own_top_level_folders() -> None:
    """Editable install / source checkout: no _data copy, the top-level folders are the files."""
    from harness import resources

    assert not (REPO / "harness" / "_data").exists()
    assert resources.ROOT == REPO
    assert resources.DEFAULT_BRIEF == REPO / "briefs" / "judge-deep.md"
    assert resources.schema_path("judge.schema.json").is_file()


def test_the_sdist_carries_the_briefs_and_schemas(tmp_path: Path) -> None:
    from hatchling.builders.sdist import SdistBuilder

    (built,) = SdistBuilder(str(REPO)).build(directory=str(tmp_path))
    with tarfile.open(built) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for folder in ("briefs", "schemas"):
        for path in (REPO / folder).iterdir():
            assert f"{folder}/{path.name}" in names
    assert {"pyproject.toml", "README.md", "harness/cite/README.md"} <= names
    assert not any(n.startswith(("tests/", "sessions_fixture/", ".venv/")) for n in names)
