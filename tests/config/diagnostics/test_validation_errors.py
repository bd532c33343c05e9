"""``PATH: message`` lines from pydantic errors: JSON paths, no union tags, actionable wording."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from agent_hooks.config import ApplicationConfig
from agent_hooks.config.diagnostics._validation_errors import (
    format_path,
    issues_from_validation_error,
)
from agent_hooks.errors import ConfigError
from agent_hooks.messages import Message
from tests._support.manifests import hook


def lines(manifest: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict(manifest, preview=True)
    return [str(issue) for issue in caught.value.issues]


def stdio(**server: Any) -> dict[str, Any]:
    return {
        "toolsets": [
            {"type": "mcp", "name": "m", "server": {"transport": "stdio", "command": "x", **server}}
        ]
    }


@pytest.mark.parametrize(
    ("parts", "rendered"),
    [
        ((), "$"),
        (
            ("hooks", 2, "refresh_condition", "ttl_minutes"),
            "hooks[2].refresh_condition.ttl_minutes",
        ),
        (("$schema",), "$schema"),
        (("env", "X-Api-Key"), "env.X-Api-Key"),
        (("env", "MY VAR"), "env['MY VAR']"),
        (("env", "a.b"), "env['a.b']"),
        (("env", ""), "env['']"),
    ],
)
def test_paths_use_dotted_keys_bracketed_indices_and_a_dollar_for_the_root(
    parts: tuple[str | int, ...], rendered: str
) -> None:
    assert format_path(parts) == rendered


def test_a_key_with_a_newline_or_lone_surrogate_cannot_break_the_line() -> None:
    rendered = format_path(("env", "a\nb", "\ud800"))
    assert rendered == "env['a\\nb']['\\ud800']"
    rendered.encode("utf-8")  # printable: no lone surrogate left


def test_discriminator_values_never_appear_in_paths() -> None:
    manifest = {"toolsets": [{"type": "mcp", "name": "m", "server": {"transport": "stdio"}}]}
    assert lines(manifest) == ["toolsets[0].server.command: required field is missing"]


def test_a_scalar_where_a_string_or_env_reference_goes_names_both_shapes() -> None:
    assert lines(stdio(env={"PORT": 8000})) == [
        "toolsets[0].server.env.PORT: must be a string or an object, got 8000"
    ]


def test_an_object_where_a_string_or_env_reference_goes_is_read_as_a_reference() -> None:
    assert lines(stdio(env={"TOKEN": {"name": "T"}})) == [
        "toolsets[0].server.env.TOKEN.env: required field is missing",
        "toolsets[0].server.env.TOKEN.name: unknown key (allowed keys: 'env')",
    ]


def test_an_unknown_key_with_nothing_close_lists_the_allowed_keys() -> None:
    assert lines({"hooks": [hook(ttl=5)]}) == [
        "hooks[0].ttl: unknown key (allowed keys: 'event', 'name', 'kind', 'toolset_name',"
        " 'tool_name', 'arguments', 'frequency', 'refresh_condition', 'timeout_seconds',"
        " 'condition', 'on_error', 'max_content_chars')"
    ]


def test_a_choice_with_one_option_names_it_without_a_suggestion() -> None:
    assert lines({"hooks": [hook(kind="tool_cal")]}) == [
        "hooks[0].kind: must be 'tool_call', got 'tool_cal'"
    ]


def test_a_discriminator_of_the_wrong_type_shows_the_value_as_json() -> None:
    assert lines({"toolsets": [{"type": None, "name": "x"}]}) == [
        "toolsets[0].type: must be one of 'mcp', 'rest-api', 'deployment' or 'internal', got null"
    ]


def test_bounds_are_shown_as_json_numbers() -> None:
    manifest = {"toolsets": [{"type": "internal", "name": "c", "timeout_seconds": -1}]}
    assert lines(manifest) == ["toolsets[0].timeout_seconds: must be greater than 0"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (True, "true"),
        (None, "null"),
        (1.5, "1.5"),
        ([1], "an array"),
        ("", "''"),
        ("x" * 100, repr("x" * 37 + "...")),
        (10**60, "a number with more than 40 digits"),
    ],
)
def test_wrong_values_are_described_briefly_in_json_terms(value: object, shown: str) -> None:
    assert lines({"hooks": [{**hook(), "arguments": value}]}) == [  # null included
        f"hooks[0].arguments: must be an object, got {shown}"
    ]


def test_each_problem_is_reported_once_in_document_order() -> None:
    manifest = {"toolsets": [{"type": "internal"}, {"type": "internal", "name": ""}], "x": 1}
    assert lines(manifest) == [
        "toolsets[0].name: required field is missing",
        "toolsets[1].name: must not be empty",
        "x: unknown key (allowed keys: '$schema', 'toolsets', 'hooks', 'hooks_max_concurrency')",
    ]


def test_cross_reference_errors_keep_the_field_in_their_path() -> None:
    manifest = {"toolsets": [{"type": "internal", "name": "a"}, {"type": "internal", "name": "a"}]}
    assert lines(manifest) == [
        "toolsets[1].name: duplicate toolset name 'a' (first used at toolsets[0])"
    ]


def test_a_top_level_array_of_models_is_walked_item_by_item() -> None:
    data = [{"role": "user", "content": "hi"}, {"role": "user", "content": 5}, {"role": "robot"}]
    with pytest.raises(ValidationError) as caught:
        TypeAdapter(list[Message]).validate_python(data)
    issues = issues_from_validation_error(caught.value, data, Message)
    assert [str(issue) for issue in issues] == [
        "[1].content: must be a string or an array, got 5",
        "[2].role: must be one of 'system', 'developer', 'user', 'assistant', 'tool' or"
        " 'function', got 'robot'",
    ]
