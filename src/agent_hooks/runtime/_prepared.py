"""A manifest hook with everything that does not change between runs computed once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agent_hooks.config.hooks import (
    HookEvent,
    InjectionFrequency,
    ToolCallHookConfig,
    TTLRefreshCondition,
)
from agent_hooks.injection._ids import arguments_json, call_id_prefix
from agent_hooks.injection._pairs import PairSpec
from agent_hooks.injection._staged import SYNTHETIC_PROBE_CALL_ID
from agent_hooks.injection._templates import is_templated
from agent_hooks.injection._trust import TrustRules
from agent_hooks.messages import FunctionCall
from agent_hooks.tools import ToolCallResult
from agent_hooks.toolsets import ToolRegistry, ToolRoute

__all__ = ["HookCall", "PreparedHook", "prepare_hooks"]

HookCall = Callable[[Mapping[str, Any]], Awaitable[ToolCallResult]]
"""What a hook waits for: its tool called with the rendered arguments. The runner runs it in a
task it may abandon at the hook's deadline, so it must not touch the history."""


@dataclass(frozen=True)
class PreparedHook:
    """One ``tool_call`` hook, ready to run: its label, route, identity and limits."""

    index: int
    """Position in the manifest's ``hooks`` list; orders pairs added in the same run."""
    config: ToolCallHookConfig
    label: str
    tool: str
    """The final function name the synthetic call shows."""
    call: HookCall
    prefix: str
    """Call-id prefix of this tool with these (template) arguments: the hook's identity."""
    arguments_text: str
    """The JSON text shown in the synthetic call when the arguments are literal."""
    ttl_seconds: int | None
    templated: bool
    """The arguments are a JSON-e template, rendered per run (identity stays the template)."""
    inline: bool = False
    """Every tool that may answer never waits (:attr:`ToolRoute.answers_at_once`): the runner
    awaits the call directly instead of in a task it could abandon."""
    precondition: Callable[[], bool] | None = None
    """A host injector's ``should_inject``: false skips the hook as a false ``condition`` does."""

    @property
    def needs_context(self) -> bool:
        return self.templated or self.config.condition is not None

    @property
    def event(self) -> HookEvent:
        return self.config.event

    @property
    def arguments(self) -> dict[str, Any]:
        return self.config.arguments

    @property
    def timeout_seconds(self) -> float:
        return self.config.deadline_seconds

    @cached_property  # asked for every pair of every fresh turn
    def checks_content(self) -> bool:
        return self.config.frequency is InjectionFrequency.APPEND_IF_CHANGED

    def rules(self, now: float) -> TrustRules:
        """What a pair must satisfy to count for this hook at ``now`` (SPEC section 9)."""
        return TrustRules(now, self.ttl_seconds, self.checks_content)

    def pair_spec(self, arguments_text: str, now: float) -> PairSpec:
        """How this run's pair is built: the hook's identity, the rendered arguments, the TTL."""
        expiry = int(now) + self.ttl_seconds if self.ttl_seconds is not None else None
        return PairSpec(
            tool_name=self.tool,
            prefix=self.prefix,
            arguments_text=arguments_text,
            checks_content=self.checks_content,
            expiry=expiry,
            function=None if self.templated else self._literal_function,
        )

    @cached_property
    def _literal_function(self) -> FunctionCall:
        """The function every pair of a hook with literal arguments shows (frozen, so shared)."""
        return FunctionCall(name=self.tool, arguments=self.arguments_text)


def routed_call(registry: ToolRegistry, route: ToolRoute) -> HookCall:
    """The call of a manifest hook: its tool, resolved on its route when it first runs."""

    async def call(arguments: Mapping[str, Any]) -> ToolCallResult:
        tool = await registry.resolve(route)
        return await tool.call(arguments, tool_call_id=SYNTHETIC_PROBE_CALL_ID)

    return call


def prepare_hooks(
    hooks: list[ToolCallHookConfig] | None, registry: ToolRegistry
) -> list[PreparedHook]:
    """Every hook of the manifest, routed to its toolset, in manifest order."""
    prepared: list[PreparedHook] = []
    for index, config in enumerate(hooks or []):
        ttl = config.refresh_condition
        final_name = config.final_tool_name
        route = registry.route(final_name, toolset_name=config.toolset_name)
        prepared.append(
            PreparedHook(
                index=index,
                config=config,
                label=config.name or f"hooks[{index}]",
                tool=final_name,
                call=routed_call(registry, route),
                prefix=call_id_prefix(final_name, config.arguments),
                arguments_text=arguments_json(config.arguments),
                ttl_seconds=ttl.ttl_minutes * 60 if isinstance(ttl, TTLRefreshCondition) else None,
                templated=is_templated(config.arguments),
                inline=route.answers_at_once,
            )
        )
    return prepared
