"""``validate --connect``: contact every toolset, list its tools, and check each hook against them.

A manifest can be valid and still name a tool its server does not offer, pass arguments the tool
rejects, or name a server nobody can reach; all only show up at request time, as a skipped
injection and a log line. This check finds them up front. It builds the app exactly as a host would
(:func:`~agent_hooks.open_app`), so it sees the same toolsets, and lists tools only through the
:class:`Toolset` interface. Every toolset is contacted concurrently, bounded by its own
``timeout_seconds``, and closed afterwards.

``rest-api`` and ``deployment`` toolsets offer the tools their declaration lists, so for them the
check is about names and arguments, not reachability.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema  # type: ignore[import-untyped]  # no stubs; SPEC section 11 names this package
from referencing.exceptions import Unresolvable

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.app_factory import open_app
from agent_hooks.config import ApplicationConfig, ToolCallHookConfig
from agent_hooks.config.diagnostics._suggest import clip, did_you_mean, quoted_list
from agent_hooks.config.diagnostics._template_checks import is_templated
from agent_hooks.config.diagnostics._validation_errors import format_path
from agent_hooks.errors import ConfigIssue, ToolError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.toolsets import ToolRegistry, Toolset

__all__ = ["connection_issues"]

logger = logging.getLogger("agent_hooks.connect")


@dataclass(frozen=True)
class _Listing:
    """What contacting one toolset found: its tools, or why it could not be reached.

    ``hidden`` are the server's names of tools the toolset's ``allowed_tools`` leaves out.
    """

    toolset: Toolset
    tools: tuple[StagedBaseTool, ...] = ()
    hidden: tuple[str, ...] = ()
    failure: str | None = None

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.tools)

    def hidden_name_for(self, final_name: str) -> str | None:
        """The server's name of a hidden tool whose final name would be ``final_name``."""
        return next(
            (name for name in self.hidden if _final_name(self.toolset, name) == final_name), None
        )


async def connection_issues(
    config: ApplicationConfig, modules: Iterable[Any] = ()
) -> list[ConfigIssue]:
    """Unreachable toolsets (``toolsets[i]``), then each hook's missing tool or bad arguments.

    ``modules`` are the host's own DI modules (for example its internal tools), as for
    :func:`~agent_hooks.create_injector`.

    Raises:
        ConfigError: the manifest asks for something the process cannot provide (an internal
            tool nobody registered), found while building the app, before contacting anything.
    """
    async with open_app(config, modules) as injector:
        toolsets = injector.get(ToolRegistry).toolsets
        registered = tuple(injector.get(list[StagedBaseTool]))
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
    for index, hook in enumerate(config.hooks or []):
        tool = _tool_for(hook, listings, registered)
        if tool is not None:
            issues += _argument_issues(("hooks", index, "arguments"), hook.arguments, tool)
            continue
        message = _missing_tool(hook, listings, registered)
        if message is not None:
            issues.append(ConfigIssue(f"hooks[{index}].tool_name", message))
    return issues


async def _list(toolset: Toolset) -> _Listing:
    """List one toolset's tools within its ``timeout_seconds``; any failure becomes a reason."""
    try:
        with anyio.fail_after(toolset.timeout_seconds):
            tools = await toolset.list_tools()
            hidden = await _hidden_names(toolset)
    except TimeoutError:  # ToolTimeoutError included: the same words either way
        seconds = f"{toolset.timeout_seconds:g} second{'' if toolset.timeout_seconds == 1 else 's'}"
        return _Listing(toolset, failure=f"timed out after {seconds}")
    except ToolError as exc:
        return _Listing(toolset, failure=exc.reason)
    except Exception as exc:  # the seam: one toolset failing must not hide the others' results
        logger.debug("toolset=%s outcome=list_failed", toolset.name, exc_info=True)
        return _Listing(toolset, failure=f"{type(exc).__name__}: {exc}")
    names = ",".join(tool.name for tool in tools)
    logger.info("toolset=%s outcome=listed tools=%s hidden=%s", toolset.name, names, len(hidden))
    return _Listing(toolset, tools=tuple(tools), hidden=hidden)


async def _hidden_names(toolset: Toolset) -> tuple[str, ...]:
    """Server tools that ``allowed_tools`` leaves out, for toolsets that can tell (MCP)."""
    hidden_tool_names = getattr(toolset, "hidden_tool_names", None)
    if hidden_tool_names is None:
        return ()
    return tuple(await hidden_tool_names())


def _final_name(toolset: Toolset, server_name: str) -> str:
    return sanitize_toolname(f"{toolset.name}_{server_name}")


def _tool_for(
    hook: ToolCallHookConfig, listings: Sequence[_Listing], registered: Sequence[StagedBaseTool]
) -> StagedBaseTool | None:
    """The tool a hook would call: in its toolset, else the first toolset or Python tool with
    its verbatim name."""
    final_name = hook.final_tool_name
    candidates = [
        tool
        for listing in listings
        if hook.toolset_name in (None, listing.toolset.name)
        for tool in listing.tools
    ]
    if hook.toolset_name is None:
        candidates += registered
    return next((tool for tool in candidates if tool.name == final_name), None)


def _missing_tool(
    hook: ToolCallHookConfig, listings: Sequence[_Listing], registered: Sequence[StagedBaseTool]
) -> str | None:
    """Why ``hook``'s tool cannot be found, or ``None`` when nobody can tell.

    A hook whose toolset could not be reached is not judged (its toolset is already an error),
    nor a hook without ``toolset_name`` whose name an unreachable toolset could own.
    Without ``toolset_name`` the tool may also be a registered Python tool (``registered``).
    """
    final_name = hook.final_tool_name
    if hook.toolset_name is not None:
        listing = next((item for item in listings if item.toolset.name == hook.toolset_name), None)
        if listing is None or listing.failure is not None:
            return None  # an undeclared toolset is a validation error, reported before this
        if (hidden := listing.hidden_name_for(final_name)) is not None:
            return _hidden_message(final_name, listing.toolset, hidden)
        prefix = sanitize_toolname(f"{listing.toolset.name}_")
        offered = [name.removeprefix(prefix) for name in listing.tool_names]
        return (
            f"toolset {hook.toolset_name!r} has no tool {hook.tool_name!r}"
            f"{_closest(hook.tool_name, offered)}"
        )
    for listing in listings:
        if (hidden := listing.hidden_name_for(final_name)) is not None:
            return _hidden_message(final_name, listing.toolset, hidden)
    if any(item.failure is not None and item.toolset.may_provide(final_name) for item in listings):
        return None  # an unreachable toolset that could own the name: nobody can tell
    offered = [name for item in listings for name in item.tool_names]
    offered += [tool.name for tool in registered if tool.name not in offered]
    return f"no toolset has a tool named {hook.tool_name!r}{_closest(hook.tool_name, offered)}"


def _hidden_message(final_name: str, toolset: Toolset, server_name: str) -> str:
    return (
        f"tool {final_name!r} exists, but toolset {toolset.name!r} leaves it out: add"
        f" {server_name!r} to its allowed_tools"
    )


def _closest(name: str, offered: Sequence[str]) -> str:
    """A did-you-mean when one is close, else every tool on offer, so the author can pick."""
    return did_you_mean(name, offered) or f" (available tools: {quoted_list(offered)})"


def _argument_issues(
    where: tuple[str | int, ...], arguments: Mapping[str, Any], tool: StagedBaseTool
) -> list[ConfigIssue]:
    """A hook's arguments checked against the tool's input schema, as far as they are known.

    Templated values are only known per request, so they are not checked; a top-level ``$`` key
    makes the whole object a template (``$let``, ``$merge``...), so no key can be called missing
    or unknown then. A schema we cannot use (invalid, unresolvable ``$ref``) is the tool owner's
    problem and is skipped.
    """
    schema = dict(tool.parameters)
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        validator_class.check_schema(schema)
        literal = {
            key: value
            for key, value in arguments.items()
            if not key.startswith("$") and not is_templated({key: value})
        }
        # Keys are judged below; the schema judges the values of the keys that are there.
        values_only = {
            k: v for k, v in schema.items() if k not in ("required", "additionalProperties")
        }
        errors = [
            error
            for error in validator_class(values_only).iter_errors(literal)
            if error.absolute_path
        ]
    except (jsonschema.SchemaError, Unresolvable) as exc:
        logger.info("tool=%s outcome=schema_unusable error=%s", tool.name, type(exc).__name__)
        return []
    issues = [
        ConfigIssue(format_path([*where, *error.absolute_path]), _message(error))
        for error in errors
    ]
    if not any(key.startswith("$") for key in arguments):
        issues += _key_issues(where, arguments, schema, tool.name)
    return issues


def _key_issues(
    where: tuple[str | int, ...], arguments: Mapping[str, Any], schema: Mapping[str, Any], tool: str
) -> list[ConfigIssue]:
    """Required keys that are missing, and unknown keys where the schema forbids them."""
    properties = schema.get("properties") or {}
    issues = [
        ConfigIssue(format_path([*where, key]), f"required by tool {tool!r} but missing")
        for key in schema.get("required") or []
        if isinstance(key, str) and key not in arguments
    ]
    if schema.get("additionalProperties") is False:
        patterns = list(schema.get("patternProperties") or {})
        issues += [
            ConfigIssue(format_path([*where, key]), f"unknown key{did_you_mean(key, properties)}")
            for key in arguments
            if key not in properties and not any(re.search(p, key) for p in patterns)
        ]
    return issues


def _message(error: jsonschema.ValidationError) -> str:
    """jsonschema's message, with a long value cut (it quotes the whole value)."""
    quoted = repr(error.instance)
    return str(error.message).replace(quoted, clip(quoted))
