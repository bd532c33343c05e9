from __future__ import annotations

import pytest

from agent_hooks.config.toolsets import EnvRef
from agent_hooks.errors import ToolError
from agent_hooks.tools.toolsets._secrets import read_env_secret, resolve_secret, resolve_secrets


def test_literal_values_are_used_as_written() -> None:
    assert resolve_secret("Bearer literal", tool_name="t") == "Bearer literal"


def test_env_references_are_read_at_resolution_time(monkeypatch: pytest.MonkeyPatch) -> None:
    headers = {"Authorization": EnvRef(env="PREFS_TOKEN"), "X-Tenant": "acme"}
    monkeypatch.setenv("PREFS_TOKEN", "first")
    assert resolve_secrets(headers, tool_name="t") == {"Authorization": "first", "X-Tenant": "acme"}
    monkeypatch.setenv("PREFS_TOKEN", "rotated")
    assert resolve_secrets(headers, tool_name="t")["Authorization"] == "rotated"


def test_a_missing_variable_is_a_tool_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(ToolError) as caught:
        resolve_secret(EnvRef(env="NOT_SET_ANYWHERE"), tool_name="prefs_get")
    assert caught.value.tool_name == "prefs_get"
    assert "'NOT_SET_ANYWHERE' is not set" in str(caught.value)


def test_reading_a_set_variable_returns_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_KEY", "s3cret")
    assert read_env_secret("SOME_KEY", tool_name="t") == "s3cret"
