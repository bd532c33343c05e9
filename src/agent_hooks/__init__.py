"""agent-hooks: config-driven synthetic tool-call injection for LLM agents.

A host builds its app from a manifest and runs the hooks of an event on each request::

    async with open_app(config) as injector:
        runner = injector.get(HookRunner)
        run = await runner.run(HookEvent.ON_REQUEST_START, messages)
        messages = run.messages
"""

from agent_hooks._preview_module import preview_module
from agent_hooks.agent_hooks_module import AgentHooksModule
from agent_hooks.app_factory import ClockModule, aclose_app, create_injector, open_app
from agent_hooks.config.hooks import HookEvent
from agent_hooks.runtime import (
    HookFailedError,
    HookObserver,
    HookOutcome,
    HookRun,
    HookRunner,
    HookRunRecord,
)

__all__ = [
    "AgentHooksModule",
    "ClockModule",
    "HookEvent",
    "HookFailedError",
    "HookObserver",
    "HookOutcome",
    "HookRun",
    "HookRunRecord",
    "HookRunner",
    "aclose_app",
    "create_injector",
    "open_app",
    "preview_module",
]
