"""agent-hooks: config-driven synthetic tool-call injection for LLM agents.

A host builds its injector from a manifest and applies the request-start transformers::

    async with open_app(config) as injector:
        for transformer in injector.get(list[MessagesTransformer]):
            messages = await transformer.transform(messages)
"""

from agent_hooks._preview_module import preview_module
from agent_hooks.agent_hooks_module import AgentHooksModule
from agent_hooks.app_factory import ClockModule, aclose_app, create_injector, open_app

__all__ = [
    "AgentHooksModule",
    "ClockModule",
    "aclose_app",
    "create_injector",
    "open_app",
    "preview_module",
]
