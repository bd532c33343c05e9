"""Who owns a conversation (SPEC 12.1); removing client pairs is the conversation core's
(tests/state/test_conversation.py)."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from agent_hooks.serve._tenancy import (
    MissingTenant,
    RepeatedCredential,
    RepeatedTenant,
    tenant_of,
)


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


@pytest.mark.parametrize("name", [b"authorization", b"api-key", b"x-api-key"])
def test_a_credential_sent_twice_is_refused_when_it_names_the_tenant(name: bytes) -> None:
    """Which copy counted would decide whose stored pairs the request reads."""
    headers = Headers(raw=[(name, b"Bearer mine"), (b"x-conversation-id", b"c"), (name, b"yours")])
    with pytest.raises(RepeatedCredential, match=f"2 {name.decode()} headers") as caught:
        tenant_of(headers, tenant_header=None)
    assert caught.value.status == 400
    assert "mine" not in str(caught.value)
    assert "yours" not in str(caught.value)
    # one copy each of two credential headers is not a repeat: the first in order names it
    one_each = Headers(raw=[(b"x-api-key", b"b"), (b"authorization", b"Bearer a")])
    assert tenant_of(one_each, tenant_header=None) == "Bearer a"
    # behind --tenant-header the credential names nobody: it is not looked at
    gateway = Headers(raw=[(name, b"k1"), (name, b"k2"), (b"x-user", b"alice")])
    assert tenant_of(gateway, tenant_header="x-user") == "alice"
