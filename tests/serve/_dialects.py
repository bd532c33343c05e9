"""What the Responses and Messages route tests share: a manifest with a TTL'd hook, a deduped
hook and a completion hook, all on the REST test API, and ways to read what reached it."""

from __future__ import annotations

from typing import Any

from agent_hooks.serve._dialects import synthetic_call_id
from tests.serve.test_proxy import eventually
from tests.servers.fixtures import RecordingServer

PREFS = "prefs_get_preferences"
UNITS = "prefs_get_units"
SCHEMA = {"type": "object", "properties": {"user_id": {"type": "string"}}}
DESCRIPTION = "The user's stored preferences."


def dialect_manifest(rest_url: str) -> dict[str, Any]:
    """``prefs`` is TTL'd (10 minutes), ``units`` deduped (no TTL), ``remember`` saves the
    final answer and the request context at completion."""
    tools = [
        {
            "name": "get_preferences",
            "path": "/preferences",
            "description": DESCRIPTION,
            "parameters": SCHEMA,
        },
        {"name": "get_units", "path": "/users/u1/preferences"},
        {"name": "save_note", "method": "POST", "path": "/users/{user_id}/notes"},
    ]
    hooks: list[dict[str, Any]] = [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "prefs",
            "toolset_name": "prefs",
            "tool_name": "get_preferences",
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
        },
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "units",
            "toolset_name": "prefs",
            "tool_name": "get_units",
        },
        {
            "kind": "tool_call",
            "event": "on_completion",
            "name": "remember",
            "toolset_name": "prefs",
            "tool_name": "save_note",
            "arguments": {
                "user_id": "u1",
                "answer": "${last_assistant_message.content}",
                "request": {"$eval": "request"},
            },
        },
    ]
    toolset = {"type": "rest-api", "name": "prefs", "base_url": rest_url, "tools": tools}
    return {"toolsets": [toolset], "hooks": hooks}


def hits(rest_server: RecordingServer, path: str) -> int:
    return sum(1 for entry in rest_server.received() if entry["raw_path"] == path)


def notes(rest_server: RecordingServer, count: int = 1) -> list[dict[str, Any]]:
    """The bodies the completion hook posted, once there are ``count`` of them."""

    def probe() -> list[dict[str, Any]] | None:
        found = [e["body"] for e in rest_server.received() if e["method"] == "POST"]
        return found if len(found) >= count else None

    return eventually(probe)


def is_synthetic(call_id: Any) -> bool:
    return synthetic_call_id({"role": "tool", "tool_call_id": call_id}) is not None
