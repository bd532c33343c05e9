"""Checks that look across the manifest: names that must be unique or must point somewhere.

Each problem is located at the field the author has to change and raised through pydantic (a
``ValidationError`` with custom locations), so it is reported exactly like a type error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from pydantic_core import InitErrorDetails, PydanticCustomError

from agent_hooks._toolnames import MAX_TOOL_NAME_LENGTH, uncut_toolname
from agent_hooks.config.diagnostics._suggest import clip, did_you_mean, quoted_list
from agent_hooks.config.toolsets import DeploymentToolsetConfig, RestApiToolsetConfig
from agent_hooks.errors import ConfigIssue

if TYPE_CHECKING:
    from agent_hooks.config.application import ApplicationConfig
    from agent_hooks.config.hooks import ToolCallHookConfig

__all__ = ["reference_errors", "reference_warnings"]

_VERBATIM_TOOLSET_TYPES = ("deployment", "internal")
"""Toolset types whose tools keep their declared names, so a hook should not name the toolset."""


def reference_errors(config: ApplicationConfig) -> list[InitErrorDetails]:
    """Every cross-reference problem, in manifest order (toolsets first, then hook by hook)."""
    hooks = config.hooks or []
    toolset_types = _toolset_types(config)
    errors = _duplicates("toolsets", _named_toolsets(config))
    errors += _sanitized_collisions(config)
    errors += _duplicates("hooks", ((i, h.name) for i, h in enumerate(hooks)))
    errors += _declared_tool_length_errors(config)
    for index, hook in enumerate(hooks):
        errors += _toolset_errors(index, hook, toolset_types)
        errors += _length_errors(index, hook)
    errors.sort(key=lambda error: (error["loc"][0] != "toolsets", error["loc"][1]))
    return errors


def _duplicates(section: str, names: Iterable[tuple[int, str | None]]) -> list[InitErrorDetails]:
    """A name already used earlier in ``section``, reported at the later use."""
    noun = {"toolsets": "toolset", "hooks": "hook"}[section]
    first: dict[str, int] = {}
    errors: list[InitErrorDetails] = []
    for index, name in names:
        if name is None:
            continue
        if name in first:
            message = f"duplicate {noun} name {_q(name)} (first used at {section}[{first[name]}])"
            errors.append(_error((section, index, "name"), message, name))
        else:
            first[name] = index
    return errors


def _sanitized_collisions(config: ApplicationConfig) -> list[InitErrorDetails]:
    """Two toolsets whose names sanitise alike (``kb.a``, ``kb_a``) would give their tools the
    same final names, so one would silently answer for the other."""
    first: dict[str, tuple[int, str]] = {}
    errors: list[InitErrorDetails] = []
    for index, name in _named_toolsets(config):
        key = uncut_toolname(name)
        if key not in first:
            first[key] = (index, name)
            continue
        other_index, other = first[key]
        if other != name:  # an exact repeat is already a duplicate-name error
            message = (
                f"toolset names {_q(other)} (toolsets[{other_index}]) and {_q(name)}"
                f" both become {_q(key)} in tool names; rename one"
            )
            errors.append(_error(("toolsets", index, "name"), message, name))
    return errors


def _named_toolsets(config: ApplicationConfig) -> list[tuple[int, str]]:
    """Each toolset's index and name, leaving out deployment toolsets that give none: their
    default name is only a label (their tools keep their own names), so two of them may
    coexist."""
    return [
        (index, toolset.name)
        for index, toolset in enumerate(config.toolsets)
        if not (
            isinstance(toolset, DeploymentToolsetConfig) and "name" not in toolset.model_fields_set
        )
    ]


def _toolset_errors(
    index: int, hook: ToolCallHookConfig, toolset_types: Mapping[str, str]
) -> list[InitErrorDetails]:
    """``toolset_name`` must name a declared toolset whose tools are addressed by prefix."""
    name = hook.toolset_name
    if name is None:
        return []
    if name not in toolset_types:
        message = (
            f"no toolset named {_q(name)}{did_you_mean(name, toolset_types)}"
            f" (declared toolsets: {quoted_list(toolset_types)})"
        )
        return [_error(("hooks", index, "toolset_name"), message, name)]
    return []


def reference_warnings(config: ApplicationConfig) -> list[ConfigIssue]:
    """Hooks that are valid per the SPEC but will not find their tool as written.

    A hook that names an ``internal`` or ``deployment`` toolset calls the prefixed name
    ``{toolset}_{tool}``, which such toolsets never offer (their tools keep their own names).
    The SPEC's naming rule makes this legal, so it is a warning, not an error: the hook is
    skipped at run time with a warning of its own.
    """
    toolset_types = _toolset_types(config)
    warnings: list[ConfigIssue] = []
    for index, hook in enumerate(config.hooks or []):
        kind = toolset_types.get(hook.toolset_name or "")
        if kind in _VERBATIM_TOOLSET_TYPES:
            warnings.append(
                ConfigIssue(
                    f"hooks[{index}].toolset_name",
                    f"toolset {_q(hook.toolset_name or '')} has type {kind!r}, whose tools keep"
                    f" their own names, so this hook calls {_q(hook.final_tool_name)};"
                    " remove toolset_name"
                    " and give the tool's name in tool_name",
                )
            )
    return warnings


def _toolset_types(config: ApplicationConfig) -> dict[str, str]:
    """Each declared toolset name and its ``type`` (the first declaration wins)."""
    types: dict[str, str] = {}
    for toolset in config.toolsets:
        types.setdefault(toolset.name, toolset.type)
    return types


def _length_errors(index: int, hook: ToolCallHookConfig) -> list[InitErrorDetails]:
    """A final name over the limit would be cut, so it could name a different tool or none."""
    if hook.toolset_name is None:
        full_name = hook.tool_name
    else:
        full_name = uncut_toolname(f"{hook.toolset_name}_{hook.tool_name}")
    return _too_long(("hooks", index, "tool_name"), full_name, hook.tool_name)


def _declared_tool_length_errors(config: ApplicationConfig) -> list[InitErrorDetails]:
    """Tools a manifest declares itself (``rest-api``, ``deployment``) must fit the limit too."""
    errors: list[InitErrorDetails] = []
    for index, toolset in enumerate(config.toolsets):
        if isinstance(toolset, RestApiToolsetConfig):
            for position, tool in enumerate(toolset.tools):
                full_name = uncut_toolname(f"{toolset.name}_{tool.name}")
                loc = ("toolsets", index, "tools", position, "name")
                errors += _too_long(loc, full_name, tool.name)
        elif isinstance(toolset, DeploymentToolsetConfig):
            for position, deployment in enumerate(toolset.tools):
                loc = ("toolsets", index, "tools", position, "name")
                errors += _too_long(loc, deployment.name, deployment.name)
    return errors


def _too_long(loc: tuple[str | int, ...], full_name: str, value: str) -> list[InitErrorDetails]:
    if len(full_name) <= MAX_TOOL_NAME_LENGTH:
        return []
    message = (
        f"final tool name {_q(full_name)} is {len(full_name)} characters;"
        f" the limit is {MAX_TOOL_NAME_LENGTH}"
    )
    return [_error(loc, message, value)]


def _error(loc: tuple[str | int, ...], message: str, value: str) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError("reference", message), loc=loc, input=value)


def _q(name: str) -> str:
    """A name as the author wrote it, quoted, cut so that no message echoes a huge value."""
    return repr(clip(name))
