"""Hook declarations: what a manifest author writes under ``hooks``.

Both unions are discriminated on ``kind`` so a new hook or refresh variant is a new class added to
the union, never a flag patched into an existing one.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.config._base import StrictModel, require_in_schema

__all__ = [
    "MAX_TTL_MINUTES",
    "HookConfig",
    "HookEvent",
    "InjectionFrequency",
    "RefreshConditionConfig",
    "TTLRefreshCondition",
    "ToolCallHookConfig",
]


class HookEvent(StrEnum):
    """The seam of the host's request handling where a hook fires. ``on_request_start``: after
    the host's initialisers, before the first model call of a request."""

    ON_REQUEST_START = "on_request_start"
    """After the host's initialisers, before the first model call of a request."""


class InjectionFrequency(StrEnum):
    """How often a hook adds its synthetic pair to the history: ``always`` on every request, or
    ``append_if_changed`` only when the content changed."""

    ALWAYS = "always"
    """Call the tool and append a new pair at the end on every request."""

    APPEND_IF_CHANGED = "append_if_changed"
    """Call the tool; refresh the latest pair in place when the content is unchanged, append a
    new one when it changed."""


MAX_TTL_MINUTES = 100 * 365 * 24 * 60
"""A TTL cap that keeps the expiry stamped into call ids short (ids must stay under 64 chars)."""


class TTLRefreshCondition(StrictModel):
    """Reuse the latest result until it is ``ttl_minutes`` old; the tool is not called meanwhile."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("kind"))

    kind: Literal["ttl"] = "ttl"
    """Discriminator: a time-to-live."""

    ttl_minutes: int = Field(gt=0, le=MAX_TTL_MINUTES, examples=[60])
    """Minutes a result stays fresh: greater than 0, at most 100 years (52560000)."""


RefreshConditionConfig = Annotated[TTLRefreshCondition, Field(discriminator="kind")]
"""When a hook may skip its tool call because an earlier result is still fresh."""


class _BaseHookConfig(StrictModel):
    event: HookEvent = Field(examples=["on_request_start"])
    """The seam where the hook fires; ``on_request_start`` is the only one today."""

    name: str | None = Field(default=None, min_length=1, examples=["user-memories"])
    """A label for logs and diagnostics; unique within the manifest when given."""


class ToolCallHookConfig(_BaseHookConfig):
    """Run a tool and put its result into the history as a synthetic tool-call pair."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("kind"))

    kind: Literal["tool_call"] = "tool_call"
    """Discriminator: a hook that calls a tool."""

    toolset_name: str | None = Field(default=None, min_length=1, examples=["memory_server"])
    """The toolset of an ``mcp`` or ``rest-api`` tool. Omit it for ``deployment`` and
    ``internal`` tools, whose names are used verbatim."""

    tool_name: str = Field(min_length=1, examples=["get_memories"])
    """The tool's name in its toolset, or its final function name when ``toolset_name`` is
    omitted."""

    arguments: dict[str, Any] = Field(default_factory=dict, examples=[{"user_id": "current"}])
    """Arguments for the tool; also shown to the model in the synthetic call."""

    frequency: InjectionFrequency = Field(
        default=InjectionFrequency.APPEND_IF_CHANGED, examples=["always"]
    )
    """``always`` appends a new pair on every request; ``append_if_changed`` refreshes the latest
    pair in place while the content is unchanged and appends only new content."""

    refresh_condition: RefreshConditionConfig | None = Field(
        default=None, examples=[{"kind": "ttl", "ttl_minutes": 60}]
    )
    """When set, the tool is not called while the latest result is fresh; ``null`` calls it on
    every request."""

    @property
    def final_tool_name(self) -> str:
        """The function name the model sees: prefixed by the toolset when one is named."""
        if self.toolset_name is None:
            return self.tool_name
        return sanitize_toolname(f"{self.toolset_name}_{self.tool_name}")


HookConfig = Annotated[ToolCallHookConfig, Field(discriminator="kind")]
"""Any hook a manifest may declare (discriminated on ``kind``)."""
