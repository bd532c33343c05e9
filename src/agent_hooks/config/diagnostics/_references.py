"""Checks that look across the manifest: names that must be unique or must point somewhere.

Each problem is located at the field the author has to change and raised through pydantic (a
``ValidationError`` with custom locations), so it is reported exactly like a type error.

The checks read the names only (:class:`_Names`), taken either from a validated manifest
(:func:`reference_errors`) or, leniently, from one that failed validation
(:func:`raw_reference_errors`), so ``validate`` reports them together with the manifest's other
errors instead of after those are fixed (SPEC section 7). A name that is missing or malformed is
left out of the checks; its own error is already reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_core import InitErrorDetails, PydanticCustomError

from agent_hooks._toolnames import MAX_TOOL_NAME_LENGTH, uncut_toolname
from agent_hooks.config.diagnostics._suggest import clip, did_you_mean, quoted_list
from agent_hooks.config.toolsets import DeploymentToolsetConfig, RestApiToolsetConfig
from agent_hooks.errors import ConfigIssue

if TYPE_CHECKING:
    from agent_hooks.config.application import ApplicationConfig

__all__ = ["REFERENCE_ERROR_TYPE", "raw_reference_errors", "reference_errors", "reference_warnings"]

REFERENCE_ERROR_TYPE = "reference"
"""The pydantic error type of every cross-reference error."""

_VERBATIM_TOOLSET_TYPES = ("deployment", "internal")
"""Toolset types whose tools keep their declared names, so a hook should not name the toolset."""

_DEFAULT_DEPLOYMENT_NAME: str = DeploymentToolsetConfig.model_fields["name"].default
_PREFIXED_TOOL_TYPES = ("rest-api",)
"""Declared tools whose final name is ``{toolset}_{tool}``; a deployment's tools keep theirs."""
_DECLARED_TOOL_TYPES = ("rest-api", "deployment")


@dataclass(frozen=True)
class _Toolset:
    index: int
    name: str | None
    """``None`` when missing or malformed."""
    type: str | None
    named: bool
    """The author gave the name; a deployment toolset's default name is only a label."""
    tools: tuple[tuple[int, str], ...]
    """Declared tools (``rest-api``, ``deployment``): position and name."""


@dataclass(frozen=True)
class _Hook:
    index: int
    name: str | None
    toolset_name: str | None
    tool_name: str | None


@dataclass(frozen=True)
class _Names:
    """What the cross-reference checks read of a manifest."""

    toolsets: tuple[_Toolset, ...]
    hooks: tuple[_Hook, ...]
    toolsets_known: bool
    """Every toolset's name is known, so a ``toolset_name`` naming none of them is an error
    (rather than perhaps the name of a toolset whose declaration is broken)."""


def reference_errors(config: ApplicationConfig) -> list[InitErrorDetails]:
    """Every cross-reference problem of a validated manifest, in manifest order (toolsets
    first, then hook by hook)."""
    toolsets = tuple(
        _Toolset(
            index,
            toolset.name,
            toolset.type,
            not (
                isinstance(toolset, DeploymentToolsetConfig)
                and "name" not in toolset.model_fields_set
            ),
            tuple(enumerate(tool.name for tool in toolset.tools))
            if isinstance(toolset, RestApiToolsetConfig | DeploymentToolsetConfig)
            else (),
        )
        for index, toolset in enumerate(config.toolsets)
    )
    hooks = tuple(
        _Hook(index, hook.name, hook.toolset_name, hook.tool_name)
        for index, hook in enumerate(config.hooks or [])
    )
    return _errors(_Names(toolsets, hooks, toolsets_known=True))


def raw_reference_errors(data: Mapping[str, Any], *, hooks: bool) -> list[InitErrorDetails]:
    """The same checks over a decoded manifest that failed validation, reading only the names
    that are well formed. ``hooks`` is false when preview is off (hooks are then ignored)."""
    raw_toolsets = data.get("toolsets", [])
    toolsets = tuple(
        _raw_toolset(index, toolset)
        for index, toolset in enumerate(raw_toolsets if isinstance(raw_toolsets, list) else [])
    )
    raw_hooks = data.get("hooks") if hooks else None
    parsed_hooks = tuple(
        _Hook(index, _text(hook, "name"), _text(hook, "toolset_name"), _text(hook, "tool_name"))
        for index, hook in enumerate(raw_hooks if isinstance(raw_hooks, list) else [])
        if isinstance(hook, Mapping)
    )
    known = isinstance(raw_toolsets, list) and all(t.name is not None for t in toolsets)
    return _errors(_Names(toolsets, parsed_hooks, toolsets_known=known))


def _raw_toolset(index: int, toolset: object) -> _Toolset:
    if not isinstance(toolset, Mapping):
        return _Toolset(index, None, None, named=False, tools=())
    kind = toolset.get("type") if isinstance(toolset.get("type"), str) else None
    name = _text(toolset, "name")
    named = "name" in toolset
    if not named and kind == "deployment":
        name = _DEFAULT_DEPLOYMENT_NAME
    raw_tools = toolset.get("tools")
    tools: tuple[tuple[int, str], ...] = ()
    if kind in _DECLARED_TOOL_TYPES and isinstance(raw_tools, list):
        tools = tuple(
            (position, tool_name)
            for position, tool in enumerate(raw_tools)
            if isinstance(tool, Mapping) and (tool_name := _text(tool, "name")) is not None
        )
    return _Toolset(index, name, kind, named, tools)


def _text(mapping: object, key: str) -> str | None:
    """``mapping[key]`` when it is a string that validates (non-empty), else ``None``."""
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    return value if isinstance(value, str) and value else None


def _errors(names: _Names) -> list[InitErrorDetails]:
    toolset_types: dict[str, str | None] = {}
    for toolset in names.toolsets:
        if toolset.name is not None:
            toolset_types.setdefault(toolset.name, toolset.type)
    named = [(t.index, t.name) for t in names.toolsets if t.named]
    errors = _duplicates("toolsets", named)
    errors += _sanitized_collisions(named)
    errors += _duplicates("hooks", ((h.index, h.name) for h in names.hooks))
    errors += _declared_tool_length_errors(names.toolsets)
    for hook in names.hooks:
        if names.toolsets_known:
            errors += _toolset_errors(hook, toolset_types)
        errors += _length_errors(hook)
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


def _sanitized_collisions(named: Sequence[tuple[int, str | None]]) -> list[InitErrorDetails]:
    """Two toolsets whose names sanitise alike (``kb.a``, ``kb_a``) would give their tools the
    same final names, so one would silently answer for the other."""
    first: dict[str, tuple[int, str]] = {}
    errors: list[InitErrorDetails] = []
    for index, name in named:
        if name is None:
            continue
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


def _toolset_errors(hook: _Hook, toolset_types: Mapping[str, str | None]) -> list[InitErrorDetails]:
    """``toolset_name`` must name a declared toolset."""
    name = hook.toolset_name
    if name is None:
        return []
    if name not in toolset_types:
        message = (
            f"no toolset named {_q(name)}{did_you_mean(name, toolset_types)}"
            f" (declared toolsets: {quoted_list(toolset_types)})"
        )
        return [_error(("hooks", hook.index, "toolset_name"), message, name)]
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


def _length_errors(hook: _Hook) -> list[InitErrorDetails]:
    """A final name over the limit would be cut, so it could name a different tool or none."""
    if hook.tool_name is None:
        return []
    if hook.toolset_name is None:
        full_name = hook.tool_name
    else:
        full_name = uncut_toolname(f"{hook.toolset_name}_{hook.tool_name}")
    return _too_long(("hooks", hook.index, "tool_name"), full_name, hook.tool_name)


def _declared_tool_length_errors(toolsets: Iterable[_Toolset]) -> list[InitErrorDetails]:
    """Tools a manifest declares itself (``rest-api``, ``deployment``) must fit the limit too."""
    errors: list[InitErrorDetails] = []
    for toolset in toolsets:
        prefixed = toolset.type in _PREFIXED_TOOL_TYPES
        if prefixed and toolset.name is None:
            continue
        for position, tool_name in toolset.tools:
            full_name = tool_name
            if prefixed:
                full_name = uncut_toolname(f"{toolset.name}_{tool_name}")
            loc = ("toolsets", toolset.index, "tools", position, "name")
            errors += _too_long(loc, full_name, tool_name)
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
    return InitErrorDetails(
        type=PydanticCustomError(REFERENCE_ERROR_TYPE, message), loc=loc, input=value
    )


def _q(name: str) -> str:
    """A name as the author wrote it, quoted, cut so that no message echoes a huge value."""
    return repr(clip(name))
