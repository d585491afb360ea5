"""`judge agree`: the saved judgments and audits against human labels, and the judge
against its own samples. Reads only what runs saved; makes no model request.

`read_labels` reads a labels file (harness.agree.labels), `agreement` pairs it with the
sessions under a root (harness.agree.collect), `harness.agree.compute` and
`harness.agree.stats` hold the pure arithmetic, `harness.agree.report` the typed report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.agree.collect import agreement
    from harness.agree.labels import Labels, read_labels
    from harness.agree.report import AgreementReport

__all__ = ["AgreementReport", "Labels", "agreement", "read_labels"]

# Loaded on first use: importing harness.agree.labels (which reads a labels file, perhaps
# from a pipe) must not load NumPy and SciPy first. Their thread pools would otherwise be
# running while the labels are read, and a Ctrl-C delivered to one of those threads leaves
# the main thread blocked in its read, never interrupted.
_HOMES = {
    "agreement": "harness.agree.collect",
    "Labels": "harness.agree.labels",
    "read_labels": "harness.agree.labels",
    "AgreementReport": "harness.agree.report",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'harness.agree' has no attribute {name!r}")
