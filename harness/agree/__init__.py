"""`judge agree`: the saved judgments and audits against human labels, and the judge
against its own samples. Reads only what runs saved; makes no model request.

`read_labels` reads a labels file (harness.agree.labels), `agreement` pairs it with the
sessions under a root (harness.agree.collect), `harness.agree.compute` and
`harness.agree.stats` hold the pure arithmetic, `harness.agree.report` the typed report.
"""

from harness.agree.collect import agreement
from harness.agree.labels import Labels, read_labels
from harness.agree.report import AgreementReport

__all__ = ["AgreementReport", "Labels", "agreement", "read_labels"]
