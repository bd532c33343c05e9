"""Conversation stores: the synthetic pairs of each conversation, kept between turns (SPEC 12, 14).

Clients and frameworks that do not keep hook-written pairs in their own history (``serve``'s
clients, the Agents SDK's sessions, LiteLLM, DIAL) lose them after each turn; a store gives them
back, so TTLs and dedupe work across turns. ``serve`` and the framework adapters share it::

    store = open_store("sqlite:///agent-hooks-state.db")      # or "redis://HOST:PORT/DB"
    stored = await store.load(conversation_id, tenant=credential)       # list of pairs
    ...                                                       # re-apply, run the hooks
    await store.save(conversation_id, pairs, tenant=credential)
    await store.aclose()                                      # the host that opened it closes it

- A pair is ``(assistant_message, tool_message)``: two OpenAI chat-format dicts (``Message``'s
  shape), the assistant message holding exactly one ``tool_calls`` entry answered by the tool
  message. Other dialects convert at their edge.
- ``tenant`` is who owns the conversation (SPEC 12.1): a caller credential or a gateway's user
  header, passed in clear and stored only as its SHA-256; ``None`` where the framework has no
  caller credential. Two tenants never see each other's pairs under one conversation id.
- ``save`` keeps synthetic pairs only (ids of SPEC 4), every pair forwarded in order, each call
  id once, at most 256 (the oldest dropped), and restarts the conversation's seven-day expiry.
  Callers pass the pairs the hooks produced or re-applied, never pairs a client sent; ``serve``
  and the adapters pass :class:`~agent_hooks.state._conversation.StoredPair` entries, which also
  say after which client message each pair was forwarded and in which form (SPEC 15), and read
  them back with ``load_entries``.
- Nothing here fails the caller: every call answers within 2 seconds; a store that is down,
  blackholed, deleted or unwritable costs the state (``load`` gives ``[]``, ``save`` does nothing)
  with one ERROR line per call on the ``agent_hooks.state`` logger. Only a use after ``aclose``
  raises ``RuntimeError``.
- :func:`open_store` raises ``ValueError`` for a URL it cannot parse and ``OSError`` for a SQLite
  file it cannot create. Importing this package imports neither ``sqlite3`` nor ``redis``.
"""

from agent_hooks.state._open import open_store
from agent_hooks.state._store import ConversationStore

__all__ = ["ConversationStore", "open_store"]
