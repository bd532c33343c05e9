"""The definitions the Anthropic route declares for its pairs' tools, from the real toolsets."""

from __future__ import annotations

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.serve._dialects import ToolDefinition
from agent_hooks.serve._tools import ToolCatalog
from agent_hooks.toolsets import ToolRegistry

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}
MANIFEST = {
    "toolsets": [
        {
            "type": "rest-api",
            "name": "kb",
            "base_url": "http://127.0.0.1:9",  # never called: a definition needs no request
            "tools": [
                {"name": "search", "path": "/s", "description": "Search it.", "parameters": SCHEMA}
            ],
        }
    ],
    "hooks": [
        {"kind": "tool_call", "event": "on_request_start", "toolset_name": "kb",
         "tool_name": "search"},
        {"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"},
    ],
}  # fmt: skip


async def test_hook_tools_are_described_by_their_toolsets_and_others_by_name() -> None:
    config = ApplicationConfig.model_validate(MANIFEST, context={"preview": True})
    async with open_app(config, preview=True) as injector:
        catalog = ToolCatalog(injector.get(HookRunner), injector.get(ToolRegistry))
        found = await catalog.definitions(["kb_search", "current_time", "elsewhere", "kb_search"])
    assert list(found) == ["kb_search", "current_time", "elsewhere"]
    assert found["kb_search"] == ToolDefinition("kb_search", "Search it.", SCHEMA)
    assert found["current_time"].description
    assert found["current_time"].input_schema["type"] == "object"
    assert found["elsewhere"] == ToolDefinition("elsewhere", "", {"type": "object"})


async def test_without_hooks_every_tool_is_declared_by_name() -> None:
    config = ApplicationConfig.model_validate(MANIFEST, context={"preview": True})
    async with open_app(config, preview=True) as injector:
        catalog = ToolCatalog(None, injector.get(ToolRegistry))
        found = await catalog.definitions(["kb_search"])
    assert found == {"kb_search": ToolDefinition("kb_search")}
