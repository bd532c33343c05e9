"""Cross-references that cannot work are errors at the field to change (SPEC section 3)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_hooks.config import ApplicationConfig
from agent_hooks.config.diagnostics._references import reference_warnings
from agent_hooks.errors import ConfigError
from tests._support.manifests import CLOCK, hook


def mcp(name: str) -> dict[str, Any]:
    return {"type": "mcp", "name": name, "server": {"transport": "stdio", "command": "python"}}


def errors(toolsets: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> list[str]:
    try:
        ApplicationConfig.from_dict({"toolsets": toolsets, "hooks": hooks}, preview=True)
    except ConfigError as exc:
        return [str(issue) for issue in exc.issues]
    return []


def test_a_repeated_toolset_name_is_reported_at_each_later_use() -> None:
    assert errors([CLOCK, mcp("clock"), CLOCK], []) == [
        "toolsets[1].name: duplicate toolset name 'clock' (first used at toolsets[0])",
        "toolsets[2].name: duplicate toolset name 'clock' (first used at toolsets[0])",
    ]


def test_a_repeated_hook_name_is_an_error_but_unnamed_hooks_never_collide() -> None:
    hooks = [hook(), hook(), hook(name="t"), hook(name="t")]
    assert errors([CLOCK], hooks) == [
        "hooks[3].name: duplicate hook name 't' (first used at hooks[2])"
    ]


def test_an_undeclared_toolset_suggests_the_closest_declared_one() -> None:
    hooks = [hook(toolset_name="memory_sever", tool_name="get_memories")]
    assert errors([mcp("memory_server"), CLOCK], hooks) == [
        "hooks[0].toolset_name: no toolset named 'memory_sever'; did you mean 'memory_server'?"
        " (declared toolsets: 'memory_server', 'clock')"
    ]


def test_an_undeclared_toolset_with_no_toolsets_at_all_says_so() -> None:
    assert errors([], [hook(toolset_name="memory")]) == [
        "hooks[0].toolset_name: no toolset named 'memory' (declared toolsets: (none))"
    ]


@pytest.mark.parametrize(
    "toolset",
    [CLOCK, {"type": "deployment", "name": "clock", "endpoint": "https://dial.example.com"}],
)
def test_naming_a_toolset_whose_tools_keep_their_names_is_a_warning(
    toolset: dict[str, Any],
) -> None:
    assert errors([toolset], [hook(toolset_name="clock")]) == []
    config = ApplicationConfig.from_dict(
        {"toolsets": [toolset], "hooks": [hook(toolset_name="clock")]}, preview=True
    )
    assert [str(issue) for issue in reference_warnings(config)] == [
        f"hooks[0].toolset_name: toolset 'clock' has type {toolset['type']!r}, whose tools keep"
        " their own names, so this hook calls 'clock_current_time'; remove toolset_name and give"
        " the tool's name in tool_name"
    ]


def test_naming_an_mcp_or_rest_toolset_is_how_prefixed_tools_are_addressed() -> None:
    rest = {"type": "rest-api", "name": "prefs", "base_url": "https://prefs.example.com"}
    hooks = [hook(toolset_name="memory", tool_name="get"), hook(toolset_name="prefs")]
    assert errors([mcp("memory"), rest], hooks) == []


def test_a_final_name_of_exactly_64_characters_is_fine_and_65_is_an_error() -> None:
    toolset = "m" * 30
    fits = hook(toolset_name=toolset, tool_name="t" * 33)  # 30 + "_" + 33 = 64
    cut = hook(toolset_name=toolset, tool_name="t" * 34)
    assert errors([mcp(toolset)], [fits, cut]) == [
        f"hooks[1].tool_name: final tool name '{toolset}_{'t' * 34}' is 65 characters;"
        " the limit is 64"
    ]


def test_the_length_is_measured_after_sanitising_the_name() -> None:
    toolset = "my  server"  # a run of spaces becomes one "_"
    hooks = [hook(toolset_name=toolset, tool_name="get  data" + "x" * 46)]  # 9 + 1 + 54
    assert errors([mcp(toolset)], hooks) == []


def test_a_verbatim_tool_name_over_the_limit_is_an_error() -> None:
    assert errors([CLOCK], [hook(tool_name="x" * 65)]) == [
        f"hooks[0].tool_name: final tool name '{'x' * 65}' is 65 characters; the limit is 64"
    ]


def test_hooks_are_not_cross_checked_when_preview_drops_them() -> None:
    manifest = {"toolsets": [CLOCK], "hooks": [hook(toolset_name="nowhere")]}
    assert ApplicationConfig.from_dict(manifest, preview=False).hooks is None


def test_declared_rest_and_deployment_tools_must_fit_the_64_character_limit() -> None:
    rest = {
        "type": "rest-api",
        "name": "preferences_api",
        "base_url": "https://prefs.example.com",
        "tools": [{"name": "ok", "path": "/ok"}, {"name": "g" * 50, "path": "/long"}],
    }
    deployment = {
        "type": "deployment",
        "endpoint": "https://dial.example.com",
        "tools": [{"name": "S" * 65, "deployment": "d"}],
    }
    long_rest = "preferences_api_" + "g" * 50
    assert errors([rest, deployment], []) == [
        f"toolsets[0].tools[1].name: final tool name {long_rest!r} is 66 characters;"
        " the limit is 64",
        f"toolsets[1].tools[0].name: final tool name {'S' * 65!r} is 65 characters;"
        " the limit is 64",
    ]


def test_references_are_checked_alongside_errors_elsewhere_in_the_manifest() -> None:
    long_tool = "t" * 70
    tools = [{"name": long_tool, "path": 7}]
    api = {"type": "rest-api", "name": "api", "base_url": "http://api", "tools": tools}
    assert errors(
        [{**CLOCK, "name": "kb", "timeout_seconds": 0}, mcp("kb"), api],
        [hook(name="a", condition="${"), hook(name="a", toolset_name="kb2")],
    ) == [
        "toolsets[0].timeout_seconds: must be greater than 0",
        "toolsets[1].name: duplicate toolset name 'kb' (first used at toolsets[0])",
        "toolsets[2].tools[0].path: must be a string, got 7",
        f"toolsets[2].tools[0].name: final tool name 'api_{long_tool}' is 74 characters;"
        " the limit is 64",
        "hooks[0].condition: invalid JSON-e expression: unexpected character '$' in '${'",
        "hooks[1].name: duplicate hook name 'a' (first used at hooks[0])",
        "hooks[1].toolset_name: no toolset named 'kb2'; did you mean 'kb'?"
        " (declared toolsets: 'kb', 'api')",
    ]


@pytest.mark.parametrize(
    "toolsets",
    [
        {"not": "an array"},
        [CLOCK, {"type": "internal", "tools": []}],
        [CLOCK, {"type": "internal", "name": 7}],
        [CLOCK, "clock"],
    ],
    ids=["toolsets not an array", "a name missing", "a name not a string", "not an object"],
)
def test_toolset_name_is_not_judged_while_a_toolset_name_is_unreadable(toolsets: Any) -> None:
    found = errors(toolsets, [hook(toolset_name="notes")])
    assert found
    assert not any("toolset_name" in line for line in found)


def test_hooks_ignored_with_preview_off_are_not_cross_checked() -> None:
    manifest = {"toolsets": [CLOCK, {**CLOCK, "timeout_seconds": 0}], "hooks": [hook(name=1)]}
    with pytest.raises(ConfigError) as raised:
        ApplicationConfig.from_dict(manifest, preview=False)
    assert [str(issue) for issue in raised.value.issues] == [
        "toolsets[1].timeout_seconds: must be greater than 0",
        "toolsets[1].name: duplicate toolset name 'clock' (first used at toolsets[0])",
    ]
