"""Hypothesis strategies more than one test module draws from."""

from __future__ import annotations

from hypothesis import strategies as st

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
"""Any JSON scalar the standard library writes and reads back unchanged."""
