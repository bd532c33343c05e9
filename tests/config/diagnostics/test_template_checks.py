"""Load-time template checks (SPEC section 10): every JSON-e expression parsed, root names checked
against the event's context, the built-ins and what ``$let``/``each``/``by`` bind."""

from __future__ import annotations

from typing import Any

import pytest

from agent_hooks.config.diagnostics._template_checks import (
    BUILTIN_NAMES,
    COMPLETION_CONTEXT,
    REQUEST_START_CONTEXT,
    context_names,
    is_templated,
    template_problems,
)

REQUEST_START = context_names("on_request_start")
COMPLETION = context_names("on_completion")


def problems(template: Any, names: frozenset[str] = REQUEST_START) -> list[tuple[Any, str]]:
    return [(problem.loc, problem.message) for problem in template_problems(template, names)]


def condition_problems(condition: str, names: frozenset[str] = REQUEST_START) -> list[str]:
    return [p.message for p in template_problems(condition, names, expression=True)]


@pytest.mark.parametrize(
    "arguments",
    [
        {"q": "${last_user_message.content}"},
        {"q": "Find: ${lowercase(last_user_message.content)} for ${request.user_id}"},
        {"n": {"$eval": "len(messages)"}},
        {"when": {"$eval": "now"}, "soon": {"$fromNow": "1 hour", "from": "${now}"}},
        {"q": {"$if": "last_assistant_message == null", "then": "first", "else": "${event}"}},
        {"q": {"$let": {"text": "${last_user_message.content}"}, "in": "${uppercase(text)}"}},
        {"roles": {"$map": {"$eval": "messages"}, "each(m)": "${m.role}"}},
        {"roles": {"$map": {"$eval": "messages"}, "each(m, i)": {"$eval": "str(i) + m.role"}}},
        {"first": {"$find": {"$eval": "messages"}, "each(m)": "m.role == 'user'"}},
        {"sorted": {"$sort": {"$eval": "messages"}, "by(m)": "m.role"}},
        {"total": {"$reduce": {"$eval": "messages"}, "initial": 0, "each(acc, m)": "${acc}"}},
        {"who": {"$switch": {"request.user == 'a'": "A", "$default": "${event}"}}},
        {"all": {"$match": {"len(messages) > 1": "many", "true": "${event}"}}},
        {"$merge": [{"a": "${request.a}"}, {"b": 1}]},
        {"obj": {"$eval": "{a: request.x, 'b c': [1, 2][0:1]}"}},
        {"q": "${[]}", "r": "${{}}", "s": "${request['x']}", "t": "${-1 + +2 ** 3}"},
        {"${event}": "templated key"},
        {"$$literal": "escaped key", "text": "$${not evaluated}"},
    ],
)
def test_valid_templates_have_no_problems(arguments: dict[str, Any]) -> None:
    assert problems(arguments) == []


def test_an_unknown_root_name_is_named_at_its_string() -> None:
    assert problems({"q": "${last_usr_message.content}"}) == [
        (("q",), "unknown context value 'last_usr_message'")
    ]


def test_property_names_and_object_keys_are_not_context_names() -> None:
    assert problems({"q": "${request.anything} ${{anything: 1}.anything}"}) == []


def test_each_unknown_name_is_reported_once_in_source_order() -> None:
    assert condition_problems("b + a + b") == [
        "unknown context value 'b'",
        "unknown context value 'a'",
    ]


def test_completion_names_are_unknown_to_request_start_hooks() -> None:
    template = {"n": {"$eval": "iteration_count + total_tool_calls"}}
    assert problems(template, COMPLETION) == []
    assert problems(template) == [
        (("n", "$eval"), "unknown context value 'iteration_count' (on_completion hooks only)"),
        (("n", "$eval"), "unknown context value 'total_tool_calls' (on_completion hooks only)"),
    ]


def test_bound_names_exist_only_inside_their_operator() -> None:
    template = {
        "a": {"$let": {"x": 1}, "in": "${x}"},
        "b": "${x}",
        "c": {"$map": [1], "each(y)": "${y}"},
        "d": "${y}",
        "e": {"$let": {"z": "${z}"}, "in": "ok"},
    }
    assert problems(template) == [
        (("b",), "unknown context value 'x'"),
        (("d",), "unknown context value 'y'"),
        (("e", "$let", "z"), "unknown context value 'z'"),
    ]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("${a +}", "an operand is missing in '${a +}'"),
        ("${f(a,)}", "an operand is missing in '${f(a,)}'"),
        ("${}", "empty expression in '${}'"),
        ("x ${request", "unterminated '${' in 'x ${request'"),
        ("${request # x}", "unexpected character '#' in '${request # x}'"),
        ("${request request}", "unexpected 'request' in '${request request}'"),
    ],
)
def test_bad_syntax_in_an_interpolation_names_the_problem(template: str, message: str) -> None:
    assert problems({"q": template}) == [(("q",), f"invalid JSON-e expression: {message}")]


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("event ==", "unexpected end of expression in 'event =='"),
        ("event event", "unexpected 'event' in 'event event'"),
        ("(event", "unexpected end of expression in '(event'"),
        ("event)", "unexpected ')' in 'event)'"),
        ("   ", "empty expression"),
    ],
)
def test_bad_syntax_in_a_condition_names_the_problem(condition: str, message: str) -> None:
    assert condition_problems(condition) == [f"invalid JSON-e expression: {message}"]


def test_echoed_expression_text_is_cut_at_80_characters() -> None:
    [message] = condition_problems("event == (" + "x" * 500)
    assert (
        message
        == f"invalid JSON-e expression: unexpected end of expression in 'event == ({'x' * 67}...'"
    )


def test_a_long_unknown_name_is_cut_at_80_characters() -> None:
    [message] = condition_problems("a" * 500)
    assert message == f"unknown context value '{'a' * 77}...'"


@pytest.mark.parametrize(
    ("template", "loc", "message"),
    [
        ({"$eval": "event", "$if": "event"}, (), "one operator per object"),
        ({"$eval": 3}, ("$eval",), "$eval takes an expression string"),
        ({"$let": {"x": 1}}, (), "$let needs an 'in' key"),
        ({"$let": [1], "in": 1}, ("$let",), "$let takes an object"),
        ({"$if": "event", "than": 1}, ("than",), "$if takes no key 'than'"),
        ({"$map": [1]}, (), "$map needs an each(...) or by(...) key"),
        ({"$map": [1], "each(a, b, c)": 1}, ("each(a, b, c)",), "bad binding 'each(a, b, c)'"),
        ({"$switch": [1]}, ("$switch",), "$switch takes an object"),
        ({"$find": [1], "each(x)": 1}, ("each(x)",), "this value must be an expression string"),
        ({"$oops": 1}, ("$oops",), "'$oops' is not an operator; write '$$oops' for a literal key"),
    ],
)
def test_structural_mistakes_json_e_would_reject_are_reported(
    template: dict[str, Any], loc: tuple[str, ...], message: str
) -> None:
    found = problems(template)
    assert len(found) == 1
    assert found[0][0] == loc
    assert found[0][1].startswith("invalid JSON-e template: ")
    assert message in found[0][1]


def test_builtins_come_from_json_e_itself() -> None:
    assert {"len", "lowercase", "uppercase", "fromNow", "now", "typeof"} <= BUILTIN_NAMES


def test_the_completion_context_extends_the_request_start_context() -> None:
    assert set(COMPLETION_CONTEXT) - set(REQUEST_START_CONTEXT) == {
        "iteration_count",
        "total_tool_calls",
    }


@pytest.mark.parametrize(
    ("arguments", "templated"),
    [
        ({}, False),
        ({"q": "plain", "n": 3, "list": ["a", {"b": None}]}, False),
        ({"q": "costs $5 {not a template}"}, False),
        ({"q": "$${escaped}"}, False),
        ({"q": "${event}"}, True),
        ({"q": "a $${b} ${event}"}, True),
        ({"deep": [{"x": ["${event}"]}]}, True),
        ({"$eval": "request"}, True),
        ({"$$escaped_key": 1}, True),
        ({"user_${event}": 1}, True),
    ],
)
def test_arguments_are_templated_when_json_e_would_change_them(
    arguments: dict[str, Any], templated: bool
) -> None:
    assert is_templated(arguments) is templated
