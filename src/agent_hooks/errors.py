"""Exceptions raised by agent-hooks, grouped by who has to act on them.

::

    AgentHooksError
    ├── ConfigError            the manifest author: the manifest or a reference in it is wrong
    │                          (also a ``ValueError``)
    ├── ToolError              the tool's owner: a tool call failed (server down, bad status, ...)
    │   ├── ToolTimeoutError   ... because it ran out of time (also a ``TimeoutError``)
    │   └── ToolNotFoundError  ... because no toolset on the hook's route has the tool
    ├── HookFailedError        the host: a hook with ``on_error: fail`` failed, so the request
    │                          cannot go on as the manifest wants (defined beside the run it
    │                          carries, in ``agent_hooks.runtime``)
    └── UsageError             the host developer: the library was used the wrong way

Hooks never let tool errors escape into a request: the hook runtime catches ``Exception`` once,
at the seam, and records and logs it instead (SPEC section 6). The one exception the runtime raises
on purpose is :class:`HookFailedError`, for hooks that asked for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "AgentHooksError",
    "ConfigError",
    "ConfigIssue",
    "ToolError",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "UsageError",
]


class AgentHooksError(Exception):
    """Root of every exception this package raises on purpose."""


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a manifest: where (``hooks[2].tool_name``; ``$`` is the root) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ConfigError(AgentHooksError, ValueError):
    """The manifest cannot be used as written; every issue names its JSON path.

    Also a ``ValueError``, like pydantic's ``ValidationError``: code that guards manifest loading
    with ``except ValueError`` catches both.
    """

    def __init__(self, issues: Sequence[ConfigIssue], *, source: str | None = None) -> None:
        self.issues = tuple(issues)
        self.source = source
        where = f" in {source}" if source else ""
        lines = "\n".join(f"  {issue}" for issue in self.issues)
        count = len(self.issues)
        noun = "error" if count == 1 else "errors"
        super().__init__(f"{count} manifest {noun}{where}:\n{lines}")


class ToolError(AgentHooksError):
    """A tool call failed; the message names the tool and the reason, never a secret."""

    def __init__(self, tool_name: str, reason: str) -> None:
        self.tool_name = tool_name
        self.reason = reason
        super().__init__(f"tool {tool_name!r} failed: {reason}")


class ToolTimeoutError(ToolError, TimeoutError):
    """A tool call did not finish within its toolset's ``timeout_seconds``."""

    def __init__(self, tool_name: str, timeout_seconds: float) -> None:
        self.timeout_seconds = timeout_seconds
        super().__init__(tool_name, f"timed out after {timeout_seconds:g} seconds")


class ToolNotFoundError(ToolError):
    """No toolset on the hook's route offers the tool."""


class UsageError(AgentHooksError):
    """The host used the API in a way it does not support (for example, a closed resource)."""
