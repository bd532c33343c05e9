"""The manifest reference in ``docs/manifest.md``, rendered from the published JSON schema.

The reference is generated so it cannot drift from what editors see: every key, type, default,
description and example comes from ``generated-app-schema.json``, which itself is checked against
the models. Only the region between :data:`BEGIN` and :data:`END` is generated; the prose around
it is written by hand. ``make docs`` rewrites the region and a test fails when it is stale.

Rendering is pure; :func:`main` is the only place that touches files, and only ``make docs`` runs
it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = ["BEGIN", "END", "main", "render_reference", "with_reference"]

BEGIN = "<!-- BEGIN REFERENCE: generated from generated-app-schema.json by `make docs` -->"
END = "<!-- END REFERENCE -->"

_ROOT_TITLE = "ApplicationConfig"
_REF_PREFIX = "#/$defs/"


def render_reference(schema: dict[str, Any]) -> str:
    """One section per object and enum, the manifest root first, then in order of first use."""
    defs: dict[str, Any] = schema.get("$defs", {})
    sections = [_section(_ROOT_TITLE, schema)]
    sections += [_section(name, defs[name]) for name in _definitions_in_use_order(schema)]
    return "\n\n".join(sections) + "\n"


def with_reference(document: str, schema: dict[str, Any]) -> str:
    """``document`` with its generated region replaced by the current reference.

    Raises:
        ValueError: the document lacks the :data:`BEGIN` / :data:`END` markers.
    """
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the document needs the markers {BEGIN!r} and {END!r}")
    head, tail = document[: start + len(BEGIN)], document[end:]
    return f"{head}\n\n{render_reference(schema)}\n{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agent_hooks.config._reference_docs SCHEMA DOCUMENT [--check]``: rewrite or check.

    Returns 1 with ``--check`` when the document is stale, else 0.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    schema_path, document_path = (Path(arg) for arg in args if arg != "--check")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    current = document_path.read_text(encoding="utf-8")
    updated = with_reference(current, schema)
    if check:
        if updated != current:
            print(f"{document_path} is stale: run 'make docs'", file=sys.stderr)
            return 1
        return 0
    document_path.write_text(updated, encoding="utf-8")
    return 0


def _definitions_in_use_order(schema: dict[str, Any]) -> list[str]:
    """``$defs`` names breadth-first from the root, so a reader meets a type before its parts."""
    defs: dict[str, Any] = schema.get("$defs", {})
    order: list[str] = []
    queue = list(_refs(schema, skip_defs=True))
    while queue:
        name = queue.pop(0)
        if name in order or name not in defs:
            continue
        order.append(name)
        queue.extend(_refs(defs[name], skip_defs=True))
    return order + sorted(set(defs) - set(order))


def _refs(node: Any, *, skip_defs: bool = False) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            yield ref.removeprefix(_REF_PREFIX)
        for key, value in node.items():
            if not (skip_defs and key == "$defs"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _section(name: str, body: dict[str, Any]) -> str:
    lines = [f"### `{name}`", "", _cell(body.get("description", ""))]
    if "enum" in body:
        values = ", ".join(_code(value) for value in body["enum"])
        lines += ["", f"Values: {values}."]
        return "\n".join(lines)
    lines += ["", "| Key | Type | Required | Description |", "|---|---|---|---|"]
    required = set(body.get("required", []))
    for key, prop in body.get("properties", {}).items():
        lines.append(
            f"| `{key}`{' (preview)' if prop.get('x-preview') else ''}"
            f" | {_type(prop)} | {_required(key in required, prop)} | {_description(prop)} |"
        )
    return "\n".join(lines)


def _required(required: bool, prop: dict[str, Any]) -> str:
    if required:
        return "yes"
    if "default" in prop and prop["default"] is not None:
        return f"no (default {_code(prop['default'])})"
    return "no"


def _description(prop: dict[str, Any]) -> str:
    text = _cell(prop.get("description", ""))
    examples = prop.get("examples") or []
    if examples:
        text += f" Example: {_code(examples[0])}."
    return text


def _type(prop: dict[str, Any]) -> str:
    """A short reading of a property's schema: ``array of [EnvRef](#envref)``, ``number > 0``."""
    if "$ref" in prop:
        name = str(prop["$ref"]).removeprefix(_REF_PREFIX)
        return f"[`{name}`](#{name.lower()})"
    if "const" in prop:
        return _code(prop["const"])
    if "enum" in prop:
        return " or ".join(_code(value) for value in prop["enum"])
    for combinator in ("oneOf", "anyOf"):
        if combinator in prop:
            members = [m for m in prop[combinator] if m.get("type") != "null"]
            rendered = " or ".join(_type(m) for m in members)
            if "discriminator" in prop:
                rendered += f" (chosen by `{prop['discriminator']['propertyName']}`)"
            if len(members) < len(prop[combinator]):
                rendered += " or null"
            return rendered
    kind = prop.get("type")
    if kind == "array":
        return f"array of {_type(prop.get('items', {}))}"
    if kind == "object":
        values = prop.get("additionalProperties")
        return f"object of {_type(values)}" if isinstance(values, dict) else "object"
    if kind in ("string", "integer", "number", "boolean"):
        return f"{kind}{_constraints(prop)}"
    return "any JSON value"


def _constraints(prop: dict[str, Any]) -> str:
    if prop.get("minLength") == 1:
        return " (not empty)"
    if "exclusiveMinimum" in prop:
        return f" (> {prop['exclusiveMinimum']})"
    return ""


def _code(value: object) -> str:
    return f"`{_cell(json.dumps(value, ensure_ascii=False))}`"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


if __name__ == "__main__":
    raise SystemExit(main())
