"""Pairs a framework does not keep, given back on every model call (SPEC 12, 12.1, 14).

The Agents SDK's sessions, LiteLLM and DIAL drop what the hooks wrote once the model call is
made, so without help every turn would look like the first: TTLs never fresh, dedupe never
seeing the earlier answer. These adapters keep the pairs themselves, in a conversation store
(``agent_hooks.state``, keyed by tenant and conversation) or, without a store or a conversation
id, in memory for one run, and put them back after the first user message before the hooks run,
as ``serve`` does.

Histories a client sent (LiteLLM, DIAL) may hold pairs that look like ours; the adapter's own
pairs never reach clients, so such a pair is forged or replayed: it is removed before the hooks
run and never stored.

Works on ``Message`` histories, so an adapter keeps the object identity its way back to native
messages relies on (:mod:`agent_hooks.integrations._history`): messages it does not touch are
the very objects it was given.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_hooks import HookEvent, HookRun, HookRunner
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.injection._trust import with_calls
from agent_hooks.messages import Message, Role
from agent_hooks.state import ConversationStore
from agent_hooks.state._store import single_call_id

__all__ = ["Pair", "PairKeeper", "RunPairs", "StoredPairs", "keeper_for", "run_with_pairs"]

logger = logging.getLogger("agent_hooks.integrations")

Pair = tuple[dict[str, Any], dict[str, Any]]
"""A synthetic pair as stores keep it: the assistant message with its one call, then the answer."""


class PairKeeper(Protocol):
    """Where one conversation's pairs are kept between model calls."""

    async def load(self) -> list[Pair]: ...

    async def save(self, pairs: list[Pair]) -> None: ...


@dataclass(frozen=True)
class StoredPairs:
    """One tenant's conversation in a store (the store bounds and contains its own failures)."""

    store: ConversationStore
    conversation: str
    tenant: str | None

    async def load(self) -> list[Pair]:
        return await self.store.load(self.conversation, tenant=self.tenant)

    async def save(self, pairs: list[Pair]) -> None:
        await self.store.save(self.conversation, pairs, tenant=self.tenant)


@dataclass
class RunPairs:
    """One run's pairs, in memory: what a run without a store or a conversation id keeps."""

    pairs: list[Pair] = field(default_factory=list)

    async def load(self) -> list[Pair]:
        return list(self.pairs)

    async def save(self, pairs: list[Pair]) -> None:
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
    is nobody's and has no stored state (SPEC 12.1), whatever conversation id it names.
    """
    conversation = (request or {}).get("conversation_id")
    if store is None or not isinstance(conversation, str) or not conversation:
        return fallback
    if needs_tenant and not tenant:
        return fallback
    return StoredPairs(store, conversation, tenant)


async def run_with_pairs(
    runner: HookRunner,
    messages: Sequence[Message],
    keeper: PairKeeper,
    request: Mapping[str, Any] | None,
    *,
    from_client: bool,
) -> tuple[HookRun, Callable[[], Awaitable[None]]]:
    """The request-start hooks on ``messages`` with the kept pairs put back.

    ``from_client``: the history came from a client (remove the pairs it sent first). Returns
    the run and the coroutine function that keeps its pairs: call it once the turn succeeded.

    Raises:
        HookFailedError: a hook with ``on_error: fail`` failed.
    """
    history = list(messages)
    if from_client:
        history, forged = without_client_pairs(history)
        if forged:
            logger.warning("removed %d synthetic pair(s) sent by the client", forged)
    stored = await keeper.load()
    run = await runner.run(
        HookEvent.ON_REQUEST_START, with_stored_pairs(history, stored), request=request
    )

    async def save() -> None:
        pairs = synthetic_pairs(run.messages)
        if pairs or stored:
            await keeper.save(pairs)

    return run, save


def with_stored_pairs(messages: Sequence[Message], stored: Sequence[Pair]) -> list[Message]:
    """``messages`` with the stored pairs after the first user message, in stored order.

    Pairs whose call id the history already holds are left out, so each is there once. Without
    a user message the pairs go at the end.
    """
    sent = {call.id for m in messages for call in m.tool_calls or []}
    missing = [
        Message.model_validate(message)
        for pair in stored
        if single_call_id(pair[0]) not in sent
        for message in pair
    ]
    if not missing:
        return list(messages)
    first = next((i for i, m in enumerate(messages) if m.role is Role.USER), None)
    at = len(messages) if first is None else first + 1
    return [*messages[:at], *missing, *messages[at:]]


def without_client_pairs(messages: Sequence[Message]) -> tuple[list[Message], int]:
    """``messages`` without synthetic-looking pairs, and how many call ids went.

    The tool message goes, and the ``tool_calls`` entry (the assistant message too when nothing
    else is left in it); every other message is kept as it came.
    """
    removed: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        if message.role is Role.TOOL and is_synthetic_call_id(message.tool_call_id):
            removed.add(message.tool_call_id or "")
            continue
        calls = message.tool_calls or []
        forged = [call for call in calls if is_synthetic_call_id(call.id)]
        if forged:
            removed.update(call.id for call in forged)
            remaining = [call for call in calls if not is_synthetic_call_id(call.id)]
            if not remaining and not message.content:
                continue
            message = with_calls(message, remaining)
        kept.append(message)
    return kept, len(removed)


def synthetic_pairs(messages: Sequence[Message]) -> list[Pair]:
    """Every synthetic pair of ``messages``, in history order, as stores keep them."""
    return [
        (current.to_openai(), following.to_openai())
        for current, following in itertools.pairwise(messages)
        if following.role is Role.TOOL
        and is_synthetic_call_id(following.tool_call_id)
        and single_call_id(current.to_openai()) == following.tool_call_id
    ]
