"""`judge --help` and every command's help say what each option does."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from harness.cli import cli

COMMANDS = sorted(cli.commands)


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_commands_are_the_documented_ten() -> None:
    assert COMMANDS == [
        "agree",
        "batch",
        "cite",
        "compare",
        "doctor",
        "render",
        "report",
        "run",
        "show",
        "validate",
    ]


@pytest.mark.parametrize("name", ["judge", *COMMANDS])
def test_every_option_has_a_help_text(name: str) -> None:
    command = cli if name == "judge" else cli.commands[name]
    options = [p for p in command.params if isinstance(p, click.Option)]
    assert options
    missing = [p.opts[0] for p in options if not (p.help or "").strip()]
    assert not missing, f"judge {name}: options without help: {missing}"
    shown = _help() if name == "judge" else _help(name)
    for option in options:
        assert option.opts[-1] in shown


@pytest.mark.parametrize("name", COMMANDS)
def test_every_argument_is_explained_and_each_command_has_an_example(name: str) -> None:
    command = cli.commands[name]
    text = _help(name)
    for param in command.params:
        if isinstance(param, click.Argument):
            assert param.human_readable_name in (command.help or ""), param.name
    assert re.search(rf"Example:\n\s+judge {name} \S", text), text


def test_top_level_help_names_the_environment_exit_codes_and_examples() -> None:
    text = _help()
    for word in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "JUDGE_SESSIONS_ROOT"):
        assert word in text
    codes = text.split("Exit codes:", 1)[1].split("Examples:", 1)[0]
    for code in ("0", "1", "2"):
        assert re.search(rf"^\s+{code}\s+\S", codes, flags=re.M), code
    examples = text.split("Examples:", 1)[1]
    for name in COMMANDS:
        assert re.search(rf"^\s+judge {name} \S", examples, flags=re.M), name
    # \b blocks stay preformatted: one example a line, not rewrapped into a paragraph.
    assert sum(1 for line in examples.splitlines() if line.strip().startswith("judge ")) >= 5
