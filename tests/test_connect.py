"""``validate --connect`` against the example MCP server, an unreachable URL and a silent server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks._connect import connection_issues
from agent_hooks.cli import main
from agent_hooks.config import ApplicationConfig
from agent_hooks.errors import ConfigError
from tests.servers.processes import MEMORY_SERVER, free_port

CLOCK = {"type": "internal", "name": "clock", "tools": ["current_time"]}


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


def hook(tool_name: str, toolset_name: str | None = None) -> dict[str, Any]:
    fields = {"kind": "tool_call", "event": "on_request_start", "tool_name": tool_name}
    return fields if toolset_name is None else {**fields, "toolset_name": toolset_name}


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
                hook("get_memories", "memory_server"),
                hook("get_memorys", "memory_server"),
                hook("forget_everything", "memory_server"),
                hook("current_time"),
                hook("memory_server_add_memory"),
            ],
        ).model_dump_json(by_alias=True, exclude_none=True)
    )

    code = main(["validate", "--connect", str(manifest)])

    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "hooks[1].tool_name: toolset 'memory_server' has no tool 'get_memorys';"
        " did you mean 'get_memories'?",
        "hooks[2].tool_name: toolset 'memory_server' has no tool 'forget_everything'"
        " (available tools: 'get_memories', 'add_memory')",
    ]
    assert code == 2
    assert captured.err == ""


async def test_a_manifest_whose_tools_all_exist_has_no_issues(tmp_path: Path) -> None:
    toolsets = [memory_server(tmp_path / "memories.sqlite3"), CLOCK]
    assert await lines(toolsets, [hook("add_memory", "memory_server"), hook("current_time")]) == []


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


async def test_a_verbatim_tool_name_is_not_judged_while_some_toolset_is_unreachable() -> None:
    found = await lines([unreachable(), CLOCK], [hook("current_tim")])
    assert [line.split(":", 1)[0] for line in found] == ["toolsets[0]"]


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
