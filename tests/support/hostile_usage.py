"""Generators of the token usage a hostile model or API may send (issue 22 §4): every
count of a reply negative, huge, fractional, not a number, missing or of another type."""

from __future__ import annotations

from hypothesis import strategies as st

from harness.usage import USAGE_FIELDS

HOSTILE_COUNT = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
# Every field present, each count hostile.
EVERY_COUNT = st.fixed_dictionaries({name: HOSTILE_COUNT for name in USAGE_FIELDS})
