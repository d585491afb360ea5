"""`judge doctor`: is the set-up right, before a batch is spent on it?

A run never blocks the pipeline: a wrong ANTHROPIC_BASE_URL ends in the advisory
all-Unknown judge.json and exit 0. So a person checks first: each check one line, ✓ or ✗
with the fix; what the checks spent; exit 1 on any ✗ (or on a check that could not be
made). The API checks are harness.model.doctor's (the only package that knows the SDK);
the session root's is here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness.session.loader import ENV_ROOT

MARKS = {True: "✓", False: "✗", None: "-"}


def root_check(root: Path | None) -> Any:
    """The session root (--root, else $JUDGE_SESSIONS_ROOT, else the current folder) can be
    listed; how many session folders it holds."""
    from harness.batch.discover import is_session
    from harness.model.doctor import DoctorCheck

    if root is not None:
        base, source = root.expanduser(), "--root"
    elif os.environ.get(ENV_ROOT):
        base, source = Path(os.environ[ENV_ROOT]).expanduser(), f"${ENV_ROOT}"
    else:
        base, source = Path.cwd(), "the current folder"
    try:
        names = os.listdir(base)
    except OSError as exc:
        return DoctorCheck(
            "session root",
            False,
            f"{base} ({source}) cannot be read: {exc.strerror or exc}",
            "pass --root DIR (or set $JUDGE_SESSIONS_ROOT) to a folder you can read",
        )
    found = sum(1 for n in names if not n.startswith(".") and is_session(base / n))
    if is_session(base):
        what = "is itself a session folder (judge run it; judge batch wants the folder above)"
    elif found:
        what = f"holds {found} session folder(s)"
    else:  # readable, but a SESSION id or `judge batch` would find nothing here
        what = (
            "holds no session folder (one holds findings/, sources.json, answer.md or "
            "trace.jsonl): pass --root DIR, or set $JUDGE_SESSIONS_ROOT, to the folder the "
            "pipeline writes its sessions into"
        )
    return DoctorCheck("session root", True, f"{base} ({source}) is readable and {what}")


def diagnose(
    *,
    model: str,
    cite_model: str,
    no_cite: bool,
    max_output_tokens: int,
    batch_api: bool,
    root: Path | None,
    timeout: float,
) -> dict[str, Any]:
    """Every check, as one document: {"ok", "endpoint", "checks": [...], "spent": {...}}."""
    from harness.model.doctor import check_api

    checks, spent, url = check_api(
        model=model,
        cite_model=None if no_cite else cite_model,
        max_output_tokens=max_output_tokens,
        batch_api=batch_api,
        timeout=timeout,
    )
    checks.append(root_check(root))
    return {
        "ok": all(c.ok is True for c in checks),
        "endpoint": url or None,
        "checks": [c.as_dict() for c in checks],
        "spent": spent.as_dict(),
        "spentLine": spent.line(),
    }


def lines(document: dict[str, Any]) -> list[str]:
    """One line a check (✓ / ✗ / - not checked, what was found, the fix), then the cost."""
    out = []
    for check in document["checks"]:
        line = f"{MARKS[check['ok']]} {check['check']}: {check['detail']}"
        if check["fix"] and check["ok"] is not True:
            line += f" -> {check['fix']}"
        out.append(line)
    out.append(document["spentLine"])
    verdict = "all checks passed" if document["ok"] else "some checks failed (exit 1)"
    out.append(f"judge doctor: {verdict}")
    return out


__all__ = ["diagnose", "lines", "root_check"]
