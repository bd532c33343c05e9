"""generated-app-schema.json: current, valid JSON Schema, and accepting every example manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from agent_hooks.config import ApplicationConfig

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_MANIFESTS = sorted((REPO / "examples").rglob("manifest.json"))


@pytest.mark.usefixtures("preview_on")
def test_published_schema_is_current(published: dict[str, Any]) -> None:
    assert published == ApplicationConfig.model_json_schema(), "run: make dump_app_schema"


def test_published_schema_is_a_valid_json_schema(published: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(published)


def test_there_are_example_manifests() -> None:
    assert EXAMPLE_MANIFESTS


@pytest.mark.parametrize("manifest", EXAMPLE_MANIFESTS, ids=lambda p: p.parent.name)
def test_every_example_manifest_validates_against_the_schema(
    published: dict[str, Any], manifest: Path
) -> None:
    errors = list(Draft202012Validator(published).iter_errors(json.loads(manifest.read_text())))
    assert not errors, [error.message for error in errors]


@pytest.mark.parametrize(
    ("manifest", "path"),
    [
        ({"hooks": [{"event": "on_request_start", "tool_name": "x"}]}, ["hooks", 0]),
        ({"toolsets": [{"name": "x", "tools": []}]}, ["toolsets", 0]),
        ({"toolsets": [{"type": "mcp", "name": "m", "server": {"command": "x"}}]}, None),
        ({"hooks": [{"kind": "tool_call", "event": "on_request_start"}]}, ["hooks", 0]),
        ({"surprise": 1}, []),
    ],
)
def test_schema_and_validator_agree_on_rejections(
    published: dict[str, Any], manifest: dict[str, Any], path: list[Any] | None
) -> None:
    errors = list(Draft202012Validator(published).iter_errors(manifest))
    assert errors
    if path is not None:
        # jsonschema reports a failed anyOf/oneOf at the enclosing node, so compare prefixes.
        assert any(
            path[: len(error.absolute_path)] == list(error.absolute_path) for error in errors
        )
    with pytest.raises(ValidationError):
        ApplicationConfig.model_validate(manifest, context={"preview": True})
