"""Debian's Chromium, headless, through Playwright: shared by the report's browser test,
`scripts/screenshots.py` and `bench/bench_report.py`.

Playwright's own browser download cannot work here (no network but package registries),
so the system browser is launched; `.ci/run` installs it when missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "sessions_fixture"
REPLAYS = FIXTURES / "replays"

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


def judged_copies(names: list[str], into: Path) -> list[Path]:
    """Copies of fixture sessions under `into`, judged from their recorded replies."""
    import harness

    out: list[Path] = []
    for name in names:
        folder = into / name
        shutil.copytree(FIXTURES / name, folder, symlinks=True)
        harness.judge_session(
            folder,
            replay=REPLAYS / f"{name}.jsonl",
            cite_replay=REPLAYS / f"{name}.cite.jsonl",
            fetch="stored",
        )
        out.append(folder)
    return out


def settled_ms(page: Any) -> float:
    """Milliseconds from navigation start until the script has run and two frames have
    been drawn after it (layout and paint settled)."""
    page.wait_for_selector("html[data-ready='1']", state="attached")
    return float(
        page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() =>"
            " requestAnimationFrame(() => r(performance.now()))))"
        )
    )
