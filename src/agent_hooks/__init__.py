"""agent-hooks: config-driven synthetic tool-call injection for LLM agents.

A host builds its app from a manifest and runs the hooks of an event on each request::

    async with open_app(config) as injector:
        runner = injector.get(HookRunner)
        run = await runner.run(HookEvent.ON_REQUEST_START, messages)
        messages = run.messages

Each name is imported when first used (:mod:`agent_hooks._lazy`), so the command line and the
packages underneath load only what they need. The seed's injectors (``agent_hooks.injection``)
run through the hook runtime, a layer above them: this root names it for them, and it is loaded
when an injector first runs.
"""

import typing

import agent_hooks._lazy as _lazy
from agent_hooks._version import __version__ as __version__

if typing.TYPE_CHECKING:
    from agent_hooks._preview_module import preview_module
    from agent_hooks.agent_hooks_module import AgentHooksModule
    from agent_hooks.app_factory import ClockModule, aclose_app, create_injector, open_app
    from agent_hooks.config import HookEvent
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

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "AgentHooksModule": "agent_hooks.agent_hooks_module",
        "ClockModule": "agent_hooks.app_factory",
        "HookEvent": "agent_hooks.config",
        "HookFailedError": "agent_hooks.runtime",
        "HookObserver": "agent_hooks.runtime",
        "HookOutcome": "agent_hooks.runtime",
        "HookRun": "agent_hooks.runtime",
        "HookRunRecord": "agent_hooks.runtime",
        "HookRunner": "agent_hooks.runtime",
        "aclose_app": "agent_hooks.app_factory",
        "create_injector": "agent_hooks.app_factory",
        "open_app": "agent_hooks.app_factory",
        "preview_module": "agent_hooks._preview_module",
    },
    globals(),
)

_lazy.bind_late("INJECTOR_ENGINE", "agent_hooks.runtime._injectors")
