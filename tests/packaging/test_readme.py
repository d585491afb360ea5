"""The README's code blocks run, so they cannot rot.

Every fenced block is `sh`, `python` or `text`. An `sh` or `python` block runs, in order, in
a sandbox folder (a copy of the fixture sessions it names, `judge` and `make` on PATH, no
ANTHROPIC_* variable, no network), unless its info string says why it cannot: `needs-key`
(it calls the API) or `needs-network` (it installs from PyPI). The `judge` commands of those
blocks are still parsed by the real CLI (a misspelt option fails here). `make demo` runs what
the Makefile's `demo` target runs (`scripts/demo.py`; a venv cannot be built offline), which
the test reads off the Makefile. Every relative link of the README and docs/*.md resolves.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import cli
from tests.support.paths import FIXTURES, REPO

README = REPO / "README.md"
MARKS = {"needs-key", "needs-network"}
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", re.S | re.M)


def blocks() -> list[tuple[str, set[str], str]]:
    text = README.read_text(encoding="utf-8")
    return [(m[1], set(m[2].split()), m[3]) for m in BLOCK.finditer(text)]


def test_the_readme_is_a_newcomers_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    assert "![" in "\n".join(lines[:12])  # the picture of a report near the top
    assert any("make demo" in line for line in lines[:25])


def test_every_block_is_known_and_marked_only_with_known_reasons() -> None:
    found = blocks()
    assert len(found) >= 8
    for lang, marks, _ in found:
        assert lang in {"sh", "python", "text"}, lang
        assert marks <= MARKS, marks
        assert lang != "text" or not marks


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder holding the fixture sessions the README names, and an environment with
    `judge` and `make` on PATH and no ANTHROPIC_* variable."""
    work = tmp_path / "clone"
    fixtures = work / "sessions_fixture"
    fixtures.mkdir(parents=True)
    shutil.copytree(FIXTURES / "replays", fixtures / "replays")
    readme = README.read_text(encoding="utf-8")
    named = set(re.findall(r"sessions_fixture/([\w-]+)", readme))
    for braces in re.findall(r"sessions_fixture/\{([\w,-]+)\}", readme):
        named |= set(braces.split(","))
    for name in sorted(named - {"replays"}):
        shutil.copytree(FIXTURES / name, fixtures / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    recipe = re.search(r"^demo:.*\n\t(.+)$", (REPO / "Makefile").read_text(), re.M)
    assert recipe is not None and recipe[1] == "$(BIN)/python scripts/demo.py"
    python = shlex.quote(sys.executable)
    shims = {
        "judge": f'exec {python} -m harness "$@"',
        "make": (
            'if [ "$*" != demo ]; then echo "only make demo runs here" >&2; exit 2; fi\n'
            f'exec {python} {shlex.quote(str(REPO / "scripts" / "demo.py"))} --out "$PWD/demo-out"'
        ),
    }
    for name, body in shims.items():
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\n{body}\n")
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(REPO))
    env.pop("JUDGE_SESSIONS_ROOT", None)
    return work, env


def test_the_blocks_run(tmp_path: Path) -> None:
    work, env = _sandbox(tmp_path)
    ran: list[str] = []
    said: list[str] = []  # stdout and stderr
    skipped = 0
    for lang, marks, code in blocks():
        if lang == "text":
            continue
        if marks:
            skipped += 1
            continue
        if lang == "sh":
            command = ["bash", "-euo", "pipefail", "-c", code]
        else:
            command = [sys.executable, "-c", code]
        done = subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{code}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        ran.append(done.stdout)
        said.append(done.stdout + done.stderr)
    runnable = [b for b in blocks() if b[0] != "text" and not b[1]]
    assert len(ran) == len(runnable) >= 3  # every block not marked ran
    assert skipped >= 3
    demo = ran[0]
    page = work / "demo-out" / "showcase" / ".judge" / "report.html"
    assert page.is_file()
    tail = demo.strip().splitlines()[-5:]
    assert any(str(page) in line for line in tail), demo  # the demo ends at the report
    assert demo.strip().splitlines()[-1].strip() == str(page)  # its very last line
    # The PATH hint comes before any `judge …` command a newcomer is told to type.
    hint = demo.index("`judge` on PATH")
    assert hint < demo.index("--open")
    # The first run shows the tool catching what it exists to catch.
    for caught in ("quote_not_in_source", "dangling_source", "number_mismatch", "no_quote"):
        assert caught in demo, caught
    assert "the judge disagrees with the audit" in demo
    # And the page shows them too.
    html = page.read_text(encoding="utf-8")
    assert "The judge disagrees with the citation audit" in html
    for caught in ("quote_not_in_source", "dangling_source", "number_mismatch", "no_quote"):
        assert caught in html, caught
    # The tour's `judge cite --offline` lists problems, not "problems: none".
    cite = next(out for out in said if "deterministic checks only" in out)
    assert "problems: none" not in cite
    for caught in ("quote_not_in_source", "dangling_source", "number_mismatch", "no_quote"):
        assert caught in cite, caught
    assert (work / "demo-out" / "root" / "report.html").is_file()
    assert "RunResult(receipt=Receipt(wroteJudge=True" in ran[-1]


def _judge_lines(code: str) -> list[list[str]]:
    out = []
    for line in code.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "judge":
            out.append(words[1:])
    return out


@pytest.mark.parametrize(
    "args",
    [args for _, marks, code in blocks() if marks for args in _judge_lines(code)],
    ids=lambda args: " ".join(args)[:40],
)
def test_commands_in_blocks_not_run_are_valid_commands(args: list[str]) -> None:
    """What is not run is still parsed by the real CLI: its command and options exist."""
    name, rest = args[0], args[1:]
    assert name in cli.commands, name
    cli.commands[name].make_context(name, list(rest))


def _slug(heading: str) -> str:
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    return {_slug(m[1]) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


@pytest.mark.parametrize(
    "page", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link}"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{page.name}: {link}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    for page in (REPO / "docs").glob("*.md"):
        assert f"](docs/{page.name}" in text, page.name


TEST_ONLY = (
    "pytest",
    "hypothesis",
    "fpdf",
    "playwright",
    "sklearn",
    "rank_bm25",
    "yaml",
    "mypy",
    "ruff",
)


def test_make_demo_installs_the_runtime_alone() -> None:
    """`make demo` needs only the package: the test tools come with `make test`."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    demo = re.search(r"^demo: (.+)$", makefile, re.M)
    assert demo is not None and demo[1].split() == ["$(STAMP)"]
    stamp = re.search(r"^\$\(STAMP\):.*\n((?:\t.+\n)+)", makefile, re.M)
    assert stamp is not None and "[test]" not in stamp[1] and "install --quiet -e ." in stamp[1]
    assert re.search(r"^(lint|typecheck): \$\(TEST_STAMP\)$", makefile, re.M)


def test_the_demo_runs_without_the_test_tools(tmp_path: Path) -> None:
    """Every process the demo starts fails to import a test-only package: it still ends at
    its page."""
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        f"BLOCKED = {TEST_ONLY!r}\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BLOCKED:\n"
        "            raise ImportError(f'{name} is a test tool')\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Block())\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONPATH"] = f"{blocker}{os.pathsep}{REPO}"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "demo.py"), "--out", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page = tmp_path / "out" / "showcase" / ".judge" / "report.html"
    assert done.stdout.strip().splitlines()[-1].strip() == str(page)
