"""The wrapper every toolset tool runs behind: time limit, fallback, host stages.

Keeping these in one small wrapper means a toolset implementation only has to make the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from agent_hooks.errors import ToolTimeoutError
from agent_hooks.tools import FallbackProcessor, StagedBaseTool, StageLevel, StageReporter

__all__ = ["GuardedTool"]

_INNER_CALL_ID = "guarded"


class GuardedTool(StagedBaseTool):
    """Runs ``inner`` with a deadline; errors (the timeout included) go to ``fallback``."""

    def __init__(
        self,
        inner: StagedBaseTool,
        *,
        timeout_seconds: float,
        fallback: FallbackProcessor | None = None,
        stage_reporter: StageReporter | None = None,
    ) -> None:
        super().__init__(
            name=inner.name,
            description=inner.description,
            parameters=inner.parameters,
            fallback=fallback,
            stage_reporter=stage_reporter,
        )
        self.inner = inner
        self.timeout_seconds = timeout_seconds

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        """Raises:
        ToolTimeoutError: ``inner`` did not finish within ``timeout_seconds``.
        """
        try:
            with anyio.fail_after(self.timeout_seconds):
                result = await self.inner.arun(
                    _INNER_CALL_ID, stage_level=StageLevel.HIDDEN, **arguments
                )
        except ToolTimeoutError:
            raise
        except TimeoutError as exc:
            raise ToolTimeoutError(self.name, self.timeout_seconds) from exc
        return result.content
