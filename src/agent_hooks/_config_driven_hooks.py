"""Runtime hooks built from manifest entries (seed Component 3).

``_BaseConfigDrivenHook`` is a pure marker so future hook kinds (guards, observers) are not forced
into the message-transformer interface; each concrete hook mixes in its own.
"""

from __future__ import annotations

import logging
import time
from abc import ABC
from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.clock import Clock
from agent_hooks.config.hooks import InjectionFrequency, ToolCallHookConfig, TTLRefreshCondition
from agent_hooks.errors import ToolError
from agent_hooks.injection import StagedToolSyntheticInjector
from agent_hooks.messages import Message
from agent_hooks.tools import ToolCallResultEnricher, ToolSource

__all__ = ["ConfigDrivenToolCallHook"]

logger = logging.getLogger("agent_hooks.hooks")


class _BaseConfigDrivenHook(ABC):  # noqa: B024 - a marker base on purpose
    """Marker for hooks built from configuration."""


class ConfigDrivenToolCallHook(_BaseConfigDrivenHook, StagedToolSyntheticInjector):
    """A ``tool_call`` hook: runs its tool and injects the result; never fails the request.

    Each run logs exactly one decision: ``injected`` (INFO) or ``skipped`` with a reason
    (INFO for a fresh TTL, WARNING for a missing or failing tool).
    """

    def __init__(
        self,
        config: ToolCallHookConfig,
        tools: ToolSource,
        *,
        label: str,
        clock: Clock | None = None,
        enrichers: Sequence[ToolCallResultEnricher] = (),
    ) -> None:
        ttl_seconds = None
        if isinstance(config.refresh_condition, TTLRefreshCondition):
            ttl_seconds = config.refresh_condition.ttl_minutes * 60
        super().__init__(tools, clock=clock, ttl_seconds=ttl_seconds, enrichers=enrichers)
        self.config = config
        self.label = label

    def get_tool_name(self) -> str:
        return self.config.final_tool_name

    def get_arguments(self) -> Mapping[str, Any]:
        return self.config.arguments

    def get_frequency(self, messages: Sequence[Message]) -> InjectionFrequency:
        return self.config.frequency

    async def transform(self, messages: Sequence[Message]) -> list[Message]:
        started = time.perf_counter()
        try:
            level, outcome, reason, result = await self._run(messages)
        except Exception as exc:  # the seam: a hook must never fail the request
            logger.debug("hook=%s failure detail", self.label, exc_info=True)
            self._log(logging.WARNING, started, "skipped", _reason(exc))
            return list(messages)
        self._log(level, started, outcome, reason)
        return result

    async def _run(self, messages: Sequence[Message]) -> tuple[int, str, str, list[Message]]:
        """The decision and the resulting history; anything raised here skips the hook."""
        if not self.should_inject(messages):
            return logging.INFO, "skipped", "ttl_fresh", list(messages)
        content: object = await self.get_content(messages)
        if content is None:
            return logging.WARNING, "skipped", "tool returned no content", list(messages)
        if not isinstance(content, str):
            reason = f"tool returned {type(content).__name__}, not text"
            return logging.WARNING, "skipped", reason, list(messages)
        injected = self.inject_content(messages, content)
        return logging.INFO, "injected", f"content_chars={len(content)}", injected

    def _log(self, level: int, started: float, outcome: str, reason: str) -> None:
        latency_ms = (time.perf_counter() - started) * 1000
        tool = self.get_tool_name()
        logger.log(
            level,
            "hook=%s tool=%s outcome=%s reason=%s latency_ms=%.1f",
            self.label,
            tool,
            outcome,
            reason,
            latency_ms,
            extra={
                "hook": self.label,
                "tool": tool,
                "outcome": outcome,
                "reason": reason,
                "latency_ms": round(latency_ms, 1),
            },
        )

    def __repr__(self) -> str:
        return f"<ConfigDrivenToolCallHook {self.label!r} tool={self.get_tool_name()!r}>"


def _reason(exc: Exception) -> str:
    if isinstance(exc, ToolError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
