"""`judge agree LABELS`: the command's body (the click command is in harness/cli/main.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.agree.report import AgreementReport


def labels_root(root: Path | None) -> Path:
    """The folder holding the labelled sessions: --root, else $JUDGE_SESSIONS_ROOT, else here."""
    import os

    return root or Path(os.environ.get("JUDGE_SESSIONS_ROOT") or ".")


def agree(labels: Path, root: Path | None, with_self: bool) -> AgreementReport:
    """Read LABELS, pair it with the sessions under the root, compute the report."""
    from harness.agree.labels import read_labels
    from harness.errors import UsageError

    # The labels first, before NumPy and SciPy are loaded (harness.agree says why).
    where = labels_root(root)
    read = read_labels(labels)
    if not read.claims and not read.ratings:
        raise UsageError(f"{labels}: no label in the file; each line is one claim label or rating")
    from harness.agree.collect import agreement
    from harness.run import session_digest

    return agreement(read, where, with_self=with_self, digest=session_digest)


__all__ = ["agree", "labels_root"]
