from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.tools import sanitize_toolname


def test_spec_example() -> None:
    assert sanitize_toolname("my server_get data") == "my_server_get_data"


def test_each_run_of_disallowed_characters_becomes_one_underscore() -> None:
    assert sanitize_toolname("a  .:b/c") == "a_b_c"
    assert sanitize_toolname("keep-dash_and_underscore") == "keep-dash_and_underscore"


def test_leading_digit_or_dash_gets_an_underscore_prefix() -> None:
    assert sanitize_toolname("9lives") == "_9lives"
    assert sanitize_toolname("-x") == "_-x"
    assert sanitize_toolname("_x") == "_x"


def test_result_is_cut_to_64_characters() -> None:
    assert sanitize_toolname("a" * 80) == "a" * 64
    assert len(sanitize_toolname("1" + "b" * 70)) == 64


@given(st.text(min_size=1))
def test_output_is_always_a_valid_openai_function_name(name: str) -> None:
    cleaned = sanitize_toolname(name)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cleaned)
    assert not cleaned[0].isdigit()
    assert not cleaned.startswith("-")
    assert sanitize_toolname(cleaned) == cleaned
