"""A manifest hook with everything that does not change between runs computed once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_hooks.config.hooks import (
    HookEvent,
    InjectionFrequency,
    ToolCallHookConfig,
    TTLRefreshCondition,
)
from agent_hooks.injection import TrustRules, arguments_json, call_id_prefix, is_templated
from agent_hooks.toolsets import ToolRegistry, ToolRoute

__all__ = ["PreparedHook", "prepare_hooks"]


@dataclass(frozen=True)
class PreparedHook:
    """One ``tool_call`` hook, ready to run: its label, route, identity and limits."""

    index: int
    """Position in the manifest's ``hooks`` list; orders pairs added in the same run."""
    config: ToolCallHookConfig
    label: str
    route: ToolRoute
    prefix: str
    """Call-id prefix of this tool with these (template) arguments: the hook's identity."""
    arguments_text: str
    """The JSON text shown in the synthetic call when the arguments are literal."""
    ttl_seconds: int | None
    templated: bool
    """The arguments are a JSON-e template, rendered per run (identity stays the template)."""

    @property
    def needs_context(self) -> bool:
        return self.templated or self.config.condition is not None

    @property
    def event(self) -> HookEvent:
        return self.config.event

    @property
    def tool(self) -> str:
        return self.route.final_name

    @property
    def arguments(self) -> dict[str, Any]:
        return self.config.arguments

    @property
    def timeout_seconds(self) -> float:
        return self.config.deadline_seconds

    @property
    def checks_content(self) -> bool:
        return self.config.frequency is InjectionFrequency.APPEND_IF_CHANGED

    def rules(self, now: float) -> TrustRules:
        """What a pair must satisfy to count for this hook at ``now`` (SPEC section 9)."""
        return TrustRules(now=now, ttl_seconds=self.ttl_seconds, check_content=self.checks_content)


def prepare_hooks(
    hooks: list[ToolCallHookConfig] | None, registry: ToolRegistry
) -> list[PreparedHook]:
    """Every hook of the manifest, routed to its toolset, in manifest order."""
    prepared: list[PreparedHook] = []
    for index, config in enumerate(hooks or []):
        ttl = config.refresh_condition
        final_name = config.final_tool_name
        prepared.append(
            PreparedHook(
                index=index,
                config=config,
                label=config.name or f"hooks[{index}]",
                route=registry.route(final_name, toolset_name=config.toolset_name),
                prefix=call_id_prefix(final_name, config.arguments),
                arguments_text=arguments_json(config.arguments),
                ttl_seconds=ttl.ttl_minutes * 60 if isinstance(ttl, TTLRefreshCondition) else None,
                templated=is_templated(config.arguments),
            )
        )
    return prepared
