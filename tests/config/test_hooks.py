"""Hook declarations (SPEC sections 3 and 10): the fields of the design's later version, checks
that depend on the event, and numbers as strict as the published schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_hooks.cli import main
from agent_hooks.config import ApplicationConfig, HookEvent, ToolCallHookConfig
from agent_hooks.errors import ConfigError
from tests._support.manifests import CLOCK, hook

REPO = Path(__file__).resolve().parents[2]
MEMORY = {
    "type": "mcp",
    "name": "memory_server",
    "timeout_seconds": 10,
    "server": {"transport": "stdio", "command": "python", "args": ["memory_server.py"]},
}
LATER_DESIGN_MANIFEST: dict[str, Any] = {
    "$schema": "./generated-app-schema.json",
    "toolsets": [MEMORY, CLOCK],
    "hooks_max_concurrency": 4,
    "hooks": [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "relevant-memories",
            "toolset_name": "memory_server",
            "tool_name": "search_memories",
            "arguments": {
                "user_id": "${request.user_id}",
                "query": "${last_user_message.content}",
                "limit": {"$if": "len(messages) > 10", "then": 5, "else": 3},
            },
            "frequency": "append_if_changed",
            "timeout_seconds": 2.5,
            "condition": "last_user_message != null",
            "on_error": "skip",
            "max_content_chars": 4000,
        },
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "profile",
            "toolset_name": "memory_server",
            "tool_name": "get_profile",
            "arguments": {"user_id": "u1", "note": "$${literal}"},
            "frequency": "always",
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 60},
            "on_error": "fail",
        },
        {
            "kind": "tool_call",
            "event": "on_completion",
            "name": "remember-answer",
            "toolset_name": "memory_server",
            "tool_name": "add_memory",
            "arguments": {
                "$let": {"answer": {"$eval": "last_assistant_message.content"}},
                "in": {
                    "user_id": "${request.user_id}",
                    "text": "${answer}",
                    "turns": {"$eval": "iteration_count"},
                    "tools_used": {"$eval": "total_tool_calls"},
                },
            },
            "timeout_seconds": 30,
            "condition": "last_assistant_message != null && iteration_count > 0",
        },
    ],
}


def issues(manifest: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict(manifest, preview=True)
    return [str(issue) for issue in caught.value.issues]


def test_a_manifest_of_the_later_design_validates_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, preview_on: None
) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(LATER_DESIGN_MANIFEST))

    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == ""
    config = ApplicationConfig.from_dict(LATER_DESIGN_MANIFEST, preview=True)
    assert config.max_concurrency == 4
    assert config.hooks is not None
    first, second, third = config.hooks
    assert first.arguments == LATER_DESIGN_MANIFEST["hooks"][0]["arguments"]
    assert (first.timeout_seconds, first.max_content_chars) == (2.5, 4000)
    assert (second.on_error, second.deadline_seconds) == ("fail", 15.0)
    assert (third.event, third.deadline_seconds) == (HookEvent.ON_COMPLETION, 30.0)


def test_the_later_design_manifest_also_satisfies_the_published_schema() -> None:
    schema = json.loads((REPO / "generated-app-schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(LATER_DESIGN_MANIFEST, schema)


def test_frequency_spelled_out_on_a_completion_hook_is_an_error_whatever_its_value() -> None:
    for frequency in ("append_if_changed", "always", None):
        manifest = {
            "toolsets": [CLOCK],
            "hooks": [hook(event="on_completion", frequency=frequency)],
        }
        assert issues(manifest) == [
            "hooks[0].frequency: only on_request_start hooks take frequency (on_completion hooks"
            " inject nothing); remove it"
        ]


def test_a_completion_hook_may_leave_refresh_condition_null_but_not_set_it() -> None:
    ApplicationConfig.from_dict(
        {"hooks": [hook(event="on_completion", refresh_condition=None)], "toolsets": [CLOCK]},
        preview=True,
    )
    ttl = {"kind": "ttl", "ttl_minutes": 5}
    manifest = {"toolsets": [CLOCK], "hooks": [hook(event="on_completion", refresh_condition=ttl)]}
    assert issues(manifest) == [
        "hooks[0].refresh_condition: only on_request_start hooks take refresh_condition"
        " (on_completion hooks inject nothing); remove it"
    ]


@pytest.mark.parametrize(
    "arguments",
    [{"q": "${event}"}, {"$eval": "request"}, {"nested": [{"q": "id ${request.id}"}]}],
)
def test_a_ttl_with_templated_arguments_is_an_error_at_the_refresh_condition(
    arguments: dict[str, Any],
) -> None:
    ttl = {"kind": "ttl", "ttl_minutes": 5}
    manifest = {"toolsets": [CLOCK], "hooks": [hook(arguments=arguments, refresh_condition=ttl)]}
    [issue] = issues(manifest)
    assert issue.startswith("hooks[0].refresh_condition: a TTL cannot be used with templated")


def test_a_ttl_with_a_broken_template_is_reported_with_it_not_after_it_is_fixed() -> None:
    ttl = {"kind": "ttl", "ttl_minutes": 0}
    arguments = {"q": "${last_user_message.content"}
    manifest = {"toolsets": [CLOCK], "hooks": [hook(arguments=arguments, refresh_condition=ttl)]}
    assert issues(manifest) == [
        "hooks[0].arguments.q: invalid JSON-e expression: unterminated '${'"
        " in '${last_user_message.content'",
        "hooks[0].refresh_condition.ttl_minutes: must be greater than 0",
        "hooks[0].refresh_condition: a TTL cannot be used with templated arguments: it would"
        " reuse the answer to one request's arguments for another's; remove refresh_condition",
    ]


def test_a_ttl_with_escaped_template_text_is_fine() -> None:
    ttl = {"kind": "ttl", "ttl_minutes": 5}
    manifest = {
        "toolsets": [CLOCK],
        "hooks": [hook(arguments={"q": "$${not a template}"}, refresh_condition=ttl)],
    }
    ApplicationConfig.from_dict(manifest, preview=True)


def test_template_names_depend_on_the_hook_event() -> None:
    arguments = {"n": {"$eval": "iteration_count"}}
    ToolCallHookConfig.model_validate(hook(event="on_completion", arguments=arguments))
    manifest = {"toolsets": [CLOCK], "hooks": [hook(arguments=arguments)]}
    assert issues(manifest) == [
        "hooks[0].arguments.n.$eval: unknown context value 'iteration_count'"
        " (on_completion hooks only)"
    ]


def test_template_errors_sit_beside_other_errors_of_the_same_hook() -> None:
    manifest = {
        "toolsets": [CLOCK],
        "hooks": [hook(arguments={"q": "${reqest.id}"}, condition="evnt", on_error="never")],
    }
    assert issues(manifest) == [
        "hooks[0].arguments.q: unknown context value 'reqest'",
        "hooks[0].condition: unknown context value 'evnt'",
        "hooks[0].on_error: must be one of 'skip' or 'fail', got 'never'",
    ]


def test_python_code_building_a_hook_gets_the_same_checks() -> None:
    with pytest.raises(ValueError, match="unknown context value 'last_usr_message'"):
        ToolCallHookConfig(
            event=HookEvent.ON_REQUEST_START,
            tool_name="current_time",
            arguments={"q": "${last_usr_message}"},
        )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("timeout_seconds", "5"),
        ("timeout_seconds", True),
        ("max_content_chars", "4000"),
        ("max_content_chars", False),
        ("refresh_condition", {"kind": "ttl", "ttl_minutes": "60"}),
        ("refresh_condition", {"kind": "ttl", "ttl_minutes": True}),
    ],
)
def test_hook_numbers_reject_strings_and_booleans(field: str, value: object) -> None:
    [issue] = issues({"toolsets": [CLOCK], "hooks": [hook(**{field: value})]})
    assert "must be an integer, got" in issue or "must be a number, got" in issue


@pytest.mark.parametrize(("value", "shown"), [("30", "'30'"), (True, "true")])
def test_toolset_timeouts_reject_strings_and_booleans(value: object, shown: str) -> None:
    assert issues({"toolsets": [{**CLOCK, "timeout_seconds": value}]}) == [
        f"toolsets[0].timeout_seconds: must be a number, got {shown}"
    ]


@pytest.mark.parametrize("value", ["4", True, 1.5, 0])
def test_hooks_max_concurrency_is_a_positive_integer(value: object) -> None:
    [issue] = issues({"hooks_max_concurrency": value})
    assert issue.startswith("hooks_max_concurrency: must be")


def test_whole_numbers_written_with_a_fraction_count_as_integers_as_in_json_schema() -> None:
    ttl = {"kind": "ttl", "ttl_minutes": 60.0}
    manifest = {
        "toolsets": [{**CLOCK, "timeout_seconds": 5}],
        "hooks": [hook(refresh_condition=ttl, max_content_chars=100.0)],
        "hooks_max_concurrency": 2.0,
    }
    config = ApplicationConfig.from_dict(manifest, preview=True)
    assert config.hooks is not None
    assert config.hooks[0].refresh_condition is not None
    assert config.hooks[0].refresh_condition.ttl_minutes == 60
    assert type(config.hooks[0].max_content_chars) is int
    assert config.max_concurrency == 2


def test_only_the_dollar_schema_key_names_the_schema() -> None:
    config = ApplicationConfig.model_validate({"$schema": "./schema.json"})
    assert config.schema_ == "./schema.json"
    assert ApplicationConfig(**{"$schema": "./schema.json"}).schema_ == "./schema.json"
    assert issues({"schema_": "./schema.json"}) == ["schema_: unknown key; did you mean '$schema'?"]
