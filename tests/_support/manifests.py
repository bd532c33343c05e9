"""Manifest pieces the tests write again and again: the built-in clock toolset and a hook."""

from __future__ import annotations

from typing import Any

CLOCK: dict[str, Any] = {"type": "internal", "name": "clock", "tools": ["current_time"]}
"""The internal toolset of the built-in ``current_time`` tool."""


def hook(
    tool_name: str = "current_time",
    toolset_name: str | None = None,
    arguments: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A ``tool_call`` hook at ``on_request_start`` calling ``tool_name`` (of ``toolset_name`` and
    with ``arguments`` when given); ``fields`` add keys or replace them (``event=...``)."""
    found: dict[str, Any] = {"kind": "tool_call", "event": "on_request_start"}
    found["tool_name"] = tool_name
    if toolset_name is not None:
        found["toolset_name"] = toolset_name
    if arguments is not None:
        found["arguments"] = arguments
    return {**found, **fields}
