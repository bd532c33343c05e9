"""JSON written in pieces is what the encoder writes whole, byte for byte (SPEC 16), whatever
the batches and slices: sorted keys, values the encoder converts, surrogates passed through."""

from __future__ import annotations

import io
import json
import tracemalloc
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent_hooks._json_writer import LONG_STRING_CHARS, write_json
from tests._support.strategies import JSON_SCALARS

_LONG = st.builds(
    lambda text, tail: text * (LONG_STRING_CHARS // len(text) + 1) + tail,
    st.text(min_size=1, max_size=3),
    st.sampled_from(["", "é", "中", "\U0001f600", '"\\\n']),
)
"""Strings long enough to be written in slices, in every width of ``str``."""
_VALUES = st.recursive(
    JSON_SCALARS | _LONG,
    lambda inner: st.lists(inner, max_size=70) | st.dictionaries(st.text(), inner),
    max_leaves=12,
)
_SORTED = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


def written(value: Any, **options: Any) -> bytes:
    out = io.BytesIO()
    write_json(value, out.write, **options)
    return out.getvalue()


@given(_VALUES)
def test_a_value_is_written_as_the_encoder_writes_it(value: Any) -> None:
    assert written(value) == json.dumps(value, ensure_ascii=False).encode()


@given(st.dictionaries(st.text(), _VALUES))
def test_sorted_keys_and_surrogates_passed_through_are_written_as_the_encoder_writes_them(
    value: dict[str, Any],
) -> None:
    value = {**value, "lone": "\ud800", "other": object()}
    expected = _SORTED.encode(value).encode("utf-8", "surrogatepass")
    assert written(value, encoder=_SORTED, errors="surrogatepass") == expected


def test_a_body_said_to_hold_no_long_string_is_written_the_same() -> None:
    value = {"messages": [{"role": "user", "content": f"{n} é 中"} for n in range(500)]}
    assert written(value, long_strings=False) == json.dumps(value, ensure_ascii=False).encode()


def test_a_long_string_with_an_emoji_is_written_without_a_string_of_it_whole() -> None:
    """A ``str`` of it escaped would be four bytes a character, beside the one written."""
    text = "x" * 8 * 1024 * 1024 + "\U0001f600"
    value = {"messages": [{"role": "user", "content": text}], "stream": True}
    tracemalloc.start()
    try:
        out = written(value)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out == json.dumps(value, ensure_ascii=False).encode()
    assert peak < 2 * len(out)
