"""Turning bad manifest text and pydantic's validation errors into ``PATH: message`` lines.

Paths follow the author's JSON, not pydantic's internals: dotted keys, ``[i]`` indices, ``$`` for
the root, and no union tags. pydantic puts a discriminator value (``'tool_call'``) or a member label
(``'str'``, ``'EnvRef'``) into ``loc`` whenever it crosses a union; walking ``loc`` against the
models drops them. For an untagged union (``"value"`` or ``{"env": "NAME"}``) pydantic reports every
member's failure; the author only needs the member their value was shaped like, or one line naming
the accepted shapes. Unknown keys and unknown choices get a did-you-mean from what the model at that
place accepts. Every line stays one printable line: odd keys are quoted, values shown with ``repr``.
"""

from __future__ import annotations

import functools
import re
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agent_hooks.config.diagnostics._suggest import MAX_ECHO_CHARS, clip, did_you_mean, quoted_list
from agent_hooks.errors import ConfigIssue

__all__ = ["format_path", "issues_from_validation_error"]

_JSON_TYPE_NAMES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
}

_BOUNDS = {
    "greater_than": "greater than",
    "greater_than_equal": "at least",
    "less_than": "less than",
    "less_than_equal": "at most",
}

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")

_DISCRIMINATORS = ("kind", "type", "transport")


def issues_from_validation_error(
    exc: ValidationError, data: object, model: type[BaseModel]
) -> list[ConfigIssue]:
    """One :class:`ConfigIssue` per problem, in pydantic's order, duplicates removed."""
    located = [
        (error, _locate(error["loc"], data, model)) for error in exc.errors(include_url=False)
    ]
    by_union: dict[_Union, list[tuple[ErrorDetails, _Where]]] = {}
    for error, where in located:
        if where.union is not None:
            by_union.setdefault(where.union, []).append((error, where))
    issues: list[ConfigIssue] = []
    seen: set[ConfigIssue] = set()
    for error, where in located:
        if where.union is None:
            found = [_issue(error, where)]
        elif where.union in by_union:  # the first error of a union speaks for all its members
            found = _union_issues(where.union, by_union.pop(where.union))
        else:
            continue
        for issue in found:
            if issue not in seen:
                seen.add(issue)
                issues.append(issue)
    return issues


def format_path(parts: Sequence[str | int]) -> str:
    """``("hooks", 2, "kind")`` → ``hooks[2].kind``; an empty path is ``$``.

    Keys that are not plain identifiers are bracketed and quoted (``env['MY VAR']``), so a key with
    a dot, a space or a newline can neither be misread nor break the one-line-per-error output.
    Keys over 80 characters are cut (and so quoted, to show they are not the key verbatim).
    """
    rendered = ""
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        elif len(part) > MAX_ECHO_CHARS or not _PLAIN_KEY.fullmatch(part):
            rendered += f"[{clip(part)!r}]"
        else:
            rendered += f".{part}" if rendered else part
    return rendered or "$"


@dataclass(frozen=True)
class _Union:
    """An untagged union that pydantic tried member by member: where it is, what it was given."""

    path: tuple[str | int, ...]
    value: object = field(compare=False, hash=False)


@dataclass(frozen=True)
class _Where:
    """Where an error sits, in the author's terms and in the models' terms."""

    path: tuple[str | int, ...]
    value: object
    type_: Any
    parent_type: Any
    union: _Union | None
    union_member: str
    """pydantic's label of the union member this error belongs to (``'str'``, ``'EnvRef'``)."""


def _locate(loc: Sequence[str | int], data: object, model: type[BaseModel]) -> _Where:
    """Walk pydantic's ``loc`` through the models and the data at once, dropping union parts."""
    path: list[str | int] = []
    value: object = data
    tp: Any = model
    parent: Any = None
    union: _Union | None = None
    union_member = ""
    for part in loc:
        tp = _unwrap(tp)
        if _is_union(tp) and not _is_discriminated(tp):
            if union is None:
                union, union_member = _Union(tuple(path), value), str(part)
            tp = _member_for(tp, str(part))
            continue
        if _is_union(tp):
            member = _member_for(tp, str(part))
            if member is not None:
                tp = member
                continue
            tp = _unwrap(_member_for_value(tp, value))  # our own locations carry no union tags
        child = _child_type(tp, part)
        if child is None and str(part) in _tags_of(tp):
            continue  # a one-member tagged union keeps its tag in ``loc`` too
        if child is None and isinstance(part, int) and isinstance(value, list):
            child = tp  # ``model`` describes the items of a top-level array (a messages file)
        parent, tp = tp, child
        path.append(part)
        value = _child_value(value, part)
    return _Where(tuple(path), value, tp, parent, union, union_member)


def _issue(error: ErrorDetails, where: _Where) -> ConfigIssue:
    path = format_path(where.path)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        known = _field_names(where.parent_type)
        suggestion = did_you_mean(str(where.path[-1]), known)
        detail = suggestion or f" (allowed keys: {quoted_list(known)})"
        return ConfigIssue(path, f"unknown key{detail}")
    if kind == "missing":
        return ConfigIssue(path, "required field is missing")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        discriminator = str(ctx.get("discriminator", "")).strip("'")
        union = _unwrap(where.type_)
        members = get_args(union) if _is_union(union) else (union,)
        choices = [tag for member in members for tag in _tags_of(_unwrap(member))]
        path = format_path([*where.path, discriminator])
        if kind == "union_tag_not_found":
            return ConfigIssue(path, f"required field is missing (expected {_one_of(choices)})")
        tag = where.value.get(discriminator) if isinstance(where.value, dict) else ctx.get("tag")
        return ConfigIssue(path, _choice_message(tag, choices))
    if kind in ("enum", "literal_error"):
        choices = _choices(where.type_)
        if not choices:  # a type the walk could not follow: pydantic's own list of choices
            return ConfigIssue(path, f"must be {ctx.get('expected')}, got {_describe(where.value)}")
        return ConfigIssue(path, _choice_message(error.get("input"), choices))
    if kind in _JSON_TYPE_NAMES:
        return ConfigIssue(path, f"must be {_JSON_TYPE_NAMES[kind]}, got {_describe(where.value)}")
    if kind in _BOUNDS:
        limit = next(iter(ctx.values()), "?")
        return ConfigIssue(path, f"must be {_BOUNDS[kind]} {_number(limit)}")
    if kind == "string_too_short":
        return ConfigIssue(path, "must not be empty")
    if kind == "string_unicode":
        text = _describe(error.get("input"))
        return ConfigIssue(
            path, f"{text} contains a lone surrogate escape, which is not Unicode text"
        )
    message = error["msg"].removeprefix("Value error, ")
    return ConfigIssue(path, message[:1].lower() + message[1:])


def _union_issues(union: _Union, members: list[tuple[ErrorDetails, _Where]]) -> list[ConfigIssue]:
    """The errors of the member the value was shaped like, or one line naming every shape.

    A member whose only error is a type mismatch at the union itself did not match the value's
    shape; any other member did, and its errors are the ones the author can act on.
    """
    shapes: dict[str, str] = {}
    matched: list[str] = []
    for error, where in members:
        if where.path == union.path and error["type"] in _JSON_TYPE_NAMES:
            shapes.setdefault(where.union_member, _JSON_TYPE_NAMES[error["type"]])
        else:
            matched.append(where.union_member)
    shaped = next((member for member in matched if member not in shapes), None)
    if shaped is not None:
        return [_issue(e, w) for e, w in members if w.union_member == shaped]
    accepted = " or ".join(dict.fromkeys(shapes.values()))
    return [
        ConfigIssue(format_path(union.path), f"must be {accepted}, got {_describe(union.value)}")
    ]


def _choice_message(value: object, choices: Sequence[str]) -> str:
    suggestion = did_you_mean(value, choices) if isinstance(value, str) and len(choices) > 1 else ""
    return f"must be {_one_of(choices)}, got {_describe(value)}{suggestion}"


def _one_of(choices: Sequence[str]) -> str:
    """``'a'``, or ``one of 'a', 'b' or 'c'``."""
    if len(choices) == 1:
        return repr(choices[0])
    return f"one of {quoted_list(choices[:-1])} or {choices[-1]!r}"


def _describe(value: object) -> str:
    """A JSON value as the author wrote it, short enough for one line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return repr(clip(value, 40))
    if isinstance(value, int) and abs(value) >= 10**40:
        return "a number with more than 40 digits"
    return repr(value)


def _number(limit: object) -> str:
    """``0.0`` is shown as ``0``: the author wrote a JSON number, not a Python float."""
    if isinstance(limit, float) and limit.is_integer():
        return str(int(limit))
    return str(limit)


def _unwrap(tp: Any) -> Any:
    """Strip ``Annotated`` and ``None`` from a type until something structural remains."""
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            members = [arg for arg in get_args(tp) if arg is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _is_discriminated(union: Any) -> bool:
    return all(_tags_of(_unwrap(member)) for member in get_args(union))


def _member_for(union: Any, part: str) -> Any:
    """The member pydantic named in ``loc``: by its tag (tagged) or its label (untagged)."""
    for member in get_args(union):
        bare = _unwrap(member)
        if part in _tags_of(bare) or part == getattr(bare, "__name__", None):
            return member
    return None


def _member_for_value(union: Any, value: object) -> Any:
    """The member of a tagged union that ``value``'s discriminator selects, if any."""
    if not isinstance(value, dict):
        return None
    for member in get_args(union):
        tags = _tags_of(_unwrap(member))
        if any(value.get(name) in tags for name in _DISCRIMINATORS):
            return member
    return None


def _child_type(tp: Any, part: str | int) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        for name, field in tp.model_fields.items():
            if part in (name, field.alias):
                return field.annotation
        return None
    origin = get_origin(tp)
    if origin is list and isinstance(part, int):
        return get_args(tp)[0]
    if origin is dict and isinstance(part, str):
        return get_args(tp)[1]
    return None


def _child_value(value: object, part: str | int) -> object:
    if isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
        return value[part]
    if isinstance(value, dict) and isinstance(part, str):
        return value.get(part)
    return None


def _tags_of(tp: Any) -> tuple[str, ...]:
    if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return ()
    return _model_tags(tp)


@functools.cache
def _model_tags(model: type[BaseModel]) -> tuple[str, ...]:
    """The values of ``model``'s discriminator field (cached: every error asks, per union)."""
    tags: list[str] = []
    for name in _DISCRIMINATORS:
        field = model.model_fields.get(name)
        if field is not None and get_origin(field.annotation) is Literal:
            tags.extend(str(arg) for arg in get_args(field.annotation))
    return tuple(tags)


def _field_names(tp: Any) -> list[str]:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [field.alias or name for name, field in tp.model_fields.items()]
    return []


def _choices(tp: Any) -> list[str]:
    tp = _unwrap(tp)
    if get_origin(tp) is Literal:
        return [str(arg) for arg in get_args(tp)]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return [str(member.value) for member in tp]
    return []
