"""Manifest text is decoded as strict JSON, and each decoding failure is one located issue."""

from __future__ import annotations

import pytest

from agent_hooks.config.diagnostics._jsontext import parse_json_text
from agent_hooks.errors import ConfigError


def issues(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_json_text(text, source="manifest.json")
    assert caught.value.source == "manifest.json"
    return [str(issue) for issue in caught.value.issues]


def test_a_syntax_error_names_line_and_column() -> None:
    assert issues('{\n  "toolsets": [\n}') == [
        "$: invalid JSON: expecting value (line 3, column 1)"
    ]


def test_a_leading_byte_order_mark_is_accepted() -> None:
    assert parse_json_text('\ufeff{"toolsets": []}') == {"toolsets": []}


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(constant: str) -> None:
    assert issues(f'{{"timeout_seconds": {constant}}}') == [
        f"$: invalid JSON: {constant} is not a JSON value"
    ]


def test_every_repeated_key_is_reported_where_it_repeats() -> None:
    text = (
        '{"hooks": [], "toolsets": [{"name": "a", "env": {"X": 1, "X": 2}, "name": "b"}],'
        ' "hooks": 1}'
    )
    assert issues(text) == [
        "hooks: key appears more than once in this object; only the last would count",
        "toolsets[0].env.X: key appears more than once in this object; only the last would count",
        "toolsets[0].name: key appears more than once in this object; only the last would count",
    ]


def test_the_same_key_in_different_objects_is_fine() -> None:
    assert parse_json_text('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]


def test_nesting_deeper_than_python_can_decode_is_an_issue_not_a_crash() -> None:
    assert issues("[" * 50_000 + "]" * 50_000) == ["$: invalid JSON: nested too deeply"]


def test_an_integer_python_refuses_to_convert_is_an_issue_not_a_crash() -> None:
    assert issues("-" + "1" * 6000) == ["$: invalid JSON: an integer of 6001 digits is too long"]
