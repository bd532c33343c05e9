"""Who owns a conversation (SPEC 12.1); removing client pairs is the conversation core's
(tests/state/test_conversation.py)."""

from __future__ import annotations

import pytest

from agent_hooks.serve._tenancy import MissingTenant, tenant_of


def test_the_tenant_is_the_first_credential_the_client_sent() -> None:
    both = {"authorization": "Bearer a", "api-key": "b", "x-api-key": "c"}
    assert tenant_of(both, tenant_header=None) == "Bearer a"
    assert tenant_of({"api-key": "b", "x-api-key": "c"}, tenant_header=None) == "b"
    assert tenant_of({"x-api-key": "c"}, tenant_header=None) == "c"
    assert tenant_of({"authorization": " ", "x-api-key": "c"}, tenant_header=None) == "c"


def test_without_a_credential_nobody_owns_the_conversation() -> None:
    assert tenant_of({"x-conversation-id": "c1"}, tenant_header=None) is None


def test_a_tenant_header_wins_over_the_credential_and_is_required() -> None:
    headers = {"authorization": "Bearer shared-gateway-key", "x-user": "alice"}
    assert tenant_of(headers, tenant_header="x-user") == "alice"
    with pytest.raises(MissingTenant, match="x-user"):
        tenant_of({"authorization": "Bearer shared-gateway-key"}, tenant_header="x-user")
    with pytest.raises(MissingTenant):
        tenant_of({"x-user": "  "}, tenant_header="x-user")
