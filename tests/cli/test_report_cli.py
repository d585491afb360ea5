"""`judge report` for a script and a person: the page's path alone on stdout, `--open`
with the desktop's opener (or a line saying there is none), and `-o` into a folder that
does not exist named as such (not "pass -o")."""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.sessions import write_small_session


def test_the_path_is_printed_on_stdout(tmp_path: Path) -> None:
    session = write_small_session(tmp_path / "s1")
    result = CliRunner().invoke(cli, ["report", str(session)])
    assert result.exit_code == 0, result.stderr
    page = Path(result.stdout.strip())
    assert result.stdout == f"{page}\n"
    assert page == session / ".judge" / "report.html"
    assert page.is_absolute() and page.read_text().lower().startswith("<!doctype html>")


def test_a_relative_output_is_printed_absolute(tmp_path: Path, monkeypatch: Any) -> None:
    session = write_small_session(tmp_path / "s1")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(session), "-o", "page.html"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{tmp_path / 'page.html'}\n"


def test_an_index_prints_its_path(tmp_path: Path) -> None:
    write_small_session(tmp_path / "root" / "s1")
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "root")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{tmp_path / 'root' / 'report.html'}\n"


class _Browser:
    def __init__(self, works: bool = True) -> None:
        self.opened: list[str] = []
        self.works = works

    def open(self, url: str, *_: Any) -> bool:
        self.opened.append(url)
        return self.works


def test_open_uses_the_desktops_opener(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    browser = _Browser()
    monkeypatch.setattr(webbrowser, "get", lambda *_: browser)
    session = write_small_session(tmp_path / "s1")
    result = CliRunner().invoke(cli, ["report", str(session), "--open"])
    assert result.exit_code == 0, result.stderr
    page = session / ".judge" / "report.html"
    assert browser.opened == [page.as_uri()]
    assert f"opened {page} in the browser" in result.stderr
    assert result.stdout == f"{page}\n"


def test_open_without_an_opener_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def none(*_: Any) -> Any:
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", none)
    session = write_small_session(tmp_path / "s1")
    result = CliRunner().invoke(cli, ["report", str(session), "--open"])
    assert result.exit_code == 0  # the page is written: that is the command's result
    page = session / ".judge" / "report.html"
    assert f"no browser or desktop opener found here; open {page} yourself" in result.stderr
    assert page.is_file()


def test_open_that_fails_to_start_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webbrowser, "get", lambda *_: _Browser(works=False))
    session = write_small_session(tmp_path / "s1")
    result = CliRunner().invoke(cli, ["report", str(session), "--open"])
    assert result.exit_code == 0
    assert "the browser could not be started" in result.stderr


def test_output_into_a_missing_folder(tmp_path: Path) -> None:
    session = write_small_session(tmp_path / "s1")
    target = tmp_path / "no" / "such" / "page.html"
    result = CliRunner().invoke(cli, ["report", str(session), "-o", str(target)])
    assert result.exit_code == 2
    assert f"its folder {target.parent} does not exist" in result.stderr
    assert "pass -o" not in result.stderr and "-o FILE" not in result.stderr
    assert result.stdout == ""
    assert not (session / ".judge" / "report.html").exists()  # nothing written elsewhere
