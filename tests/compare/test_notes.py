"""What a comparison says it could not know, true to the case and said once: the cost note
names the side and why (a results file, or a folder's sessions without a usable run record),
and a `--fail-if` condition that was not evaluated says so once in every output.

Built from sides already read (`compare_sides`, the pure part), so each case is exactly
the one named."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from markupsafe import escape

from harness.cli.compare import summary_lines
from harness.compare import compare_sides
from harness.compare.conditions import parse_condition
from harness.compare.sides import ComparedSession, SessionCost, Side
from harness.contract.rubric import DIMENSIONS
from harness.page.compare import render_compare

SPENT = SessionCost(requests=3, tokens={"input": 100, "output": 10}, seconds=2.0)
NAMES = ("s1", "s2")

Kind = Literal["root", "results"]


def side(label: str, kind: Kind, costs: tuple[SessionCost | None, ...]) -> Side:
    sessions = {
        name: ComparedSession(name, None, dict.fromkeys(DIMENSIONS, 3), cost=spent)
        for name, spent in zip(NAMES, costs, strict=True)
    }
    return Side(f"/sides/{label}", kind, sessions)


FOLDER = ("root", (SPENT, SPENT))
RESULTS: tuple[Kind, tuple[None, None]] = ("results", (None, None))
NO_RECORD: tuple[Kind, tuple[None, None]] = ("root", (None, None))
HALF = ("root", (SPENT, None))


@pytest.mark.parametrize(
    ("a", "b", "said", "not_said"),
    [
        (RESULTS, FOLDER, ["A is a results file, which carries no run record"], ["B"]),
        (FOLDER, RESULTS, ["B is a results file, which carries no run record"], ["A "]),
        (RESULTS, RESULTS, ["A and B are results files, which carry no run record"], []),
        (
            FOLDER,
            NO_RECORD,
            ["B's paired sessions have no usable run record"],
            ["results file", "A"],
        ),
        (
            NO_RECORD,
            RESULTS,
            ["A's paired sessions have no usable run record", "B is a results file"],
            [],
        ),
        (HALF, FOLDER, ["A's cost and time are over 1 of its 2 paired sessions"], ["results"]),
    ],
)
def test_the_cost_note_names_the_side_and_why(
    tmp_path: Path,
    a: tuple[Kind, tuple[SessionCost | None, ...]],
    b: tuple[Kind, tuple[SessionCost | None, ...]],
    said: list[str],
    not_said: list[str],
) -> None:
    result = compare_sides(side("A", *a), side("B", *b))
    note = result.cost.note
    assert note is not None
    for words in said:
        assert words in note
    for words in not_said:
        assert words not in note, note
    # The summary and the page say it as it is.
    assert note in summary_lines(result, 400)
    assert str(escape(note)) in render_compare(result, tmp_path)


def test_both_sides_with_their_run_records_have_no_cost_note() -> None:
    result = compare_sides(side("A", *FOLDER), side("B", *FOLDER))
    assert result.cost.note is None
    assert result.cost.a is not None and result.cost.a.sessions == 2


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
