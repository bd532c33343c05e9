"""The seed's seam (Component 3): one ``MessagesTransformer`` per request-start hook.

Each transformer runs its single hook through the same :class:`HookRunner` as a whole run, so a
host applying the list one by one gets the same records, deadlines and trust rules, and the same
history, as ``runner.run`` gives in one go. That includes the hook context: a chain of
transformers is one run, so every transformer builds its context from the history the first one
received (SPEC section 10), which each returned history carries along to the next transformer.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_hooks.config.hooks import HookEvent
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message
from agent_hooks.runtime import HookRunner, PreparedHook

__all__ = ["ConfigDrivenToolCallHook"]


class _ChainedHistory(list[Message]):
    """A transformer's output, remembering the history the chain started from.

    The memory holds only while the list is exactly what the transformer returned (the same
    message objects, in order): a host that edits or rebuilds the history between transformers
    starts a new chain.
    """

    def __init__(self, messages: Sequence[Message], *, received: Sequence[Message]) -> None:
        super().__init__(messages)
        self.received = tuple(received)
        self._identity = tuple(map(id, self))

    def chain_start(self) -> tuple[Message, ...] | None:
        return self.received if tuple(map(id, self)) == self._identity else None


class ConfigDrivenToolCallHook(MessagesTransformer):
    """A ``tool_call`` hook as a transformer; never fails the request unless it says so.

    Raises from :meth:`transform` only :class:`~agent_hooks.runtime.HookFailedError`, for a hook
    with ``on_error: "fail"``.
    """

    def __init__(self, hook: PreparedHook, runner: HookRunner) -> None:
        self.hook = hook
        self.runner = runner

    @property
    def label(self) -> str:
        return self.hook.label

    async def transform(self, messages: Sequence[Message]) -> list[Message]:
        start = messages.chain_start() if isinstance(messages, _ChainedHistory) else None
        received = start if start is not None else tuple(messages)
        run = await self.runner.run_hooks(
            [self.hook], HookEvent.ON_REQUEST_START, messages, context_history=received
        )
        return _ChainedHistory(run.messages, received=received)

    def __repr__(self) -> str:
        return f"<ConfigDrivenToolCallHook {self.label!r} tool={self.hook.tool!r}>"
