"""The command line: click commands and every line a person reads."""

from harness.cli.main import cli, main

__all__ = ["cli", "main"]
