"""Who owns a conversation, and what a client may not put into one (SPEC 12.1).

State is keyed by tenant and conversation together, so a conversation id alone (which anyone
can send or recompute) never reaches another client's pairs. Pure: headers and OpenAI-format
messages in, answers out; every dialect's route goes through these after parsing its body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.serve._errors import Unauthenticated

__all__ = ["CREDENTIAL_HEADERS", "MissingTenant", "remove_client_pairs", "tenant_of"]

CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key")
"""The client credentials that name a tenant, in the order they are looked for."""


class MissingTenant(Unauthenticated):
    """``--tenant-header`` is set and the request does not carry it: a 401."""

    code = "no_tenant"

    def __init__(self, header: str) -> None:
        super().__init__(f"the request has no {header} header; the gateway in front must set it")


def tenant_of(headers: Mapping[str, str], *, tenant_header: str | None) -> str | None:
    """The tenant: the ``tenant_header`` value when that is configured, else the client's
    credential, else ``None`` (nobody: such a request has no stored state).

    The value is passed to the store in clear and hashed there; it is never logged.

    Raises:
        MissingTenant: ``tenant_header`` is configured and absent or empty.
    """
    if tenant_header is not None:
        value = headers.get(tenant_header, "").strip()
        if not value:
            raise MissingTenant(tenant_header)
        return value
    for name in CREDENTIAL_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return value
    return None


def remove_client_pairs(messages: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """``messages`` without the synthetic pairs a client sent, and how many call ids went.

    The proxy's own pairs never reach clients, so a synthetic-looking pair in a request is forged
    or replayed: its tool message and its ``tool_calls`` entry are removed (the assistant message
    too when nothing else is left in it). Every other message is kept as it came.
    """
    removed: set[str] = set()
    kept: list[dict[str, Any]] = []
    for message in messages:
        call_id = message.get("tool_call_id")
        is_tool = message.get("role") == "tool"
        if is_tool and isinstance(call_id, str) and is_synthetic_call_id(call_id):
            removed.add(call_id)
            continue
        calls = message.get("tool_calls")
        if isinstance(calls, list) and any(_is_synthetic_call(call) for call in calls):
            remaining = [call for call in calls if not _is_synthetic_call(call)]
            removed.update(call["id"] for call in calls if _is_synthetic_call(call))
            if not remaining and not message.get("content"):
                continue
            if remaining:  # the key keeps its place
                message = {**message, "tool_calls": remaining}
            else:
                message = {key: value for key, value in message.items() if key != "tool_calls"}
        kept.append(message)
    return kept, len(removed)


def _is_synthetic_call(call: Any) -> bool:
    return isinstance(call, Mapping) and is_synthetic_call_id(call.get("id"))
