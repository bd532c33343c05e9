"""The tool contract every hook runs against, whatever is behind it (MCP, REST, a model, Python).

Nothing here does I/O: concrete tools live in :mod:`agent_hooks.toolsets` and implement
:meth:`StagedBaseTool.execute`. :meth:`StagedBaseTool.arun` wraps that with what every tool gets
for free: a progress stage for the host and the tool's fallback strategies.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agent_hooks.messages import Message
from agent_hooks.tools._call_context import current_call_context
from agent_hooks.tools._fallback import FallbackProcessor
from agent_hooks.tools._stages import NullStageReporter, StageLevel, StageReporter

__all__ = [
    "StagedBaseTool",
    "StaticToolSource",
    "ToolCallResult",
    "ToolCallResultEnricher",
    "ToolSource",
]

_EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True, kw_only=True)
class ToolCallResult:
    """What one run of a tool produced.

    ``from_fallback`` is true when a fallback strategy turned an exception into ``content``.
    """

    content: str | None
    tool_call_id: str = ""
    tool_name: str = ""
    from_fallback: bool = False


class StagedBaseTool(ABC):
    """A tool with a final function name, run inside a host-visible (or hidden) stage.

    Subclasses implement :meth:`execute`, or override :meth:`arun` entirely. ``name``,
    ``description`` and ``parameters`` may be class attributes or constructor arguments.
    """

    answers_at_once: bool = False
    """Set by tools that never wait (the built-in clock, a test kit's fixed answer): the runner
    may await them without a task of its own, since nothing can outlive their deadline."""
    name: str
    description: str = ""
    parameters: Mapping[str, Any] = _EMPTY_OBJECT_SCHEMA
    # Class-level defaults, so a subclass whose __init__ forgets super().__init__() still runs.
    fallback: FallbackProcessor = FallbackProcessor()
    stage_reporter: StageReporter | None = None
    """This tool's own reporter; without one, the app's (``StageReporter`` in DI) is used."""
    _legacy_arun: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Remember subclasses that override :meth:`arun` with the shape of 0.1
        (``arun(tool_call_id, *, stage_level, **arguments)``), so :meth:`invoke` still calls
        them correctly."""
        super().__init_subclass__(**kwargs)
        override = cls.__dict__.get("arun")
        if override is not None:
            parameters = list(inspect.signature(override).parameters.values())[1:]
            positional = [
                p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            cls._legacy_arun = len(positional) < 2

    def __init__(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        fallback: FallbackProcessor | None = None,
        stage_reporter: StageReporter | None = None,
    ) -> None:
        """Raises:
        TypeError: the tool has no name, or implements neither execute() nor arun().
        """
        cls = type(self)
        if cls.execute is StagedBaseTool.execute and cls.arun is StagedBaseTool.arun:
            raise TypeError(f"{cls.__name__} must implement execute() (or override arun())")
        if name is not None:
            self.name = name
        if not getattr(self, "name", None):
            raise TypeError(f"{cls.__name__} needs a name (class attribute or name=...)")
        if description is not None:
            self.description = description
        if parameters is not None:
            self.parameters = parameters
        if fallback is not None:
            self.fallback = fallback
        if stage_reporter is not None:
            self.stage_reporter = stage_reporter

    async def invoke(
        self,
        tool_call_id: str,
        arguments: Mapping[str, Any],
        *,
        stage_level: StageLevel = StageLevel.VISIBLE,
    ) -> ToolCallResult:
        """How the runtime calls a tool: :meth:`arun`, whichever shape the subclass gave it.

        Arguments of any name reach the tool here, ``tool_call_id`` and ``stage_level``
        included, except through an ``arun`` override of the old keyword shape.

        Raises:
            Exception: whatever :meth:`arun` raised.
        """
        if self._legacy_arun:
            return await self.arun(tool_call_id, stage_level=stage_level, **arguments)
        return await self.arun(tool_call_id, arguments, stage_level=stage_level)

    async def arun(
        self,
        tool_call_id: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        stage_level: StageLevel = StageLevel.VISIBLE,
        **keyword_arguments: Any,
    ) -> ToolCallResult:
        """Run the tool inside a stage; a matching fallback strategy turns an error into content.

        The arguments are one mapping (any names); keyword arguments are still accepted for
        callers of the old shape and merged under it.

        Raises:
            Exception: whatever :meth:`execute` raised, when no fallback strategy matches it.
        """
        arguments = {**keyword_arguments, **(arguments or {})}
        reporter = (
            self.stage_reporter or current_call_context().stage_reporter or NullStageReporter()
        )
        reporter.stage_started(tool_call_id=tool_call_id, tool_name=self.name, level=stage_level)
        error: Exception | None = None
        try:
            content = await self.execute(arguments)
            return ToolCallResult(tool_call_id=tool_call_id, content=content, tool_name=self.name)
        except Exception as exc:
            error = exc
            fallback_content = self.fallback.process(self.name, exc)
            return ToolCallResult(
                tool_call_id=tool_call_id,
                content=fallback_content,
                tool_name=self.name,
                from_fallback=True,
            )
        finally:
            reporter.stage_finished(
                tool_call_id=tool_call_id, tool_name=self.name, level=stage_level, error=error
            )

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        """Do the work and return the text the model should read (``None``: nothing to say)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class ToolCallResultEnricher(ABC):
    """Adds host state to the synthetic ``tool`` message built from a result.

    Hosts register enrichers as a DI multiprovider of ``list[ToolCallResultEnricher]`` (empty by
    default); each one receives the message the previous one returned.
    """

    @abstractmethod
    def enrich(self, message: Message, result: ToolCallResult) -> Message: ...


@runtime_checkable
class ToolSource(Protocol):
    """Finds a tool by its final function name; may open a connection to find out."""

    async def find_tool(self, name: str) -> StagedBaseTool | None: ...


class StaticToolSource:
    """A :class:`ToolSource` over a fixed list of tools (the first tool with a name wins)."""

    def __init__(self, tools: Iterable[StagedBaseTool]) -> None:
        self._by_name: dict[str, StagedBaseTool] = {}
        for tool in tools:
            self._by_name.setdefault(tool.name, tool)

    async def find_tool(self, name: str) -> StagedBaseTool | None:
        return self._by_name.get(name)
