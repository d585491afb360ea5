"""Roots for `judge compare`'s tests: judged once per test session, never edited after."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.compare_roots import (
    ALL,
    ONLY_A,
    ONLY_B,
    SHIFTS,
    VERDICT_SHIFTS,
    judged_root,
    set_scores,
    set_verdicts,
)


@pytest.fixture(scope="session")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A: the labelled set but ONLY_B; B: the set but ONLY_A, with SHIFTS and VERDICT_SHIFTS."""
    base = tmp_path_factory.mktemp("compare")
    a = judged_root(base / "A", [n for n in ALL if n != ONLY_B])
    b = judged_root(base / "B", [n for n in ALL if n != ONLY_A])
    for name, scores in SHIFTS.items():
        set_scores(b / name, **scores)
    for name, verdicts in VERDICT_SHIFTS.items():
        set_verdicts(b / name, verdicts)
    return a, b
