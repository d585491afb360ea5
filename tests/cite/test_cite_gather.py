"""Gather, pure: filters, failed windows, screened findings and role filling."""

from __future__ import annotations

from collections.abc import Mapping

from harness.cite.gather import Gathered, gather
from tests.support.cite_builders import concerns, factored, screened

IDS = ["p1", "p2", "p3", "p4"]


def scores(**by_passage: Mapping[str, float] | None) -> dict[str, Mapping[str, float] | None]:
    return dict(by_passage)


def test_a_passage_failing_any_filter_is_set_aside() -> None:
    c = concerns(screened("a"), filters=("quoted", "english"))
    s = scores(
        p1={"quoted": 0.9, "english": 0.9, "a": 0.9},
        p2={"quoted": 0.9, "english": 0.5, "a": 0.9},  # at threshold: no match, fails
        p3={"quoted": 0.1, "english": 0.9, "a": 0.9},
        p4={"quoted": 0.9, "english": 0.9, "a": 0.2},
    )
    found, aside = gather(IDS, c, s, 0.5)
    assert found == [Gathered(0, ("p1",))]
    assert aside == ["p2", "p3"]


def test_a_passage_whose_window_failed_is_set_aside() -> None:
    c = concerns(screened("a"))
    found, aside = gather(["p1", "p2"], c, scores(p1=None, p2={"a": 0.9}), 0.5)
    assert found == [Gathered(0, ("p2",))]
    assert aside == ["p1"]


def test_a_screened_concern_gathers_every_remaining_match_into_one_finding() -> None:
    c = concerns(screened("a"))
    s = scores(p1={"a": 0.9}, p2={"a": 0.1}, p3={"a": 0.7}, p4={"a": 0.51})
    found, _ = gather(IDS, c, s, 0.5)
    assert found == [Gathered(0, ("p1", "p3", "p4"))]


def test_a_passage_matching_several_concerns_is_evidence_for_each() -> None:
    c = concerns(screened("a"), screened("b"))
    s = scores(p1={"a": 0.9, "b": 0.9}, p2={"a": 0.9, "b": 0.1})
    found, _ = gather(["p1", "p2"], c, s, 0.5)
    assert found == [Gathered(0, ("p1", "p2")), Gathered(1, ("p1",))]


def test_a_concern_with_no_match_has_no_finding() -> None:
    found, aside = gather(["p1"], concerns(screened("a")), scores(p1={"a": 0.2}), 0.5)
    assert found == [] and aside == []


def test_a_factored_role_takes_its_strongest_match() -> None:
    c = concerns(factored("x", [("fix", "f", True, False)]), factors=("f",))
    s = scores(p1={"f": 0.6}, p2={"f": 0.95}, p3={"f": 0.7}, p4={"f": 0.2})
    found, _ = gather(IDS, c, s, 0.5)
    assert found == [Gathered(0, ("p2",), (("fix", "p2"),))]


def test_a_tie_between_matches_goes_to_the_earlier_passage() -> None:
    c = concerns(factored("x", [("fix", "f", True, False)]), factors=("f",))
    s = scores(p1={"f": 0.6}, p2={"f": 0.8}, p3={"f": 0.8}, p4={"f": 0.2})
    found, _ = gather(IDS, c, s, 0.5)
    assert found[0].roles == (("fix", "p2"),)


def test_roles_that_are_not_distinct_may_share_a_passage() -> None:
    c = concerns(factored("x", [("a", "f", True, False), ("b", "f", True, False)]), factors=("f",))
    s = scores(p1={"f": 0.6}, p2={"f": 0.9})
    found, _ = gather(["p1", "p2"], c, s, 0.5)
    assert found == [Gathered(0, ("p2",), (("a", "p2"), ("b", "p2")))]


def test_a_distinct_role_takes_the_strongest_match_no_other_role_holds() -> None:
    # `later` is listed first but distinct, so it avoids what `fault` holds.
    c = concerns(
        factored("x", [("later", "f", True, True), ("fault", "f", True, False)]),
        factors=("f",),
    )
    s = scores(p1={"f": 0.6}, p2={"f": 0.9}, p3={"f": 0.7})
    found, _ = gather(["p1", "p2", "p3"], c, s, 0.5)
    assert found == [Gathered(0, ("p2", "p3"), (("later", "p3"), ("fault", "p2")))]


def test_two_distinct_roles_take_different_passages() -> None:
    c = concerns(factored("x", [("a", "f", True, True), ("b", "f", True, True)]), factors=("f",))
    s = scores(p1={"f": 0.6}, p2={"f": 0.9}, p3={"f": 0.1})
    found, _ = gather(["p1", "p2", "p3"], c, s, 0.5)
    assert found[0].roles == (("a", "p2"), ("b", "p1"))


def test_an_empty_required_role_means_no_finding() -> None:
    c = concerns(
        factored("x", [("a", "f", True, False), ("b", "g", True, False)]), factors=("f", "g")
    )
    s = scores(p1={"f": 0.9, "g": 0.3}, p2={"f": 0.2, "g": 0.5})
    found, _ = gather(["p1", "p2"], c, s, 0.5)
    assert found == []


def test_a_distinct_role_left_empty_by_sharing_means_no_finding() -> None:
    c = concerns(factored("x", [("a", "f", True, False), ("b", "f", True, True)]), factors=("f",))
    found, _ = gather(["p1"], c, scores(p1={"f": 0.9}), 0.5)
    assert found == []


def test_an_empty_optional_role_still_makes_a_finding() -> None:
    c = concerns(
        factored("x", [("a", "f", True, False), ("b", "g", False, False)]), factors=("f", "g")
    )
    found, _ = gather(["p1"], c, scores(p1={"f": 0.9, "g": 0.1}), 0.5)
    assert found == [Gathered(0, ("p1",), (("a", "p1"),))]


def test_a_factored_concern_with_every_role_empty_has_no_finding() -> None:
    c = concerns(factored("x", [("a", "f", False, False)]), factors=("f",))
    found, _ = gather(["p1"], c, scores(p1={"f": 0.1}), 0.5)
    assert found == []


def test_factored_roles_draw_only_on_passages_that_pass_the_filters() -> None:
    c = concerns(factored("x", [("a", "f", True, False)]), filters=("ok",), factors=("f",))
    s = scores(p1={"ok": 0.1, "f": 0.99}, p2={"ok": 0.9, "f": 0.6})
    found, aside = gather(["p1", "p2"], c, s, 0.5)
    assert found[0].roles == (("a", "p2"),) and aside == ["p1"]
