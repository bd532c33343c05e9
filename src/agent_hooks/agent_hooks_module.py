"""The DI module that turns manifest hooks into the host's seams (seed Component 4).

With preview features off this module is not installed: the runner then has no hooks and the
transformer list is empty, so a host's code path stays the same either way.
"""

from __future__ import annotations

from injector import Module, multiprovider

from agent_hooks._config_driven_hooks import ConfigDrivenToolCallHook
from agent_hooks._preview_module import preview_module
from agent_hooks.config import ApplicationConfig, HookEvent
from agent_hooks.injection import MessagesTransformer
from agent_hooks.runtime import HookRunner, PreparedHook, prepare_hooks
from agent_hooks.toolsets import ToolRegistry

__all__ = ["AgentHooksModule"]


@preview_module
class AgentHooksModule(Module):
    """Contributes the manifest's hooks to the runner and one transformer per request-start hook.

    A new hook kind gets its own ``@multiprovider`` of ``list[PreparedHook]`` here.
    """

    @multiprovider
    def provide_hooks(
        self, config: ApplicationConfig, registry: ToolRegistry
    ) -> list[PreparedHook]:
        return prepare_hooks(config.hooks, registry)

    @multiprovider
    def provide_request_start_transformers(
        self, hooks: list[PreparedHook], runner: HookRunner
    ) -> list[MessagesTransformer]:
        return [
            ConfigDrivenToolCallHook(hook, runner)
            for hook in hooks
            if hook.event is HookEvent.ON_REQUEST_START
        ]
