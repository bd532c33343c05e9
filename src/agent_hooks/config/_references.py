"""Checks that look across the manifest: names that must be unique or must point somewhere."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic_core import InitErrorDetails, PydanticCustomError

from agent_hooks._toolnames import MAX_TOOL_NAME_LENGTH, uncut_toolname
from agent_hooks.config._suggest import did_you_mean, quoted_list

if TYPE_CHECKING:
    from agent_hooks.config.application import ApplicationConfig

__all__ = ["reference_errors"]


def reference_errors(config: ApplicationConfig) -> list[InitErrorDetails]:
    """Every cross-reference problem, each located at the field that has to change."""
    errors: list[InitErrorDetails] = []
    first_toolset: dict[str, int] = {}
    for index, toolset in enumerate(config.toolsets):
        if toolset.name in first_toolset:
            where = f"toolsets[{first_toolset[toolset.name]}]"
            errors.append(
                _error(
                    ("toolsets", index, "name"),
                    f"duplicate toolset name {toolset.name!r} (first declared at {where})",
                    toolset.name,
                )
            )
        else:
            first_toolset[toolset.name] = index

    first_hook: dict[str, int] = {}
    for index, hook in enumerate(config.hooks or []):
        if hook.name is not None:
            if hook.name in first_hook:
                where = f"hooks[{first_hook[hook.name]}]"
                errors.append(
                    _error(
                        ("hooks", index, "name"),
                        f"duplicate hook name {hook.name!r} (first used at {where})",
                        hook.name,
                    )
                )
            else:
                first_hook[hook.name] = index
        if hook.toolset_name is not None and hook.toolset_name not in first_toolset:
            message = (
                f"no toolset named {hook.toolset_name!r}"
                f"{did_you_mean(hook.toolset_name, first_toolset)}"
                f" (declared toolsets: {quoted_list(first_toolset)})"
            )
            errors.append(_error(("hooks", index, "toolset_name"), message, hook.toolset_name))
        full_name = (
            hook.tool_name
            if hook.toolset_name is None
            else uncut_toolname(f"{hook.toolset_name}_{hook.tool_name}")
        )
        if len(full_name) > MAX_TOOL_NAME_LENGTH:
            message = (
                f"final tool name {full_name!r} is {len(full_name)} characters;"
                f" the limit is {MAX_TOOL_NAME_LENGTH}"
            )
            errors.append(_error(("hooks", index, "tool_name"), message, hook.tool_name))
    return errors


def _error(loc: tuple[str | int, ...], message: str, value: str) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError("reference", message), loc=loc, input=value)
