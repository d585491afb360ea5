"""Debian's Chromium, headless, through Playwright: shared by the report's browser test,
`scripts/screenshots.py` and `bench/bench_report.py`.

Playwright's own browser download cannot work here (no network but package registries),
so the system browser is launched; `.ci/run` installs it when missing.
"""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def launch(playwright: Any) -> Any:
    """A headless Chromium browser (close it when done)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
