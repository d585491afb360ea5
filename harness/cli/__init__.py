"""The command line: click commands and every line a person reads."""

from harness.cli.main import main

__all__ = ["main"]
