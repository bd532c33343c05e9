"""Removing preview fields from a generated JSON schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_hooks.config._preview import PREVIEW_MARKER

__all__ = ["strip_preview_fields"]

_DEFS_PREFIX = "#/$defs/"


def strip_preview_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop ``x-preview`` properties (and their ``required`` entries), then unused ``$defs``."""
    stripped: dict[str, Any] = _without_preview(schema)
    defs: dict[str, Any] = stripped.get("$defs", {})
    if not defs:
        return stripped
    reachable: set[str] = set()
    pending = list(_refs({k: v for k, v in stripped.items() if k != "$defs"}))
    while pending:
        name = pending.pop()
        if name in reachable or name not in defs:
            continue
        reachable.add(name)
        pending.extend(_refs(defs[name]))
    kept = {name: body for name, body in defs.items() if name in reachable}
    if kept:
        stripped["$defs"] = kept
    else:
        del stripped["$defs"]
    return stripped


def _without_preview(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_preview(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {key: _without_preview(value) for key, value in node.items()}
    properties = result.get("properties")
    if isinstance(properties, dict):
        hidden = {
            key
            for key, prop in properties.items()
            if isinstance(prop, dict) and prop.get(PREVIEW_MARKER) is True
        }
        if hidden:
            result["properties"] = {k: v for k, v in properties.items() if k not in hidden}
            required = [name for name in result.get("required", []) if name not in hidden]
            if required:
                result["required"] = required
            else:
                result.pop("required", None)
    return result


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            yield ref.removeprefix(_DEFS_PREFIX)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)
