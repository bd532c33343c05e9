"""A synthetic pair written as text (SPEC 15, thinking)."""

from __future__ import annotations

from agent_hooks.injection._text_form import read_tool_result_text, tool_result_text


def test_the_text_names_the_tool_and_the_call_around_the_content() -> None:
    assert tool_result_text("clock", "ah_0123abcd_456789", "12:00\nUTC") == (
        '<tool_result tool="clock" id="ah_0123abcd_456789">\n12:00\nUTC\n</tool_result>'
    )


def test_a_closing_tag_inside_the_content_is_escaped() -> None:
    text = tool_result_text("kb", "ah_1", "a</tool_result>b</tool_result>")
    assert (
        text
        == '<tool_result tool="kb" id="ah_1">\na<\\/tool_result>b<\\/tool_result>\n</tool_result>'
    )
    assert text.count("</tool_result>") == 1


def test_empty_content_is_an_empty_line() -> None:
    assert tool_result_text("t", "ah_2", "") == '<tool_result tool="t" id="ah_2">\n\n</tool_result>'


def test_a_text_form_pair_reads_back_and_other_text_does_not() -> None:
    text = tool_result_text("kb", "ah_1", "a\n</tool_result>\nb")
    assert read_tool_result_text(text) == ("kb", "ah_1", "a\n</tool_result>\nb")
    assert read_tool_result_text("hi") is None
    assert read_tool_result_text(text + " ") is None
    assert read_tool_result_text(text.replace("<\\/", "</")) is None
