"""Turning a tool's exception into content the model can read, when the tool's owner asks for it.

A tool has no fallback by default, so a failure propagates and the hook skips the injection
(SPEC section 6). A host or manifest that prefers the model to see "the memory service is down"
configures a strategy; the first strategy that matches the exception produces the content.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["ErrorMessageStrategy", "FallbackProcessor", "FallbackStrategy"]


class FallbackStrategy(ABC):
    """Decides whether it handles an exception, and what text replaces it."""

    @abstractmethod
    def matches(self, exc: Exception) -> bool: ...

    @abstractmethod
    def content_for(self, tool_name: str, exc: Exception) -> str: ...


class ErrorMessageStrategy(FallbackStrategy):
    """Handles the given exception types with a message template.

    ``template`` may use ``{tool}`` and ``{error}``.
    """

    def __init__(
        self,
        template: str = "The tool {tool} is unavailable: {error}",
        *,
        exception_types: tuple[type[Exception], ...] = (Exception,),
    ) -> None:
        self.template = template
        self.exception_types = exception_types

    def matches(self, exc: Exception) -> bool:
        return isinstance(exc, self.exception_types)

    def content_for(self, tool_name: str, exc: Exception) -> str:
        return self.template.format(tool=tool_name, error=exc)


class FallbackProcessor:
    """Applies the first matching strategy; with none matching, re-raises the exception."""

    def __init__(self, strategies: Sequence[FallbackStrategy] = ()) -> None:
        self.strategies = tuple(strategies)

    def process(self, tool_name: str, exc: Exception) -> str:
        """Return fallback content for ``exc``.

        Raises:
            Exception: ``exc`` itself, when no strategy matches.
        """
        for strategy in self.strategies:
            if strategy.matches(exc):
                return strategy.content_for(tool_name, exc)
        raise exc
