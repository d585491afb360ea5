"""Path scoping: what Read and Write may touch, table-driven."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import ToolError
from harness.fs.scope import (
    display_path,
    is_judge_json,
    open_in_session,
    resolve_in_session,
    resolve_write_target,
    session_root,
)


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """tmp/sess (the session), tmp/outside (secrets), tmp/sess-evil (prefix sibling)."""
    sess = tmp_path / "sess"
    (sess / "findings").mkdir(parents=True)
    (sess / "findings" / "sq1.json").write_text('{"id": "sq1"}\n')
    (sess / "sources").mkdir()
    (sess / "answer.md").write_text("# Answer\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (tmp_path / "sess-evil").mkdir()
    (tmp_path / "sess-evil" / "x.txt").write_text("evil\n")
    # Links that lead out: to a file, to a directory, dangling, and a relative one.
    (sess / "link-file").symlink_to(outside / "secret.txt")
    (sess / "link-dir").symlink_to(outside)
    (sess / "dangling-out").symlink_to(tmp_path / "nowhere" / "file")
    (sess / "findings" / "rel-out").symlink_to("../../outside/secret.txt")
    # Links that stay in.
    (sess / "link-in").symlink_to(sess / "findings" / "sq1.json")
    (sess / "dangling-in").symlink_to("missing.txt")
    (sess / "loop").symlink_to("loop")
    return sess


INSIDE = [
    ("findings/sq1.json", "findings/sq1.json"),
    ("./findings/../findings/sq1.json", "findings/sq1.json"),
    ("findings//sq1.json", "findings/sq1.json"),
    (".", "."),
    ("findings/", "findings"),
    ("missing/not-yet.txt", "missing/not-yet.txt"),
    ("link-in", "findings/sq1.json"),
    ("dangling-in", "missing.txt"),
    # Look-alikes are names, not dots and slashes.
    ("．．／．．／etc/passwd", "．．／．．／etc/passwd"),
    ("\u2024\u2024/x", "\u2024\u2024/x"),
    ("..\\..\\etc\\passwd", "..\\..\\etc\\passwd"),
    ("~/x", "~/x"),
    ("...", "..."),
    (" findings", " findings"),
]


@pytest.mark.parametrize(("given", "expected"), INSIDE)
def test_paths_inside_resolve(layout: Path, given: str, expected: str) -> None:
    resolved = resolve_in_session(layout, given)
    assert resolved == (layout / expected if expected != "." else layout).resolve(strict=False)
    assert display_path(layout, resolved) == expected


def test_absolute_path_inside_is_accepted(layout: Path) -> None:
    target = layout / "findings" / "sq1.json"
    assert resolve_in_session(layout, str(target)) == target.resolve()


def test_absolute_path_through_an_unresolved_session_alias(layout: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(layout)
    # The session is given through a symlinked path; both spellings are inside.
    assert resolve_in_session(alias, "findings/sq1.json") == layout / "findings" / "sq1.json"
    got = resolve_in_session(alias, str(alias / "findings" / "sq1.json"))
    assert got == layout / "findings" / "sq1.json"


OUTSIDE = [
    ("../outside/secret.txt", "is outside the session directory"),
    ("../../../../../../etc/passwd", "is outside the session directory"),
    ("findings/../../outside/secret.txt", "is outside the session directory"),
    ("/etc/passwd", "is outside the session directory"),
    ("/proc/self/environ", "is outside the session directory"),
    ("//etc/passwd", "is outside the session directory"),
    ("../sess-evil/x.txt", "is outside the session directory"),
    ("..", "is outside the session directory"),
    ("link-file", "through a symlink"),
    ("link-dir/secret.txt", "through a symlink"),
    ("link-dir", "through a symlink"),
    ("link-dir/../outside/secret.txt", "through a symlink"),
    ("dangling-out", "through a symlink"),
    ("findings/rel-out", "through a symlink"),
]


@pytest.mark.parametrize(("given", "why"), OUTSIDE)
def test_paths_outside_are_refused(layout: Path, given: str, why: str) -> None:
    with pytest.raises(ToolError) as info:
        resolve_in_session(layout, given)
    message = info.value.message
    assert message.startswith("refused:")
    assert why in message
    # The path the model gave is a name shown only inside the untrusted block, never in
    # the harness's words.
    assert info.value.names == (("path", given),)
    assert given not in message


def test_absolute_path_to_sibling_with_common_prefix(layout: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="outside the session"):
        resolve_in_session(layout, str(tmp_path / "sess-evil" / "x.txt"))


BAD_TEXT = [
    ("", "empty"),
    ("   ", "empty"),
    ("findings/\x00sq1.json", "NUL"),
    ("a" * 4097, "4097 characters"),
    ("x/" + "b" * 256, "256 bytes"),
    ("é" * 128, "256 bytes"),  # 128 characters, 256 UTF-8 bytes
    ("bad\ud800surrogate", "lone surrogate"),
]


@pytest.mark.parametrize(("given", "why"), BAD_TEXT)
def test_malformed_paths_are_refused(layout: Path, given: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        resolve_in_session(layout, given)


@pytest.mark.parametrize("given", [None, 3, b"findings", ["findings"], Path("findings")])
def test_non_string_paths_are_refused(layout: Path, given: object) -> None:
    with pytest.raises(ToolError, match="must be a string"):
        resolve_in_session(layout, given)  # type: ignore[arg-type]


def test_component_of_exactly_255_bytes_is_fine(layout: Path) -> None:
    assert resolve_in_session(layout, "c" * 255).name == "c" * 255


def test_missing_session_dir(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        resolve_in_session(tmp_path / "nope", "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(ToolError, match="not a directory"):
        session_root(tmp_path / "file")


# --- Write target -------------------------------------------------------------

WRITE_OK = [
    "judge.json",
    "./judge.json",
    "findings/../judge.json",
    "findings/./../judge.json",
]


@pytest.mark.parametrize("given", WRITE_OK)
def test_write_target_accepts_judge_json(layout: Path, given: str) -> None:
    assert resolve_write_target(layout, given) == layout / "judge.json"
    assert is_judge_json(layout, given)


def test_write_target_accepts_absolute_and_existing_regular_file(layout: Path) -> None:
    (layout / "judge.json").write_text("{}")
    assert resolve_write_target(layout, str(layout / "judge.json")) == layout / "judge.json"


WRITE_REFUSED = [
    ("findings/judge.json", "Write only accepts"),
    ("judge.json.tmp", "Write only accepts"),
    ("Judge.json", "Write only accepts"),
    ("answer.md", "Write only accepts"),
    ("../judge.json", "Write only accepts"),
    ("link-dir/../judge.json", "Write only accepts"),  # kernel walks the link first
    ("/etc/judge.json", "Write only accepts"),
    ("judge.json/..", "Write only accepts"),
    ("．/judge.json", "Write only accepts"),
    ("", "empty"),
    ("judge\x00.json", "NUL"),
]


@pytest.mark.parametrize(("given", "why"), WRITE_REFUSED)
def test_write_target_refuses_other_paths(layout: Path, given: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        resolve_write_target(layout, given)
    assert not is_judge_json(layout, given)


def test_parent_symlink_back_into_session_is_fine(layout: Path) -> None:
    (layout / "here").symlink_to(".")
    assert resolve_write_target(layout, "here/judge.json") == layout / "judge.json"


def test_judge_json_as_directory_is_refused(layout: Path) -> None:
    (layout / "judge.json").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        resolve_write_target(layout, "judge.json")
    assert not is_judge_json(layout, "judge.json")


@pytest.mark.parametrize(
    "target",
    ["../outside/secret.txt", "findings/sq1.json", "missing-anywhere", "judge.json"],
)
def test_judge_json_as_symlink_is_refused(layout: Path, target: str) -> None:
    (layout / "judge.json").symlink_to(target)
    with pytest.raises(ToolError, match="is a symlink"):
        resolve_write_target(layout, "judge.json")


def test_judge_json_as_fifo_is_refused(layout: Path) -> None:
    os.mkfifo(layout / "judge.json")
    with pytest.raises(ToolError, match="not a regular file"):
        resolve_write_target(layout, "judge.json")


# --- open_in_session ----------------------------------------------------------


def test_open_in_session_reads_the_checked_file(layout: Path) -> None:
    fd = open_in_session(layout, resolve_in_session(layout, "link-in"))
    with os.fdopen(fd, "rb") as fh:
        assert fh.read() == b'{"id": "sq1"}\n'


def test_open_in_session_missing(layout: Path) -> None:
    with pytest.raises(ToolError, match=r"^the path does not exist$") as info:
        open_in_session(layout, resolve_in_session(layout, "dangling-in"))
    assert info.value.names == (("path", "missing.txt"),)


def test_open_in_session_symlink_loop(layout: Path) -> None:
    with pytest.raises(ToolError, match="symlink loop"):
        open_in_session(layout, resolve_in_session(layout, "loop"))


def test_open_in_session_refuses_a_symlink_swapped_in_after_the_check(
    layout: Path, tmp_path: Path
) -> None:
    resolved = resolve_in_session(layout, "findings/sq1.json")
    # Between the check and the open, the directory becomes a link to outside.
    (layout / "findings").rename(layout / "findings-old")
    (layout / "findings").symlink_to(tmp_path / "outside")
    (tmp_path / "outside" / "sq1.json").write_text("stolen")
    with pytest.raises(ToolError):
        open_in_session(layout, resolved)


def test_open_in_session_refuses_paths_outside(layout: Path, tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="outside"):
        open_in_session(layout, tmp_path / "outside" / "secret.txt")


# --- property: nothing ever resolves outside ---------------------------------------

_PIECES = st.sampled_from(
    ["..", ".", "", "findings", "link-dir", "link-file", "dangling-out", "．．", "~", "sq1.json"]
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(parts=st.lists(_PIECES | st.text(max_size=6), max_size=8), absolute=st.booleans())
def test_resolution_never_escapes(layout: Path, parts: list[str], absolute: bool) -> None:
    text = "/".join(parts)
    if absolute:
        text = str(layout) + "/" + text
    try:
        resolved = resolve_in_session(layout, text)
    except ToolError:
        return
    real = os.path.realpath(resolved)
    assert real == str(layout) or real.startswith(str(layout) + "/")
