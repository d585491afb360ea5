"""bench/bench_report.py times the page of an audited session and a click on its filters.

Its synthetic session's citations.json is written as a run of this installation writes it
(sealed): the page shows only such an audit, and with a hand-written one every claim was
"not audited" and the bench's click found no filter to click.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from bench import bench_report
from harness.page.build import write_session_page


def test_the_synthetic_page_shows_its_audit_and_the_filter_the_bench_clicks(
    tmp_path: Path,
) -> None:
    folder = bench_report.synthetic(tmp_path / "synth", 30)
    path, page = write_session_page(folder)
    html = path.read_text(encoding="utf-8")
    verdicts = Counter(re.findall(r'<[^>]* data-verdict="([^"]+)"', html))
    assert page.claims == 30
    assert verdicts.most_common(1)[0][0] == bench_report.SYNTHETIC_VERDICT
    assert "not audited" not in verdicts
    offered = re.findall(r'name="verdict" value="([^"]+)"', html)
    assert bench_report.SYNTHETIC_VERDICT in offered
