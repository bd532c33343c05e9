"""Host injectors through the runner: the seed's ``SyntheticToolCallInjector`` as one hook.

A host subclass says which tool, which arguments and what content; everything else (freshness,
the call id, signing, placement, the deadline, the record and its log line, spans) is decided by
the same :class:`~agent_hooks.runtime.HookRunner` code as for manifest hooks, so both seams give
the same history (SPEC section 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks._scrub import scrub_result
from agent_hooks.config.hooks import HookEvent, ToolCallHookConfig
from agent_hooks.injection._ids import arguments_json, call_id_prefix
from agent_hooks.injection._synthetic import SyntheticToolCallInjector
from agent_hooks.messages import Message
from agent_hooks.runtime._prepared import HookCall, PreparedHook
from agent_hooks.runtime._runner import HookRunner
from agent_hooks.tools import ToolCallResult

__all__ = ["INJECTOR_ENGINE", "RunnerInjectorEngine"]


class RunnerInjectorEngine:
    """Turns one injector and one history into a one-hook run."""

    async def transform(
        self, injector: SyntheticToolCallInjector, messages: Sequence[Message]
    ) -> list[Message]:
        received = list(messages)
        hook = _hook_of(injector, received)
        runner = HookRunner(
            [hook],
            clock=injector.clock,
            enrichers=injector.enrichers,
            signing_keys=injector.signing_keys,
        )
        run = await runner.run_hooks([hook], HookEvent.ON_REQUEST_START, received)
        return run.messages


INJECTOR_ENGINE = RunnerInjectorEngine()
"""What every injector runs through; ``agent_hooks`` binds it for :mod:`agent_hooks.injection`."""


def _hook_of(injector: SyntheticToolCallInjector, messages: list[Message]) -> PreparedHook:
    """The injector's hook for this history (its frequency may depend on the history)."""
    tool = injector.get_tool_name()
    arguments = dict(injector.get_arguments())
    config = ToolCallHookConfig.model_construct(
        event=HookEvent.ON_REQUEST_START,
        tool_name=tool,
        arguments=arguments,
        frequency=injector.get_frequency(messages),
        timeout_seconds=injector.timeout_seconds,
        on_error=injector.on_error,
        max_content_chars=injector.max_content_chars,
    )
    return PreparedHook(
        index=0,
        config=config,
        label=injector.label,
        tool=tool,
        call=_content_call(injector, messages),
        prefix=call_id_prefix(tool, arguments),
        arguments_text=arguments_json(arguments),
        ttl_seconds=injector.ttl_seconds,
        templated=False,
        precondition=lambda: injector.should_inject(messages),
    )


def _content_call(injector: SyntheticToolCallInjector, messages: list[Message]) -> HookCall:
    async def call(arguments: Mapping[str, Any]) -> ToolCallResult:
        content = await injector.get_content(messages)
        if isinstance(content, str):
            content = scrub_result(content)  # as for every manifest tool's result (SPEC 9)
        return ToolCallResult(content=content, tool_name=injector.get_tool_name())

    return call
