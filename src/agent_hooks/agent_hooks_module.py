"""The DI module that turns manifest hooks into the host's seam lists (seed Component 4)."""

from __future__ import annotations

from injector import Module, multiprovider

from agent_hooks._config_driven_hooks import ConfigDrivenToolCallHook
from agent_hooks._preview_module import preview_module
from agent_hooks.clock import Clock
from agent_hooks.config import ApplicationConfig, HookEvent, ToolCallHookConfig
from agent_hooks.injection import MessagesTransformer
from agent_hooks.tools import ToolCallResultEnricher
from agent_hooks.tools.toolsets import ToolRegistry

__all__ = ["AgentHooksModule"]


@preview_module
class AgentHooksModule(Module):
    """Contributes one transformer per ``on_request_start`` hook, in manifest order.

    A new event gets its own ``@multiprovider`` here, contributing to that seam's list.
    """

    @multiprovider
    def provide_request_start_transformers(
        self,
        config: ApplicationConfig,
        tools: ToolRegistry,
        clock: Clock,
        enrichers: list[ToolCallResultEnricher],
    ) -> list[MessagesTransformer]:
        return build_hooks(
            config, HookEvent.ON_REQUEST_START, tools=tools, clock=clock, enrichers=enrichers
        )


def build_hooks(
    config: ApplicationConfig,
    event: HookEvent,
    *,
    tools: ToolRegistry,
    clock: Clock,
    enrichers: list[ToolCallResultEnricher],
) -> list[MessagesTransformer]:
    """The runtime hooks for ``event``; an empty list when the manifest has none."""
    hooks: list[MessagesTransformer] = []
    for index, entry in enumerate(config.hooks or []):
        if entry.event != event:
            continue
        match entry:
            case ToolCallHookConfig():
                hooks.append(
                    ConfigDrivenToolCallHook(
                        entry,
                        tools,
                        label=entry.name or f"hooks[{index}]",
                        clock=clock,
                        enrichers=enrichers,
                    )
                )
    return hooks
