"""Which conversation a Responses answer belongs to: saved with the pairs, per tenant, under a
key no conversation can have."""

from __future__ import annotations

from agent_hooks.state import ConversationStore
from tests.state.test_store import ALICE, BOB, PAIRS, store, store_url  # noqa: F401 - fixtures


async def test_a_saved_response_id_names_its_conversation_for_its_tenant_only(
    store: ConversationStore,  # noqa: F811 - the fixture
) -> None:
    assert await store.linked("resp_1", tenant=ALICE) is None
    await store.save("conv-a", PAIRS, tenant=ALICE, response_id="resp_1")
    await store.save("conv-b", [], tenant=BOB, response_id="resp_1")
    assert await store.linked("resp_1", tenant=ALICE) == "conv-a"
    assert await store.linked("resp_1", tenant=BOB) == "conv-b"
    assert await store.linked("resp_1", tenant=None) is None


async def test_links_and_conversations_never_share_a_key(
    store: ConversationStore,  # noqa: F811 - the fixture
) -> None:
    """A client may name its conversation anything, a response id included."""
    await store.save("resp_1", PAIRS, tenant=ALICE)
    await store.save("conv-a", PAIRS[:1], tenant=ALICE, response_id="resp_1")
    assert await store.load("resp_1", tenant=ALICE) == PAIRS
    assert await store.load("conv-a", tenant=ALICE) == PAIRS[:1]
    assert await store.linked("resp_1", tenant=ALICE) == "conv-a"
