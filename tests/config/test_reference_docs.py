"""docs/manifest.md cannot drift from the schema, and the schema documents every field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_hooks.config import ApplicationConfig
from agent_hooks.config._reference_docs import BEGIN, END, main, render_reference, with_reference

REPO = Path(__file__).resolve().parents[2]
MANUAL = REPO / "docs" / "manifest.md"


def fields(schema: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(model, key, property schema)`` for the root and every object in ``$defs``."""
    for model, body in [("ApplicationConfig", schema), *schema["$defs"].items()]:
        for key, prop in body.get("properties", {}).items():
            yield model, key, prop


def test_the_manifest_reference_in_the_docs_is_current(published: dict[str, Any]) -> None:
    text = MANUAL.read_text(encoding="utf-8")
    assert with_reference(text, published) == text, "run: make docs"


def test_every_field_and_every_type_has_a_description(published: dict[str, Any]) -> None:
    undocumented = [
        f"{model}.{key}" for model, key, prop in fields(published) if not prop.get("description")
    ]
    undocumented += [
        name for name, body in published["$defs"].items() if not body.get("description")
    ]
    assert not undocumented


def test_every_field_but_the_discriminators_has_an_example(published: dict[str, Any]) -> None:
    missing = [
        f"{model}.{key}"
        for model, key, prop in fields(published)
        if "const" not in prop and not prop.get("examples")
    ]
    assert not missing


def test_every_example_is_valid_for_its_field(published: dict[str, Any]) -> None:
    wrong = []
    for model, key, prop in fields(published):
        validator = Draft202012Validator({**prop, "$defs": published["$defs"]})
        wrong += [
            f"{model}.{key}: {example!r}"
            for example in prop.get("examples", [])
            if not validator.is_valid(example)
        ]
    assert not wrong


def test_the_reference_lists_every_field_of_every_type(published: dict[str, Any]) -> None:
    reference = render_reference(published)
    for name in published["$defs"]:
        assert f"### `{name}`" in reference
    for _, key, _ in fields(published):
        assert f"| `{key}`" in reference


def test_types_are_read_out_with_links_constraints_and_nullability() -> None:
    schema = {
        "type": "object",
        "description": "Root | with a pipe.",
        "properties": {
            "a": {"description": "d", "type": "array", "items": {"$ref": "#/$defs/Thing"}},
            "b": {
                "description": "d",
                "anyOf": [{"type": "integer", "exclusiveMinimum": 0}, {"type": "null"}],
            },
            "c": {
                "description": "d",
                "type": "object",
                "additionalProperties": {"type": "string", "minLength": 1},
            },
            "d": {"description": "d", "const": "x"},
        },
        "required": ["d"],
        "$defs": {"Thing": {"description": "A thing.", "enum": ["p", "q"]}},
    }
    assert render_reference(schema).splitlines() == [
        "### `ApplicationConfig`",
        "",
        "Root \\| with a pipe.",
        "",
        "| Key | Type | Required | Description |",
        "|---|---|---|---|",
        "| `a` | array of [`Thing`](#thing) | no | d |",
        "| `b` | integer (> 0) or null | no | d |",
        "| `c` | object of string (not empty) | no | d |",
        '| `d` | `"x"` | yes | d |',
        "",
        "### `Thing`",
        "",
        "A thing.",
        "",
        'Values: `"p"`, `"q"`.',
    ]


def test_only_the_region_between_the_markers_is_rewritten() -> None:
    schema = {"type": "object", "description": "Root.", "properties": {}}
    document = f"# Hand-written\n\n{BEGIN}\nold\n{END}\n\nMore prose.\n"
    assert with_reference(document, schema) == (
        f"# Hand-written\n\n{BEGIN}\n\n{render_reference(schema)}\n{END}\n\nMore prose.\n"
    )


def test_a_document_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        with_reference("# No markers\n", {"type": "object"})


def test_make_docs_rewrites_a_stale_document_and_check_mode_reports_it(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "description": "Root.", "properties": {}}))
    document = tmp_path / "manifest.md"
    document.write_text(f"{BEGIN}\nstale\n{END}\n")

    assert main([str(schema), str(document), "--check"]) == 1
    assert main([str(schema), str(document)]) == 0
    assert main([str(schema), str(document), "--check"]) == 0


def test_every_json_example_in_the_guide_is_a_valid_manifest() -> None:
    blocks = MANUAL.read_text(encoding="utf-8").split("```json\n")[1:]
    assert blocks
    for block in blocks:
        ApplicationConfig.from_text(block.split("```", 1)[0], preview=True)
