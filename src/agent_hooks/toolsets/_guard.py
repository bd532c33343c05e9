"""The wrapper every resolved tool runs behind: the toolset's time limit and fallback, and the
scrubbing of our own secrets out of what the tool answers.

A wrapper, not a subclass: it forwards one call to the tool's own :meth:`StagedBaseTool.invoke`
(which reports the tool's stage and applies the tool's own fallback once), and adds only what the
toolset configures around it. Every tool result a hook can inject comes out of
:meth:`GuardedTool.call`, so that is where secrets are scrubbed from results, once (SPEC
section 9): a tool that reflects its request (an API echoing its headers, a server quoting its
environment) never hands our credentials to the model or to the stored history.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from typing import Any

from agent_hooks._scrub import scrub_result
from agent_hooks.errors import ToolTimeoutError
from agent_hooks.tools import StagedBaseTool, StageLevel, ToolCallResult
from agent_hooks.tools._call_context import current_call_context
from agent_hooks.tools._fallback import FallbackProcessor

__all__ = ["GuardedTool"]


class GuardedTool:
    """``inner`` with a per-call deadline; errors (the timeout included) go to ``fallback``."""

    def __init__(
        self,
        inner: StagedBaseTool,
        *,
        timeout_seconds: float,
        fallback: FallbackProcessor | None = None,
    ) -> None:
        self.inner = inner
        self.timeout_seconds = timeout_seconds
        self.fallback = fallback

    @property
    def name(self) -> str:
        return self.inner.name

    async def call(
        self,
        arguments: Mapping[str, Any],
        *,
        tool_call_id: str,
        stage_level: StageLevel = StageLevel.HIDDEN,
    ) -> ToolCallResult:
        """Run the tool once within ``timeout_seconds``; registered secrets in its content
        (:func:`agent_hooks._scrub.scrub`) are replaced by ``***``.

        Raises:
            ToolTimeoutError: the tool did not finish in time (and no fallback handles it).
            Exception: whatever the tool raised that no fallback handles.
        """
        try:
            result = await self._call(arguments, tool_call_id, stage_level)
        except Exception as exc:
            if self.fallback is None:
                raise
            content = self.fallback.process(self.name, exc)
            result = ToolCallResult(
                tool_call_id=tool_call_id,
                content=content,
                tool_name=self.name,
                from_fallback=True,
            )
        text = result.content
        if not isinstance(text, str):  # None, or a host tool's mistake the runner names
            return result
        scrubbed = scrub_result(text)
        return result if scrubbed == text else dataclasses.replace(result, content=scrubbed)

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        """The content of one guarded call (for direct use outside hooks)."""
        return (await self.call(arguments, tool_call_id="direct")).content

    async def _call(
        self, arguments: Mapping[str, Any], tool_call_id: str, stage_level: StageLevel
    ) -> ToolCallResult:
        if self.inner.answers_at_once:  # nothing to time: it returns before any deadline
            return await self.inner.invoke(tool_call_id, arguments, stage_level=stage_level)
        loop = asyncio.get_running_loop()
        when = loop.time() + self.timeout_seconds
        context = current_call_context()
        if context.deadline is not None and when > context.deadline:
            # The runner cancels the call at its own deadline, before this timeout could end,
            # and cancels it again at ``when`` if it is still running then: no timer needed.
            context.late_deadline = when
            return await self.inner.invoke(tool_call_id, arguments, stage_level=stage_level)
        try:
            async with asyncio.timeout(None) as timeout:
                # The timer is set only if the call is still running after its first step (most
                # host tools answer in it): a timer costs a push onto the loop's timer heap.
                # It expires at the same moment either way, counted from here.
                arm = loop.call_soon(timeout.reschedule, when)
                try:
                    return await self.inner.invoke(tool_call_id, arguments, stage_level=stage_level)
                finally:
                    arm.cancel()
        except ToolTimeoutError:
            raise
        except TimeoutError as exc:
            raise ToolTimeoutError(self.name, self.timeout_seconds) from exc

    def __repr__(self) -> str:
        return f"<GuardedTool {self.name!r} timeout={self.timeout_seconds:g}s>"
