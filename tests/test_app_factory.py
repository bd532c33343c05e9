"""create_injector / open_app: wiring, eager configuration errors, enrichers, shutdown."""

from __future__ import annotations

import pytest
from injector import Binder, Module, multiprovider

from agent_hooks import create_injector, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.errors import ConfigError, UsageError
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message
from agent_hooks.tools import ToolCallResult, ToolCallResultEnricher
from agent_hooks.toolsets import ReusedToolsets, ToolRegistry
from tests._support import msg

pytestmark = pytest.mark.usefixtures("preview_on")

CLOCK_APP = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [{"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}],
}


def test_internal_toolset_naming_an_unregistered_tool_fails_at_create_injector() -> None:
    config = ApplicationConfig.model_validate(
        {"toolsets": [{"type": "internal", "name": "host", "tools": ["current_tim", "weather"]}]}
    )
    with pytest.raises(ConfigError) as caught:
        create_injector(config)
    lines = [str(issue) for issue in caught.value.issues]
    assert lines == [
        "toolsets[0].tools[0]: no internal tool named 'current_tim' is registered;"
        " did you mean 'current_time'? (registered: 'current_time')",
        "toolsets[0].tools[1]: no internal tool named 'weather' is registered"
        " (registered: 'current_time')",
    ]


class StateEnricher(ToolCallResultEnricher):
    def enrich(self, message: Message, result: ToolCallResult) -> Message:
        return message.model_copy(update={"custom_content": {"state": {"tool": result.tool_name}}})


class Enrichers(Module):
    @multiprovider
    def provide(self) -> list[ToolCallResultEnricher]:
        return [StateEnricher()]


async def test_enrichers_attach_state_to_the_synthetic_tool_message() -> None:
    config = ApplicationConfig.model_validate(CLOCK_APP)
    async with open_app(config, [Enrichers()]) as injector:
        (transformer,) = injector.get(list[MessagesTransformer])
        result = await transformer.transform([msg(role="user", content="hi")])
    assert result[-1].to_openai()["custom_content"] == {"state": {"tool": "current_time"}}


async def test_open_app_closes_the_tool_registry_on_exit() -> None:
    config = ApplicationConfig.model_validate(CLOCK_APP)
    async with open_app(config) as injector:
        registry = injector.get(ToolRegistry)
        assert await registry.find_tool("current_time") is not None
    with pytest.raises(UsageError, match="closed"):
        await registry.find_tool("current_time")


def test_the_registry_is_one_per_app() -> None:
    injector = create_injector(ApplicationConfig.model_validate(CLOCK_APP))
    assert injector.get(ToolRegistry) is injector.get(ToolRegistry)


def test_an_app_takes_over_the_live_toolsets_whose_declarations_did_not_change() -> None:
    def rest(name: str, base_url: str) -> dict[str, object]:
        tools = [{"name": "get", "path": "/get"}]
        return {"type": "rest-api", "name": name, "base_url": base_url, "tools": tools}

    before = ApplicationConfig.model_validate(
        {"toolsets": [rest("same", "http://a"), rest("changed", "http://b")]}
    )
    after = ApplicationConfig.model_validate(
        {"toolsets": [rest("changed", "http://c"), rest("same", "http://a")]}
    )
    old = create_injector(before).get(ToolRegistry).toolsets
    reused = ReusedToolsets(tuple(zip(before.toolsets, old, strict=True)))

    def bind_reused(binder: Binder) -> None:
        binder.bind(ReusedToolsets, to=reused)

    changed, same = create_injector(after, [bind_reused]).get(ToolRegistry).toolsets
    assert same is old[0]
    assert changed is not old[1]
    assert changed.name == "changed"
