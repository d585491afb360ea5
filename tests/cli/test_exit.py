"""How a `judge` process ends (harness.cli.main.leave): without the interpreter's teardown,
and with nothing lost to that.

Real processes: the exit code of each kind of ending, every byte of standard output when
it is a pipe, the document workers stopped by the atexit handlers (none left running),
a pipe closed early said as such (exit 1), not called an internal error.
What the skipped teardown saves is measured in bench/bench_batch.py, not here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.paths import FIXTURES, REPO
from tests.support.waits import WITHIN


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PYTHONPATH=str(REPO), **extra)
    return env


def _judge(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        env=_env(**extra),
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--version"], 0),
        (["--no-such-option"], 2),
        (["validate", "/nonexistent/judge.json"], 1),
        (["show", "/nonexistent"], 2),
        (["show", str(FIXTURES / "clean"), "--json"], 1),  # no judge.json there
        (["render", str(FIXTURES / "clean")], 0),
    ],
)
def test_exit_codes_are_those_of_the_command(args: list[str], code: int) -> None:
    out = _judge(*args)
    assert out.returncode == code, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    assert out.returncode == CliRunner().invoke(cli, args).exit_code


def test_every_byte_of_stdout_reaches_a_pipe() -> None:
    out = _judge("render", str(FIXTURES / "clean"))
    assert out.returncode == 0
    assert out.stdout == CliRunner().invoke(cli, ["render", str(FIXTURES / "clean")]).stdout
    assert len(out.stdout) > 1000


def _marked(marker: str) -> list[int]:
    """Processes, other than this one, whose environment holds `marker`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if marker.encode() in (proc / "environ").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.timeout(2 * WITHIN)
def test_the_document_workers_are_stopped_at_exit(tmp_path: Path) -> None:
    folder = tmp_path / "pdf-sources"
    shutil.copytree(FIXTURES / "pdf-sources", folder)
    marker = f"JUDGE_EXIT_TEST={uuid.uuid4().hex}"
    name, value = marker.split("=")
    out = _judge("cite", str(folder), "--offline", "--json", "-q", **{name: value})
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)  # the whole report, through the pipe
    assert report["claims"]
    # Ends as soon as they are gone: a quick machine pays nothing for the bound.
    deadline = time.monotonic() + WITHIN
    while _marked(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked(marker) == []  # no converter left behind (they read the PDFs)


@pytest.mark.timeout(2 * WITHIN)
def test_a_pipe_closed_early_is_said_not_called_an_internal_error() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "render", str(FIXTURES / "clean")],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads what it prints
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=WITHIN) == 1
    assert "standard output was closed" in err
    assert "Traceback" not in err and "internal error" not in err


@pytest.mark.parametrize(
    "args",
    [["--max-turns", "abc"], ["--no-such-option"], ["--fetch", "sometimes"]],
    ids=["bad value", "unknown option", "bad choice"],
)
def test_run_prints_a_receipt_on_click_usage_errors_too(args: list[str]) -> None:
    """Every exit of `judge run` prints its receipt, click's own usage errors included (#33)."""
    result = CliRunner().invoke(cli, ["run", str(FIXTURES / "clean"), *args])
    assert result.exit_code == 2
    receipt = json.loads(result.stdout)
    assert receipt["wroteJudge"] is False and receipt["note"]
    assert receipt["note"] in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    "args",
    [["run"], ["run", "--max-turns", "abc"], ["--no-such-option", "run", "x"]],
    ids=["missing SESSION", "bad value, no SESSION", "unknown group option"],
)
def test_every_usage_exit_of_run_has_the_three_key_receipt(args: list[str]) -> None:
    """#33: the README says every exit of `judge run` prints its receipt but `--help`."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "wroteJudge": False,
        "upToDate": False,
        "note": json.loads(result.stdout)["note"],
    }
    helped = CliRunner().invoke(cli, ["run", "--help"])
    assert helped.exit_code == 0 and not helped.stdout.lstrip().startswith("{")


def test_no_key_is_a_receipt_that_names_judge_doctor(tmp_path: Path) -> None:
    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    no_key = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_AUTH_TOKEN": None, "ANTHROPIC_BASE_URL": None}
    result = CliRunner().invoke(cli, ["run", str(session), "--fetch", "stored"], env=no_key)
    assert result.exit_code == 2, result.output
    note = json.loads(result.stdout)["note"]
    assert note.startswith("no API key: ") and note.endswith(
        "; `judge doctor` says which check fails"
    ), note
    assert f"judge: error: {note}" in result.stderr  # stderr says what the receipt says


@pytest.mark.parametrize("command", ["run", "cite"])
def test_replay_with_record_is_a_usage_error_without_the_doctor_hint(
    tmp_path: Path, command: str
) -> None:
    """Two options that exclude each other are the command line's fault: exit 2 as a usage
    error, and no `judge doctor` hint (doctor checks the key and the endpoint, not options)."""
    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    args = [command, str(session), "--replay", "a.jsonl", "--record", str(tmp_path / "r.jsonl")]
    result = CliRunner().invoke(cli, [*args, "--json"] if command == "cite" else args)
    assert result.exit_code == 2, result.output
    assert "cannot be used together" in result.stderr
    assert "judge doctor" not in result.output + result.stderr
    if command == "cite":
        assert json.loads(result.stdout)["error"]["code"] == "usage"


@pytest.mark.parametrize("option", ["--record", "--transcript"])
@pytest.mark.parametrize(
    "where", ["inside", "fifo", "cite-fifo"], ids=["in-session", "fifo", "cite-fifo"]
)
def test_a_record_file_inside_the_session_or_not_a_file_is_refused_first(
    tmp_path: Path, where: str, option: str
) -> None:
    """`judge run --record F` writes F and F.cite.jsonl: a file added to the session would
    change what it judges, and a FIFO would hold the run for ever; refused before any
    request, with no key needed to learn it."""
    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    record = session / "rec.jsonl" if where == "inside" else tmp_path / "rec.jsonl"
    if where == "fifo":
        os.mkfifo(record)
    if where == "cite-fifo":
        os.mkfifo(tmp_path / "rec.cite.jsonl")
    before = sorted(p.name for p in session.iterdir())
    no_key = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_AUTH_TOKEN": None}
    if option == "--transcript" and where == "cite-fifo":
        record = tmp_path / "rec.cite.jsonl"  # the transcript is the one file named
    result = CliRunner().invoke(cli, ["run", str(session), option, str(record)], env=no_key)
    assert result.exit_code == 2, result.output
    note = json.loads(result.stdout)["note"]
    assert note.startswith(f"{option} ") and "judge doctor" not in note
    assert ("inside the session" if where == "inside" else "not a regular file") in note
    assert sorted(p.name for p in session.iterdir()) == before  # nothing written into it


@pytest.mark.parametrize("where", ["inside", "no-folder"])
def test_cite_record_inside_the_session_or_in_no_folder_is_refused_first(
    tmp_path: Path, where: str
) -> None:
    """`judge cite --record F` saves F after every request: a path it could not save to is
    refused before the first one, not after all of them were paid for."""
    session = tmp_path / "clean"
    shutil.copytree(FIXTURES / "clean", session)
    record = session / "rec.jsonl" if where == "inside" else tmp_path / "none" / "rec.jsonl"
    result = CliRunner().invoke(cli, ["cite", str(session), "--record", str(record), "--json"])
    assert result.exit_code == 2, result.output
    message = json.loads(result.stdout)["error"]["message"]
    assert message.startswith("--record ")
    assert ("inside the session" if where == "inside" else "does not exist") in message
    assert not record.exists()
