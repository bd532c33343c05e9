"""Who owns a conversation (SPEC 12.1); removing client pairs is the conversation core's
(tests/state/test_conversation.py)."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from agent_hooks.serve._tenancy import MissingTenant, RepeatedTenant, tenant_of


def test_the_tenant_is_the_first_credential_the_client_sent() -> None:
    both = Headers({"authorization": "Bearer a", "api-key": "b", "x-api-key": "c"})
    assert tenant_of(both, tenant_header=None) == "Bearer a"
    assert tenant_of(Headers({"api-key": "b", "x-api-key": "c"}), tenant_header=None) == "b"
    assert tenant_of(Headers({"x-api-key": "c"}), tenant_header=None) == "c"
    assert tenant_of(Headers({"authorization": " ", "x-api-key": "c"}), tenant_header=None) == "c"


def test_without_a_credential_nobody_owns_the_conversation() -> None:
    assert tenant_of(Headers({"x-conversation-id": "c1"}), tenant_header=None) is None


def test_a_tenant_header_wins_over_the_credential_and_is_required() -> None:
    headers = Headers({"authorization": "Bearer shared-gateway-key", "x-user": "alice"})
    assert tenant_of(headers, tenant_header="X-User") == "alice"
    gateway_key = Headers({"authorization": "Bearer shared-gateway-key"})
    with pytest.raises(MissingTenant, match="x-user"):
        tenant_of(gateway_key, tenant_header="x-user")
    with pytest.raises(MissingTenant):
        tenant_of(Headers({"x-user": "  "}), tenant_header="x-user")


@pytest.mark.parametrize("second", [b"alice", b"bob", b""], ids=["equal", "different", "empty"])
def test_a_tenant_header_sent_twice_is_refused_whatever_the_copies_hold(second: bytes) -> None:
    """A gateway that appends its header after the client's must not let the client pick."""
    headers = Headers(raw=[(b"x-user", b"alice"), (b"x-user", second)])
    with pytest.raises(RepeatedTenant, match="2 x-user headers") as caught:
        tenant_of(headers, tenant_header="x-user")
    assert caught.value.status == 400
    assert "alice" not in str(caught.value)
