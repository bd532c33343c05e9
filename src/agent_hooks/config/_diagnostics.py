"""Turning pydantic's validation errors into ``PATH: message`` lines a manifest author can act on.

Paths follow the author's JSON, not pydantic's internals: dotted keys, ``[i]`` indices, ``$`` for
the root, and no union tags (pydantic puts the discriminator value into ``loc``; it is dropped by
walking the location against the input data). Unknown keys get a did-you-mean from the keys the
model at that place accepts.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agent_hooks.config._suggest import did_you_mean, quoted_list
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


def issues_from_validation_error(
    exc: ValidationError, data: object, model: type[BaseModel]
) -> list[ConfigIssue]:
    """One :class:`ConfigIssue` per pydantic error, in pydantic's order, duplicates removed."""
    issues: list[ConfigIssue] = []
    for error in exc.errors(include_url=False):
        issue = _issue(error, data, model)
        if issue not in issues:
            issues.append(issue)
    return issues


def format_path(parts: Sequence[str | int]) -> str:
    """``("hooks", 2, "kind")`` → ``hooks[2].kind``; an empty path is ``$``."""
    rendered = ""
    for part in parts:
        if isinstance(part, int):
            rendered += f"[{part}]"
        else:
            rendered += f".{part}" if rendered else part
    return rendered or "$"


def _issue(error: ErrorDetails, data: object, model: type[BaseModel]) -> ConfigIssue:
    path = _json_path(error["loc"], data)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    if kind == "extra_forbidden":
        known = _known_keys(model, error["loc"][:-1])
        key = str(error["loc"][-1])
        return ConfigIssue(format_path(path), f"unknown key{did_you_mean(key, known)}")
    if kind == "missing":
        return ConfigIssue(format_path(path), "required field is missing")
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        discriminator = str(ctx.get("discriminator", "")).strip("'")
        choices = _tag_choices(model, error["loc"])
        if kind == "union_tag_not_found":
            message = f"required field is missing (one of: {quoted_list(choices)})"
        else:
            tag = ctx.get("tag")
            message = f"unknown {discriminator} {tag!r}{did_you_mean(str(tag), choices)}"
            message += f" (expected one of: {quoted_list(choices)})"
        return ConfigIssue(format_path([*path, discriminator]), message)
    if kind in ("enum", "literal_error"):
        choices = _tag_choices(model, error["loc"], field_level=True) or []
        message = f"must be one of {ctx.get('expected')}, got {value!r}"
        if choices and isinstance(value, str):
            message += did_you_mean(value, choices)
        return ConfigIssue(format_path(path), message)
    if kind in _JSON_TYPE_NAMES:
        return ConfigIssue(
            format_path(path), f"must be {_JSON_TYPE_NAMES[kind]}, got {_describe(value)}"
        )
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        words = {
            "greater_than": "greater than",
            "greater_than_equal": "at least",
            "less_than": "less than",
            "less_than_equal": "at most",
        }[kind]
        limit = next(iter(ctx.values()), "?")
        return ConfigIssue(format_path(path), f"must be {words} {limit}")
    if kind == "string_too_short":
        return ConfigIssue(format_path(path), "must not be empty")
    message = error["msg"]
    message = message.removeprefix("Value error, ")
    return ConfigIssue(format_path(path), message[:1].lower() + message[1:])


def _json_path(loc: tuple[str | int, ...], data: object) -> list[str | int]:
    """The author's JSON path for pydantic's ``loc``: parts absent from the data are union tags."""
    path: list[str | int] = []
    current: object = data
    for position, part in enumerate(loc):
        if isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        elif position == len(loc) - 1 or not isinstance(current, dict):
            current = None
        else:
            continue  # a discriminator value pydantic put into the location
        path.append(part)
    return path


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    return f"{type(value).__name__} {value!r}"


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


def _walk(model: type[BaseModel], loc: Sequence[str | int]) -> Any:
    """The type at ``loc`` inside ``model``, following union tags; ``None`` when lost."""
    tp: Any = model
    for part in loc:
        tp = _unwrap(tp)
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = next(
                (f for n, f in tp.model_fields.items() if (f.alias or n) == part or n == part),
                None,
            )
            if field is not None:
                tp = field.annotation
            elif str(part) not in _tags_of(tp):
                return None
        elif origin is list and isinstance(part, int):
            tp = get_args(tp)[0]
        elif origin is dict and isinstance(part, str):
            tp = get_args(tp)[1]
        elif origin in (Union, types.UnionType):
            tp = _member_for_tag(tp, str(part))
            if tp is None:
                return None
        else:
            return None
    return tp


def _member_for_tag(union: Any, tag: str) -> Any:
    for member in get_args(union):
        if isinstance(member, type) and issubclass(member, BaseModel) and tag in _tags_of(member):
            return member
    return None


def _tags_of(model: type[BaseModel]) -> list[str]:
    tags: list[str] = []
    for name in ("kind", "type", "transport"):
        field = model.model_fields.get(name)
        if field is not None and get_origin(field.annotation) is Literal:
            tags.extend(str(arg) for arg in get_args(field.annotation))
    return tags


def _known_keys(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    tp = _unwrap(_walk(model, loc))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [field.alias or name for name, field in tp.model_fields.items()]
    return []


def _tag_choices(
    model: type[BaseModel], loc: Sequence[str | int], *, field_level: bool = False
) -> list[str]:
    tp = _unwrap(_walk(model, loc))
    if field_level:
        origin = get_origin(tp)
        if origin is Literal:
            return [str(arg) for arg in get_args(tp)]
        if isinstance(tp, type) and issubclass(tp, str):
            return [str(member) for member in getattr(tp, "__members__", {}).values()]
        return []
    if get_origin(tp) in (Union, types.UnionType):
        return [tag for member in get_args(tp) for tag in _tags_of(_unwrap(member))]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _tags_of(tp)
    return []
