"""Who owns a conversation (SPEC 12.1).

State is keyed by tenant and conversation together, so a conversation id alone (which anyone
can send or recompute) never reaches another client's pairs. Pure: headers in, the tenant out.
Removing the pairs a client sends is the conversation core's
(:func:`agent_hooks.state._conversation.without_client_pairs`).
"""

from __future__ import annotations

from starlette.datastructures import Headers

from agent_hooks.serve._errors import BadRequest, Unauthenticated

__all__ = [
    "CREDENTIAL_HEADERS",
    "MissingTenant",
    "RepeatedCredential",
    "RepeatedTenant",
    "tenant_of",
]

CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key")
"""The client credentials that name a tenant, in the order they are looked for."""
_CREDENTIAL_KEYS = frozenset(name.encode() for name in CREDENTIAL_HEADERS)


class MissingTenant(Unauthenticated):
    """``--tenant-header`` is set and the request does not carry it: a 401."""

    code = "no_tenant"

    def __init__(self, header: str) -> None:
        super().__init__(f"the request has no {header} header; the gateway in front must set it")


class RepeatedTenant(BadRequest):
    """``--tenant-header`` is set and the request carries it more than once: a 400.

    A gateway that appends its header instead of replacing the client's would otherwise let
    the client pick which copy counts, and so its tenant (SPEC 16). Equal copies are refused
    too: the proxy cannot tell a careful client from a gateway that appends.
    """

    code = "repeated_tenant_header"

    def __init__(self, header: str, count: int) -> None:
        super().__init__(
            f"the request has {count} {header} headers; the gateway in front must set exactly one"
        )


class RepeatedCredential(BadRequest):
    """Without ``--tenant-header`` the credential names the tenant, and the request carries one
    credential header more than once: a 400 (which copy counts would decide whose state it is,
    and a header of one value sent twice is malformed anyway)."""

    code = "repeated_credential_header"

    def __init__(self, header: str, count: int) -> None:
        super().__init__(f"the request has {count} {header} headers; send exactly one")


def tenant_of(headers: Headers, *, tenant_header: str | None) -> str | None:
    """The tenant: the ``tenant_header`` value when that is configured, else the client's
    credential, else ``None`` (nobody: such a request has no stored state).

    The value is passed to the store in clear and hashed there; it is never logged.

    Raises:
        MissingTenant: ``tenant_header`` is configured and absent or empty.
        RepeatedTenant: ``tenant_header`` is configured and sent more than once.
        RepeatedCredential: no ``tenant_header``, and a credential header sent more than once.
    """
    if tenant_header is not None:
        values = headers.getlist(tenant_header)
        if len(values) > 1:
            raise RepeatedTenant(tenant_header, len(values))
        value = values[0].strip() if values else ""
        if not value:
            raise MissingTenant(tenant_header)
        return value
    _refuse_repeated_credentials(headers)
    for name in CREDENTIAL_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return value
    return None


def _refuse_repeated_credentials(headers: Headers) -> None:
    """One pass over the raw headers (names arrive lowercased): a request carries a handful."""
    seen: set[bytes] = set()
    for name, _ in headers.raw:
        if name in _CREDENTIAL_KEYS:
            if name in seen:
                key = name.decode()
                raise RepeatedCredential(key, len(headers.getlist(key)))
            seen.add(name)
