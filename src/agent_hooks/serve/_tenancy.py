"""Who owns a conversation (SPEC 12.1).

State is keyed by tenant and conversation together, so a conversation id alone (which anyone
can send or recompute) never reaches another client's pairs. Pure: headers in, the tenant out.
Removing the pairs a client sends is the conversation core's
(:func:`agent_hooks.state._conversation.without_client_pairs`).
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_hooks.serve._errors import Unauthenticated

__all__ = ["CREDENTIAL_HEADERS", "MissingTenant", "tenant_of"]

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
