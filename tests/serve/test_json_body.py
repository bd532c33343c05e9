"""A body's JSON reads as the standard parser reads the body decoded as strict UTF-8, and is
refused as it is refused (SPEC 12.1, 16), whichever way it is read: decoded whole, with its
characters outside the BMP escaped, or parsed from its bytes (one long string with an emoji)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks._json_writer import LONG_STRING_CHARS
from agent_hooks.serve._errors import BadRequest
from agent_hooks.serve._json_body import MAX_DEPTH, MAX_INT_DIGITS, load_json

LONG = "x" * LONG_STRING_CHARS
EMOJI = "\U0001f600"


def oracle(raw: bytes) -> Any:
    """The value, or the refusal's code, from SPEC 12.1 and the standard parser alone."""
    try:
        text = raw.decode("utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else "utf-8")
    except UnicodeDecodeError:
        return "invalid_utf8"
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_digits)
    except _Refused as refused:
        return refused.code
    except RecursionError:
        return "too_deep"
    except ValueError:
        return "invalid_json"
    return _refusal(value) or value


class _Refused(Exception):
    def __init__(self, code: str) -> None:
        self.code = code


def _constant(text: str) -> Any:
    raise _Refused("non_finite_number")


def _float(text: str) -> float:
    if not math.isfinite(value := float(text)):
        raise _Refused("non_finite_number")
    return value


def _digits(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused("number_too_large")
    return int(text)


def _refusal(value: Any, depth: int = 0) -> str | None:
    if isinstance(value, str):
        return "invalid_unicode" if any("\ud800" <= c <= "\udfff" for c in value) else None
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            return "too_deep"
        children = [*value, *value.values()] if isinstance(value, dict) else value
        return next((r for c in children if (r := _refusal(c, depth + 1))), None)
    return None


def read(raw: bytes) -> Any:
    try:
        return load_json(raw).value
    except BadRequest as refused:
        return refused.code


def same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and json.dumps(a) == json.dumps(b)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    [EMOJI, f"a{EMOJI}b", "é中", "\\", '"', "\n"]
)
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=10,
)
_SHAPES = st.sampled_from(["short", "long string", "long string, emoji in it"])


def body(value: Any, shape: str) -> bytes:
    """``value`` in a body: alone, beside a long string, or beside one holding an emoji (the
    body then has few quote characters: it is read from its bytes)."""
    if shape == "long string":
        value = {"v": value, "long": LONG}
    elif shape == "long string, emoji in it":
        value = {"v": value, "long": LONG + EMOJI + LONG}
    return json.dumps(value, ensure_ascii=False).encode()


@given(_VALUES, _SHAPES)
def test_a_body_reads_as_the_standard_parser_reads_it(value: Any, shape: str) -> None:
    raw = body(value, shape)
    assert same(read(raw), oracle(raw))


_EDITS = st.sampled_from(
    [b"\\ud800", b"\\udc00", b"1e999", b"-1e400", b"NaN", b"Infinity", b"\xed\xa0\x80", b"\xff",
     b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xf0\x9f", b"\\", b'"', b",", b"]", b"\x01", b"7" * 4301,
     b"\\\xf0\x9f\x98\x80", b"\xef\xbb\xbf", b"[" * 130]
)  # fmt: skip


@settings(max_examples=300)
@given(_VALUES, _SHAPES, _EDITS, st.data())
def test_a_body_is_refused_as_the_standard_parser_refuses_it(
    value: Any, shape: str, edit: bytes, data: st.DataObject
) -> None:
    raw = body(value, shape)
    at = data.draw(st.integers(0, len(raw)))
    if data.draw(st.booleans()):
        at = data.draw(st.sampled_from([raw.find(b"x" * 8), len(raw) - 8, 0]))
    edited = raw[:at] + edit + raw[at:]
    assert same(read(edited), oracle(edited))


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (b"\\ud800", "invalid_unicode"),
        (b'", "n": 1e999, "o": "', "non_finite_number"),
        (b'", "n": ' + b"7" * 4301 + b', "o": "', "number_too_large"),
        (b"\xed\xa0\x80", "invalid_utf8"),
        (b"\\\xf0\x9f\x98\x80", "invalid_json"),
    ],
)
def test_one_long_string_with_an_emoji_is_refused_as_any_body(text: bytes, code: str) -> None:
    raw = json.dumps({"long": LONG + EMOJI + LONG + "@"}, ensure_ascii=False).encode()
    with pytest.raises(BadRequest) as refused:
        load_json(raw.replace(b"@", text))
    assert refused.value.code == code


def test_an_error_says_where_the_client_wrote_it() -> None:
    """The emoji's escape is longer than the emoji: the position is still the client's."""
    raw = f'{{"a": "{EMOJI}", "b": }}'.encode()
    with pytest.raises(BadRequest) as refused:
        load_json(raw)
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(raw.decode())
    assert str(expected.value) in str(refused.value)


def test_the_long_strings_of_a_body_are_found() -> None:
    assert load_json(json.dumps({"a": [{"b": LONG}]}).encode()).long_strings
    assert not load_json(json.dumps({"a": [{LONG: "b"}]}).encode()).long_strings
    assert not load_json(json.dumps({"a": [{"b": LONG[1:]}]}).encode()).long_strings
