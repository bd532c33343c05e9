"""Rendering hook templates at run time (SPEC section 10): arguments, conditions, and failures
reported as categories that never quote a context value."""

from __future__ import annotations

from typing import Any

import pytest

from agent_hooks.injection._templates import (
    TemplateError,
    condition_holds,
    is_templated,
    render_arguments,
)

SECRET = "s3cr3t-user-text"
CONTEXT: dict[str, Any] = {
    "event": "on_request_start",
    "messages": [{"role": "user", "content": SECRET, "tool_calls": None, "tool_call_id": None}],
    "last_user_message": {
        "role": "user",
        "content": SECRET,
        "tool_calls": None,
        "tool_call_id": None,
    },
    "last_assistant_message": None,
    "request": {"user_id": "u7", "limit": 3, "profile": {"name": SECRET}, "tags": [SECRET]},
}


def render_error(arguments: dict[str, Any]) -> TemplateError:
    with pytest.raises(TemplateError) as caught:
        render_arguments(arguments, CONTEXT)
    assert SECRET not in str(caught.value)
    return caught.value


def test_plain_arguments_come_back_as_an_equal_copy() -> None:
    arguments = {"user_id": "current", "filters": {"tags": ["a"]}, "note": "costs $5"}
    rendered = render_arguments(arguments, CONTEXT)
    assert rendered == arguments
    rendered["filters"]["tags"].append("b")
    assert arguments["filters"]["tags"] == ["a"]


def test_templated_arguments_render_against_the_context_keeping_json_types() -> None:
    arguments = {
        "query": "${last_user_message.content}",
        "user": "user ${request.user_id}",
        "limit": {"$eval": "request.limit * 2"},
        "first": {"$if": "len(messages) == 1", "then": True, "else": False},
        "literal": "$${not a template}",
        "$$key": "escaped",
    }
    assert render_arguments(arguments, CONTEXT) == {
        "query": SECRET,
        "user": "user u7",
        "limit": 6,
        "first": True,
        "literal": "${not a template}",
        "$key": "escaped",
    }


@pytest.mark.parametrize(
    "arguments",
    [{"$eval": "messages"}, {"$eval": "request.user_id"}, {"$if": "false", "then": {}}],
)
def test_arguments_that_do_not_render_to_an_object_cannot_render(
    arguments: dict[str, Any],
) -> None:
    error = render_error(arguments)
    assert (error.path, error.kind) == ("arguments", "result is not an object")
    assert str(error) == "template arguments cannot render: result is not an object"


@pytest.mark.parametrize(
    ("arguments", "path", "kind"),
    [
        ({"q": "${request.user_id.deeper}"}, "arguments.q", "type error"),
        ({"q": {"$eval": "request.profile.nickname"}}, "arguments.q", "missing property"),
        ({"q": "${request.profile}"}, "arguments.q", "interpolation of a non-string value"),
        ({"q": {"$eval": "last_user_message.content + 1"}}, "arguments.q", "type error"),
        ({"q": {"$eval": "request.tags[5]"}}, "arguments.q", "index out of range"),
        ({"q": {"$eval": "request.limit / 0"}}, "arguments.q", "division by zero"),
        (
            {"q": {"$eval": "lowercase(request.limit)"}},
            "arguments.q",
            "invalid arguments to a built-in",
        ),
        ({"q": {"$eval": "number(last_user_message.content)"}}, "arguments", "evaluation error"),
        (
            {"a": [{"b": "${request.profile}"}]},
            "arguments.a[0].b",
            "interpolation of a non-string value",
        ),
        ({"q": {"$eval": "lowercase"}}, "arguments", "uncalled function"),
    ],
)
def test_a_failure_names_its_place_and_kind_but_never_a_context_value(
    arguments: dict[str, Any], path: str, kind: str
) -> None:
    error = render_error(arguments)
    assert (error.path, error.kind) == (path, kind)
    assert str(error) == f"template {path} cannot render: {kind}"


@pytest.mark.parametrize("falsy", ["false", "null", "0", "''", "[]", "{}"])
def test_json_e_falsy_conditions_do_not_hold(falsy: str) -> None:
    assert condition_holds(falsy, CONTEXT) is False


@pytest.mark.parametrize(
    "truthy", ["true", "1", "'x'", "[0]", "{a: 0}", "last_user_message != null", "request"]
)
def test_json_e_truthy_conditions_hold(truthy: str) -> None:
    assert condition_holds(truthy, CONTEXT) is True


def test_a_condition_over_the_context_decides_per_run() -> None:
    condition = "last_assistant_message == null && len(messages) < 3"
    assert condition_holds(condition, CONTEXT) is True
    later = {**CONTEXT, "messages": CONTEXT["messages"] * 3}
    assert condition_holds(condition, later) is False


def test_a_condition_that_cannot_evaluate_is_a_template_error_at_condition() -> None:
    with pytest.raises(TemplateError) as caught:
        condition_holds("last_user_message.content > 3", CONTEXT)
    assert (caught.value.path, caught.value.kind) == ("condition", "type error")
    assert str(caught.value) == "template condition cannot render: type error"
    assert SECRET not in str(caught.value)
    assert caught.value.__cause__ is None


def test_is_templated_is_the_load_time_rule() -> None:
    assert is_templated({"q": "${event}"})
    assert not is_templated({"q": "$${event}"})
