"""What a comparison says it could not know, said once: a `--fail-if` condition that was
not evaluated says so once in every output.

Built from sides already read (`compare_sides`, the pure part), so each case is exactly
the one named."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.compare import summary_lines
from harness.compare import compare_sides
from harness.compare.conditions import parse_condition
from harness.compare.sides import ComparedSession, Side
from harness.contract.rubric import DIMENSIONS
from harness.page.compare import render_compare


def _outputs(tmp_path: Path) -> dict[str, str]:
    gate = parse_condition("factualAccuracy<-0.3")
    a = Side("/sides/A", "root", {"s1": ComparedSession("s1", None, dict.fromkeys(DIMENSIONS, 3))})
    b = Side("/sides/B", "root", {"s1": ComparedSession("s1", None, dict.fromkeys(DIMENSIONS, 1))})
    result = compare_sides(a, b, gates=[gate])  # one pair: no interval, not evaluated
    [condition] = result.conditions
    assert condition.evaluated is False
    page = render_compare(result, tmp_path)
    return {
        "text": next(x for x in summary_lines(result, 400) if x.startswith("--fail-if")),
        "json why": result.to_dict()["conditions"][0]["why"],
        "page": next(x for x in page.splitlines() if "--fail-if" in x),
    }


@pytest.mark.parametrize("output", ["text", "json why", "page"])
def test_a_condition_not_evaluated_says_so_once(tmp_path: Path, output: str) -> None:
    line = _outputs(tmp_path)[output]
    assert line.count("not evaluated") == 1, line
    assert "factualAccuracy has no interval" in line
