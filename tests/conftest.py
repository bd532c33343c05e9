"""Fixtures shared by the whole suite."""

from __future__ import annotations

import pytest


@pytest.fixture
def preview_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "true")


@pytest.fixture
def preview_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "false")
