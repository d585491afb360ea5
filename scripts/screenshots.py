"""Screenshots of `judge report` for the README: docs/report-session.png, report-index.png.

Judges copies of the fixture sessions from their recorded replies (no key, no network),
writes their pages and the index with `judge report`, and photographs them in headless
Chromium. Usage: `python scripts/screenshots.py [--out docs]`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from browser import REPLAYS, judged_copies, launch, settled_ms
from playwright.sync_api import sync_playwright

from harness.page import build

SESSION = "showcase"  # what `make demo` judges and ends on


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "docs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    names = sorted(p.stem for p in REPLAYS.glob("*.jsonl") if not p.stem.endswith(".cite"))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        root = Path(tmp) / "sessions"
        root.mkdir()
        judged_copies(names, root)
        build(root)
        browser = launch(playwright)
        try:
            for page_path, png, height in (
                (root / SESSION / ".judge" / "report.html", "report-session.png", 1700),
                (root / "report.html", "report-index.png", 900),
            ):
                page = browser.new_page(viewport={"width": 1200, "height": height})
                page.goto(page_path.as_uri())
                settled_ms(page)
                page.screenshot(path=str(args.out / png))
                page.close()
                print(f"wrote {args.out / png}", file=sys.stderr)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
