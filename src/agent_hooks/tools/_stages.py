"""Progress stages: how a host shows "calling get_memories..." while a tool runs.

A tool opens a stage around each run and reports it to a host-provided :class:`StageReporter`;
the default reporter does nothing. Synthetic injections run with :attr:`StageLevel.HIDDEN` so a
host can keep its UI free of calls the user never asked for.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

__all__ = ["NullStageReporter", "StageLevel", "StageReporter"]


class StageLevel(StrEnum):
    """Whether a host should show a stage to the user."""

    VISIBLE = "visible"
    HIDDEN = "hidden"


class StageReporter(Protocol):
    """Receives the start and end of each tool run."""

    def stage_started(self, *, tool_call_id: str, tool_name: str, level: StageLevel) -> None: ...

    def stage_finished(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        level: StageLevel,
        error: BaseException | None,
    ) -> None: ...


class NullStageReporter:
    """The default reporter: stages go nowhere."""

    def stage_started(self, *, tool_call_id: str, tool_name: str, level: StageLevel) -> None:
        return None

    def stage_finished(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        level: StageLevel,
        error: BaseException | None,
    ) -> None:
        return None
