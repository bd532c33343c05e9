"""Fixtures shared by the whole suite."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# CI runs every property test on the examples its name seeds (HYPOTHESIS_PROFILE=ci, set by
# .ci/run): a run that lands is one anyone can repeat. A developer's run draws new examples each
# time, which is where new counterexamples come from.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

PUBLISHED_SCHEMA = Path(__file__).resolve().parents[1] / "generated-app-schema.json"


@pytest.fixture
def preview_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "true")


@pytest.fixture
def preview_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "false")


@pytest.fixture(scope="session")
def published() -> dict[str, Any]:
    """The committed manifest schema, ``generated-app-schema.json``, as editors read it."""
    schema: dict[str, Any] = json.loads(PUBLISHED_SCHEMA.read_text())
    return schema
