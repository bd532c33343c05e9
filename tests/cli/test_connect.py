"""``validate --connect`` against real MCP servers (the example one and one with typed tools), an
unreachable URL and a silent server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.cli import main
from agent_hooks.cli._connect import connection_issues
from agent_hooks.config import ApplicationConfig
from agent_hooks.errors import ConfigError
from tests._support.manifests import CLOCK, hook
from tests.servers.processes import MEMORY_SERVER, SERVERS, free_port


def memory_server(db: Path, name: str = "memory_server") -> dict[str, Any]:
    """The example server over stdio, on its own database so tests never share state."""
    command = [str(MEMORY_SERVER), "--db", str(db)]
    server = {"transport": "stdio", "command": sys.executable, "args": command}
    return {"type": "mcp", "name": name, "timeout_seconds": 30, "server": server}


def unreachable(name: str = "remote") -> dict[str, Any]:
    """A streamable HTTP server on a port nothing listens on."""
    url = f"http://127.0.0.1:{free_port()}/mcp"
    server = {"transport": "streamable_http", "url": url}
    return {"type": "mcp", "name": name, "timeout_seconds": 5, "server": server}


TYPED_SERVER = SERVERS / "typed_mcp_server.py"


def typed_server(**fields: Any) -> dict[str, Any]:
    """A server whose tools have required and typed parameters (``tests/servers``)."""
    server = {"transport": "stdio", "command": sys.executable, "args": [str(TYPED_SERVER)]}
    return {"type": "mcp", "name": "typed", "timeout_seconds": 30, "server": server, **fields}


def config(toolsets: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> ApplicationConfig:
    return ApplicationConfig.from_dict({"toolsets": toolsets, "hooks": hooks}, preview=True)


async def lines(toolsets: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> list[str]:
    return [str(issue) for issue in await connection_issues(config(toolsets, hooks))]


def processes_mentioning(marker: str) -> list[str]:
    """Command lines of live processes that contain ``marker`` (Linux ``/proc``)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process ended while we looked
            continue
        if marker in text:
            found.append(text)
    return found


def test_a_typo_in_a_tool_name_is_reported_with_the_closest_tool_of_the_example_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, preview_on: None
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        config(
            [memory_server(tmp_path / "memories.sqlite3"), CLOCK],
            [
                hook("get_memories", "memory_server", {"user_id": "current"}),
                hook("get_memorys", "memory_server"),
                hook("forget_everything", "memory_server"),
                hook("current_time"),
                hook("memory_server_add_memory", arguments={"user_id": "u", "text": "t"}),
            ],
        ).model_dump_json(by_alias=True, exclude_none=True)
    )

    code = main(["validate", "--connect", str(manifest)])

    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "hooks[1].tool_name: toolset 'memory_server' has no tool 'get_memorys';"
        " did you mean 'get_memories'?",
        "hooks[2].tool_name: toolset 'memory_server' has no tool 'forget_everything'"
        " (available tools: 'get_memories', 'search_memories', 'add_memory')",
    ]
    assert code == 2
    assert captured.err == ""


async def test_a_manifest_whose_tools_all_exist_has_no_issues(tmp_path: Path) -> None:
    toolsets = [memory_server(tmp_path / "memories.sqlite3"), CLOCK]
    hooks = [
        hook("add_memory", "memory_server", {"user_id": "u", "text": "t"}),
        hook("current_time"),
    ]
    assert await lines(toolsets, hooks) == []


async def test_every_toolset_is_closed_after_the_check(tmp_path: Path) -> None:
    db = tmp_path / "closed-after-check.sqlite3"
    await lines([memory_server(db)], [hook("get_memories", "memory_server")])
    assert processes_mentioning(str(db)) == []


async def test_an_unreachable_url_is_one_line_for_its_toolset_and_its_hooks_are_not_judged() -> (
    None
):
    found = await lines([unreachable(), CLOCK], [hook("anything", "remote"), hook("current_time")])

    assert len(found) == 1
    assert found[0].startswith("toolsets[0]: cannot reach toolset 'remote': ")


async def test_a_server_that_never_answers_times_out_after_its_timeout_seconds() -> None:
    silent = {
        "type": "mcp",
        "name": "silent",
        "timeout_seconds": 0.5,
        "server": {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-c", "import sys; sys.stdin.read()"],
        },
    }
    assert await lines([silent], []) == [
        "toolsets[0]: cannot reach toolset 'silent': timed out after 0.5 seconds"
    ]


async def test_one_unreachable_toolset_does_not_hide_a_missing_tool_in_another(
    tmp_path: Path,
) -> None:
    toolsets = [unreachable(), memory_server(tmp_path / "memories.sqlite3")]
    found = await lines(toolsets, [hook("add_memroy", "memory_server")])

    assert found[0].startswith("toolsets[0]: cannot reach toolset 'remote': ")
    assert found[1:] == [
        "hooks[0].tool_name: toolset 'memory_server' has no tool 'add_memroy';"
        " did you mean 'add_memory'?"
    ]


async def test_a_verbatim_tool_name_is_looked_up_in_every_toolset() -> None:
    assert await lines([CLOCK], [hook("current_tim")]) == [
        "hooks[0].tool_name: no toolset has a tool named 'current_tim';"
        " did you mean 'current_time'?"
    ]


async def test_a_verbatim_name_an_unreachable_toolset_could_own_is_not_judged() -> None:
    found = await lines([unreachable(), CLOCK], [hook("remote_search")])
    assert [line.split(":", 1)[0] for line in found] == ["toolsets[0]"]


async def test_an_unreachable_toolset_does_not_hide_a_typo_it_could_never_own() -> None:
    found = await lines([unreachable(), CLOCK], [hook("current_tim")])
    assert [line.split(":", 1)[0] for line in found] == ["toolsets[0]", "hooks[0].tool_name"]
    assert found[1].endswith("did you mean 'current_time'?")


async def test_an_internal_tool_nobody_registered_is_a_config_error_before_any_contact() -> None:
    with pytest.raises(ConfigError) as caught:
        await lines([{"type": "internal", "name": "clock", "tools": ["curent_time"]}], [])
    assert [issue.path for issue in caught.value.issues] == ["toolsets[0].tools[0]"]
    assert "did you mean 'current_time'?" in caught.value.issues[0].message


async def test_a_registered_tool_without_a_toolset_counts_as_existing() -> None:
    config = ApplicationConfig.from_dict(
        {
            "hooks": [
                {"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}
            ]
        },
        preview=True,
    )
    assert await connection_issues(config) == []


async def test_literal_arguments_are_checked_against_the_tools_input_schema() -> None:
    found = await lines(
        [typed_server()],
        [
            hook("search", "typed", {"query": "cats", "max_count": "many"}),
            hook("search", "typed", {"max_count": 500}),
            hook("tag", "typed", {"name": 1, "tags": ["a", 2], "level": "medium"}),
            hook("search", "typed", {"query": "dogs", "max_count": 3}),
        ],
    )

    assert found == [
        "hooks[0].arguments.max_count: 'many' is not of type 'integer'",
        "hooks[1].arguments.max_count: 500 is greater than the maximum of 100",
        "hooks[1].arguments.query: required by tool 'typed_search' but missing",
        "hooks[2].arguments.name: 1 is not of type 'string'",
        "hooks[2].arguments.tags[1]: 2 is not of type 'string'",
        "hooks[2].arguments.level: 'medium' is not one of ['low', 'high']",
    ]


def test_the_cli_exits_2_with_one_line_per_argument_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, preview_on: None
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        config([typed_server()], [hook("search", "typed", {"max_count": "many"})]).model_dump_json(
            by_alias=True, exclude_none=True
        )
    )

    code = main(["validate", "--connect", str(manifest)])

    assert capsys.readouterr().out.splitlines() == [
        "hooks[0].arguments.max_count: 'many' is not of type 'integer'",
        "hooks[0].arguments.query: required by tool 'typed_search' but missing",
    ]
    assert code == 2


async def test_templated_values_are_not_checked_but_count_as_present() -> None:
    found = await lines(
        [typed_server()],
        [
            hook("search", "typed", {"query": "${last_user_message.content}", "max_count": 3}),
            hook("search", "typed", {"query": "q", "max_count": {"$eval": "len(messages)"}}),
            hook("tag", "typed", {"name": "n", "tags": ["${event}", 7]}),
        ],
    )
    assert found == []


async def test_an_escaped_dollar_brace_is_a_literal_string_and_is_checked() -> None:
    found = await lines(
        [typed_server()], [hook("search", "typed", {"query": "q", "max_count": "$${n}"})]
    )
    assert found == ["hooks[0].arguments.max_count: '$${n}' is not of type 'integer'"]


async def test_a_top_level_template_operator_hides_which_keys_are_missing() -> None:
    arguments = {"$let": {"n": 3}, "in": {"query": "q", "max_count": "${n}"}}
    assert await lines([typed_server()], [hook("search", "typed", arguments)]) == []


async def test_a_nested_model_is_checked_through_its_schema_reference() -> None:
    found = await lines(
        [typed_server()],
        [hook("page", "typed", {"query": "q", "window": {"offset": "0", "limit": 99}})],
    )
    assert found == [
        "hooks[0].arguments.window.offset: '0' is not of type 'integer'",
        "hooks[0].arguments.window.limit: 99 is greater than the maximum of 50",
    ]


async def test_the_schemas_own_draft_is_used_and_unknown_keys_are_named_when_forbidden() -> None:
    found = await lines(
        [typed_server()],
        [
            hook("strict", "typed", {"mode": "x", "level": 5}),
            hook("strict", "typed", {"mode": "x", "levle": 1}),
        ],
    )
    assert found == [
        "hooks[0].arguments.level: 5 is greater than or equal to the maximum of 5",
        "hooks[1].arguments.levle: unknown key; did you mean 'level'?",
    ]


async def test_a_long_value_is_cut_in_the_error_line() -> None:
    found = await lines(
        [typed_server()], [hook("search", "typed", {"query": "q", "max_count": "x" * 500})]
    )
    assert found == [f"hooks[0].arguments.max_count: '{'x' * 76}... is not of type 'integer'"]


async def test_arguments_of_a_tool_found_by_its_verbatim_name_are_checked_too() -> None:
    found = await lines([typed_server()], [hook("typed_search", arguments={"max_count": 0})])
    assert found == [
        "hooks[0].arguments.max_count: 0 is less than the minimum of 1",
        "hooks[0].arguments.query: required by tool 'typed_search' but missing",
    ]


async def test_a_tool_hidden_by_allowed_tools_is_reported_as_hidden() -> None:
    found = await lines(
        [typed_server(allowed_tools=["search"])],
        [hook("tag", "typed", {"name": "n", "tags": []}), hook("typed_page")],
    )
    assert found == [
        "hooks[0].tool_name: tool 'typed_tag' exists, but toolset 'typed' leaves it out:"
        " add 'tag' to its allowed_tools",
        "hooks[1].tool_name: tool 'typed_page' exists, but toolset 'typed' leaves it out:"
        " add 'page' to its allowed_tools",
    ]
