"""Benchmark `judge report`: page weight, render time in Python, and in headless Chromium.

- `large` (320 claims), judged from its recorded replies: the page must weigh under 2 MB
  and render (script done, two frames drawn after it) in under 1 s in the browser;
- a synthetic session of `--claims` claims (default 2,000, `bench/synth.py`) with an
  offline citation audit and the advisory judge.json: it must stay usable (findings are
  closed `<details>`, opened by the filters), so its load and its filter are timed too.

Browser times are the median of `--runs` fresh page loads (navigation start to settled),
and a filter's time is from the click to two frames drawn after it.

    python bench/bench_report.py [--claims 2000] [--runs 5] [--strict]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "scripts"))

from browser import judged_copies, launch, settled_ms  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from synth import make_session  # noqa: E402

from harness.audit import audit_folder  # noqa: E402
from harness.contract.judgment import fallback_judgment, write_judgment_atomic  # noqa: E402
from harness.fs.origin import sealed_artifact  # noqa: E402
from harness.page import load_page, render_session  # noqa: E402
from harness.page.build import write_session_page  # noqa: E402

# The verdict filter clicked on each page: one most of its claims have (the synthetic
# session's offline audit leaves every quote-less claim unchecked).
LARGE_VERDICT = "supported"
SYNTHETIC_VERDICT = "unchecked"

FILTER_JS = """async () => {
  const box = document.querySelector('input[name=verdict][value="%(verdict)s"]');
  if (box === null) {
    const offered = [...document.querySelectorAll("input[name=verdict]")].map(b => b.value);
    throw new Error("no verdict filter %(verdict)s on the page; it offers: " + offered.join(", "));
  }
  const t = performance.now();
  box.click();
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t;
}"""


def synthetic(folder: Path, claims: int) -> Path:
    make_session(folder, claims)
    (folder / ".judge").mkdir()
    report = audit_folder(folder, offline=True)
    # Sealed, as a run of this installation writes it: the page shows only such an audit
    # (an unsealed citations.json is a planted one, and every claim would be "not audited").
    document = json.loads(report.to_json())
    document["runId"] = "bench-synthetic"
    (folder / ".judge" / "citations.json").write_bytes(sealed_artifact("citations", document))
    note = "Advisory fallback by the harness: benchmark session, not judged."
    write_judgment_atomic(folder / "judge.json", fallback_judgment(note).to_json())
    return folder


def python_render_s(folder: Path, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        render_session(load_page(folder))
        best = min(best, time.perf_counter() - start)
    return best


def browser_times(browser: Any, page_path: Path, runs: int, verdict: str) -> tuple[float, float]:
    loads: list[float] = []
    filters: list[float] = []
    for _ in range(runs):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri())
        loads.append(settled_ms(page))
        filters.append(float(page.evaluate(FILTER_JS % {"verdict": verdict})))
        page.close()
    return statistics.median(loads), statistics.median(filters)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark judge report pages.")
    parser.add_argument("--claims", type=int, default=2000, help="synthetic session size")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        root = Path(tmp)
        # The seal's key is the bench's own, not the user's (~/.local/state/judge/key).
        os.environ["JUDGE_KEY_FILE"] = str(root / "key")
        (large,) = judged_copies(["large"], root)
        synth = synthetic(root / f"synth-{args.claims}", args.claims)
        browser = launch(playwright)
        heads = ("claims", 7), ("weight", 10), ("python", 9), ("browser", 9), ("filter", 8)
        print(f"{'page':<22} " + " ".join(f"{h:>{w}}" for h, w in heads))
        try:
            for name, folder, verdict, limits in (
                ("large", large, LARGE_VERDICT, (2_000_000, 1000.0)),
                (f"synthetic {args.claims:,}", synth, SYNTHETIC_VERDICT, (None, None)),
            ):
                path, page = write_session_page(folder)
                weight = path.stat().st_size
                py_s = python_render_s(folder, args.runs)
                load_ms, filter_ms = browser_times(browser, path, args.runs, verdict)
                print(
                    f"{name:<22} {page.claims:>7,} {weight / 1e6:>8.2f}MB {py_s * 1000:>7.0f}ms "
                    f"{load_ms:>7.0f}ms {filter_ms:>6.0f}ms"
                )
                max_bytes, max_ms = limits
                if max_bytes is not None and weight >= max_bytes:
                    missed.append(f"{name}: {weight:,} bytes, target < {max_bytes:,}")
                if max_ms is not None and load_ms >= max_ms:
                    missed.append(f"{name}: {load_ms:.0f} ms in the browser, target < {max_ms:.0f}")
        finally:
            browser.close()
    for miss in missed:
        print(f"MISSED {miss}")
    if not missed:
        print("targets met: large < 2 MB and < 1 s in the browser")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
