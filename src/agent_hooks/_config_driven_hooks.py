"""The seed's seam (Component 3): one ``MessagesTransformer`` per request-start hook.

Each transformer runs its single hook through the same :class:`HookRunner` as a whole run, so a
host applying the list one by one gets the same records, deadlines and trust rules, and the same
history, as ``runner.run`` gives in one go.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_hooks.config.hooks import HookEvent
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message
from agent_hooks.runtime import HookRunner, PreparedHook

__all__ = ["ConfigDrivenToolCallHook"]


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
        run = await self.runner.run_hooks([self.hook], HookEvent.ON_REQUEST_START, messages)
        return run.messages

    def __repr__(self) -> str:
        return f"<ConfigDrivenToolCallHook {self.label!r} tool={self.hook.tool!r}>"
