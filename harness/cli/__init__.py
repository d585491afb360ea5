"""The command line: click commands and every line a person reads."""

from harness.cli.main import cli, entry, main

__all__ = ["cli", "entry", "main"]
