"""`--fail-if`'s parser on hostile text: a condition or a usage error, nothing else."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.compare.conditions import NAMES, Gate, holds, parse_condition
from harness.errors import UsageError


@given(st.text(max_size=300))
def test_any_text_is_a_condition_or_a_usage_error(text: str) -> None:
    try:
        gate = parse_condition(text)
    except UsageError as exc:
        assert exc.exit_code == 2
        assert "--fail-if" in exc.message
        # What was typed is quoted escaped and cut: no control character, a bounded message.
        assert all(c.isprintable() for c in exc.message)
        assert len(exc.message) < 1200
    else:
        assert gate.name in NAMES and gate.op in ("<", ">")
        assert math.isfinite(gate.threshold)


@given(
    st.sampled_from(NAMES),
    st.sampled_from(["<", ">"]),
    st.decimals(min_value=-99, max_value=99, places=3, allow_nan=False, allow_infinity=False),
    st.sampled_from(["", " ", "  "]),
)
def test_every_well_formed_condition_parses(name: str, op: str, number: object, pad: str) -> None:
    text = f"{pad}{name}{pad}{op}{pad}{number}{pad}"
    gate = parse_condition(text)
    assert (gate.name, gate.op) == (name, op)
    assert gate.threshold == pytest.approx(float(str(number)))


@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-10, max_value=10),
    st.floats(min_value=0, max_value=5),
)
def test_a_gate_holds_only_when_the_whole_interval_lies_beyond(low: float, width: float) -> None:
    high = low + width
    below = Gate("t", "factualAccuracy", "<", 0.0)
    above = Gate("t", "factualAccuracy", ">", 0.0)
    assert holds(below, low, high) is (high < 0)
    assert holds(above, low, high) is (low > 0)
    assert holds(below, None, None) is None


@pytest.mark.parametrize(
    "text",
    [
        "factualAccuracy<-0.3",
        "supported < -0.05",
        "no_quote>0.1",
        "toolEfficiency>+1",
        "completeness<.5",
    ],
)
def test_the_documented_forms(text: str) -> None:
    assert parse_condition(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "factualAccuracy=-0.3",
        "factualAccuracy<-0.3;rm",
        "<1",
        "factualAccuracy<",
        "factualAccuracy<nan",
        "factualAccuracy<inf",
        "factualAccuracy\n<1",
        "ｆactualAccuracy<1",
        "factualAccuracy<1e3",
        "factualAccuracy<١",
    ],
)
def test_hostile_forms_are_refused(text: str) -> None:
    with pytest.raises(UsageError):
        parse_condition(text)


@pytest.mark.parametrize("n", [1, 2, 21, 22, 999, 1000])
def test_the_chunked_resamples_are_the_documented_ones(n: int) -> None:
    import numpy as np

    from harness.compare.stats import RESAMPLES, SEED, resample_chunks

    whole = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    assert (np.concatenate(list(resample_chunks(n))) == whole).all()
