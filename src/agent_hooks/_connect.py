"""``validate --connect``: contact every toolset, list its tools, and check each hook's tool exists.

A manifest can be valid and still name a tool its server does not offer, or a server nobody can
reach; both only show up at request time, as a skipped injection and a log line. This check
finds them up front. It builds the app exactly as a host would (:func:`~agent_hooks.open_app`),
so it sees the same toolsets, and lists tools only through the :class:`Toolset` interface. Every
toolset is contacted concurrently, bounded by its own ``timeout_seconds``, and closed afterwards.

``rest-api`` and ``deployment`` toolsets offer the tools their declaration lists, so for them the
check is about names, not reachability.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.app_factory import open_app
from agent_hooks.config import ApplicationConfig, ToolCallHookConfig
from agent_hooks.config._suggest import did_you_mean, quoted_list
from agent_hooks.errors import ConfigIssue, ToolError
from agent_hooks.tools.toolsets import ToolRegistry, Toolset

__all__ = ["connection_issues"]

logger = logging.getLogger("agent_hooks.connect")


@dataclass(frozen=True)
class _Listing:
    """What contacting one toolset found: its final tool names, or why it could not be reached."""

    toolset: Toolset
    tool_names: tuple[str, ...] = ()
    failure: str | None = None


async def connection_issues(
    config: ApplicationConfig, modules: Iterable[Any] = ()
) -> list[ConfigIssue]:
    """Unreachable toolsets (``toolsets[i]``), then hooks whose tool does not exist (``hooks[i]``).

    ``modules`` are the host's own DI modules (for example its internal tools), as for
    :func:`~agent_hooks.create_injector`.

    Raises:
        ConfigError: the manifest asks for something the process cannot provide (an internal
            tool nobody registered), found while building the app, before contacting anything.
    """
    async with open_app(config, modules) as injector:
        registry = injector.get(ToolRegistry)
        toolsets = registry.toolsets
        listings: list[_Listing] = [_Listing(toolset) for toolset in toolsets]

        async def contact(index: int) -> None:
            listings[index] = await _list(toolsets[index])

        async with anyio.create_task_group() as group:
            for index in range(len(toolsets)):
                group.start_soon(contact, index)

    issues = [
        ConfigIssue(f"toolsets[{index}]", f"cannot reach toolset {listing.toolset.name!r}: {why}")
        for index, listing in enumerate(listings)
        if (why := listing.failure) is not None
    ]
    registered = tuple(tool.name for tool in registry.registered_tools)
    for index, hook in enumerate(config.hooks or []):
        message = _missing_tool(hook, listings, registered)
        if message is not None:
            issues.append(ConfigIssue(f"hooks[{index}].tool_name", message))
    return issues


async def _list(toolset: Toolset) -> _Listing:
    """List one toolset's tools within its ``timeout_seconds``; any failure becomes a reason."""
    try:
        with anyio.fail_after(toolset.timeout_seconds):
            tools = await toolset.list_tools()
    except TimeoutError:  # ToolTimeoutError included: the same words either way
        seconds = f"{toolset.timeout_seconds:g} second{'' if toolset.timeout_seconds == 1 else 's'}"
        return _Listing(toolset, failure=f"timed out after {seconds}")
    except ToolError as exc:
        return _Listing(toolset, failure=exc.reason)
    except Exception as exc:  # the seam: one toolset failing must not hide the others' results
        logger.debug("toolset=%s outcome=list_failed", toolset.name, exc_info=True)
        return _Listing(toolset, failure=f"{type(exc).__name__}: {exc}")
    names = tuple(tool.name for tool in tools)
    logger.info("toolset=%s outcome=listed tools=%s", toolset.name, ",".join(names))
    return _Listing(toolset, tool_names=names)


def _missing_tool(
    hook: ToolCallHookConfig, listings: Sequence[_Listing], registered: Sequence[str]
) -> str | None:
    """Why ``hook``'s tool cannot be found, or ``None`` when it exists or nobody can tell.

    A hook whose toolset could not be reached is not judged: its toolset is already an error.
    Without ``toolset_name`` the tool may also be a registered Python tool (``registered``).
    """
    final_name = hook.final_tool_name
    if hook.toolset_name is not None:
        listing = next((item for item in listings if item.toolset.name == hook.toolset_name), None)
        if listing is None or listing.failure is not None or final_name in listing.tool_names:
            return None  # an undeclared toolset is a validation error, reported before this
        prefix = sanitize_toolname(f"{listing.toolset.name}_")
        offered = [name.removeprefix(prefix) for name in listing.tool_names]
        return (
            f"toolset {hook.toolset_name!r} has no tool {hook.tool_name!r}"
            f"{_closest(hook.tool_name, offered)}"
        )
    if final_name in registered or any(final_name in item.tool_names for item in listings):
        return None
    if any(item.failure is not None for item in listings):
        return None
    offered = [name for item in listings for name in item.tool_names]
    offered += [name for name in registered if name not in offered]
    return f"no toolset has a tool named {hook.tool_name!r}{_closest(hook.tool_name, offered)}"


def _closest(name: str, offered: Sequence[str]) -> str:
    """A did-you-mean when one is close, else every tool on offer, so the author can pick."""
    return did_you_mean(name, offered) or f" (available tools: {quoted_list(offered)})"
