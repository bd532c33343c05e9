"""Pairs a framework does not keep, given back on every model call (SPEC 12, 12.1, 14).

The Agents SDK's sessions, LiteLLM and DIAL drop what the hooks wrote once the model call is
made, so without help every turn would look like the first: TTLs never fresh, dedupe never
seeing the earlier answer. These adapters keep the pairs themselves, in a conversation store
(``agent_hooks.state``, keyed by tenant and conversation) or, without a store or a conversation
id, in memory for one run, and put them back where they were forwarded before the hooks run,
through the same conversation core as ``serve`` (:mod:`agent_hooks.state._conversation`).

Histories a client sent (LiteLLM, DIAL) may hold pairs that look like ours; the adapter's own
pairs never reach clients, so such a pair is forged or replayed: it is removed before the hooks
run and never stored.

Works on ``Message`` histories, so an adapter keeps the object identity its way back to native
messages relies on (:mod:`agent_hooks.integrations._history`): messages it does not touch are
the very objects it was given.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_hooks import HookEvent, HookRun, HookRunner
from agent_hooks.messages import Message
from agent_hooks.state import ConversationStore
from agent_hooks.state._conversation import (
    ConversationSource,
    StoredPair,
    collect_pairs,
    conversation_key,
    log_dropped,
    reapply,
    without_client_pairs,
)

__all__ = ["PairKeeper", "RunPairs", "StoredPairs", "keeper_for", "run_with_pairs"]

logger = logging.getLogger("agent_hooks.integrations")


class PairKeeper(Protocol):
    """Where one conversation's pairs are kept between model calls."""

    async def load(self) -> list[StoredPair]: ...

    async def save(self, pairs: list[StoredPair]) -> None: ...


@dataclass(frozen=True)
class StoredPairs:
    """One tenant's conversation in a store (the store bounds and contains its own failures).

    ``conversation`` is the conversation's key (:func:`keeper_for` digests the id it was given).
    """

    store: ConversationStore
    conversation: str
    tenant: str | None

    async def load(self) -> list[StoredPair]:
        return await self.store.load_entries(self.conversation, tenant=self.tenant)

    async def save(self, pairs: list[StoredPair]) -> None:
        await self.store.save(self.conversation, pairs, tenant=self.tenant)


@dataclass
class RunPairs:
    """One run's pairs, in memory: what a run without a store or a conversation id keeps."""

    pairs: list[StoredPair] = field(default_factory=list)

    async def load(self) -> list[StoredPair]:
        return list(self.pairs)

    async def save(self, pairs: list[StoredPair]) -> None:
        self.pairs = list(pairs)


def keeper_for(
    store: ConversationStore | None,
    request: Mapping[str, Any] | None,
    fallback: RunPairs,
    *,
    tenant: str | None = None,
    needs_tenant: bool = False,
) -> PairKeeper:
    """The store's entry for the request's ``conversation_id``; ``fallback`` without either.

    ``needs_tenant``: the framework has caller credentials (LiteLLM, DIAL), so a call without one
    is nobody's and has no stored state (SPEC 12.1), whatever conversation id it names. The id is
    kept only as its digest (SPEC 15); the framework names the conversation, so no first user
    message is part of the key (a framework that holds the earlier turns sends only new ones).
    """
    conversation = (request or {}).get("conversation_id")
    if store is None or not isinstance(conversation, str) or not conversation:
        return fallback
    if needs_tenant and not tenant:
        return fallback
    key = conversation_key(ConversationSource("conversation", conversation), None)
    return StoredPairs(store, key, tenant)


async def run_with_pairs(
    runner: HookRunner,
    messages: Sequence[Message],
    keeper: PairKeeper,
    request: Mapping[str, Any] | None,
    *,
    from_client: bool,
) -> tuple[HookRun, Callable[[], Awaitable[None]]]:
    """The request-start hooks on ``messages`` with the kept pairs put back where they were
    (the conversation core, as ``serve`` runs it: SPEC 15).

    ``from_client``: the history came from a client (remove the pairs it sent first). Returns
    the run and the coroutine function that keeps its pairs:
    call it once the turn succeeded.

    Raises:
        HookFailedError: a hook with ``on_error: fail`` failed.
    """
    history = list(messages)
    if from_client:
        history, forged = without_client_pairs(history)
        if forged:
            logger.warning("removed %d synthetic pair(s) sent by the client", forged)
    stored = await keeper.load()
    prefixes = frozenset(
        hook.prefix for hook in runner.hooks if hook.event is HookEvent.ON_REQUEST_START
    )
    reapplied = reapply(
        history,
        stored,
        items=history,
        item_of=range(len(history)),
        hook_prefixes=prefixes,
        build=Message.model_validate,
    )
    log_dropped(reapplied, logger)
    run = await runner.run(HookEvent.ON_REQUEST_START, reapplied.history, request=request)

    async def save() -> None:
        index_of = {id(message): index for index, message in enumerate(history)}
        pairs = collect_pairs(
            run.messages,
            item_at=[index_of.get(id(message)) for message in run.messages],
            items=history,
            reapplied=reapplied.kept,
            to_dict=Message.to_openai,
        )
        if pairs or stored:
            await keeper.save(pairs)

    return run, save
