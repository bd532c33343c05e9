from __future__ import annotations

import pytest

from agent_hooks._scrub import scrub
from agent_hooks.config.toolsets import EnvRef
from agent_hooks.errors import ToolError
from agent_hooks.toolsets._secrets import read_env_secret, resolve_secret, resolve_secrets


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


def test_surrounding_whitespace_of_a_variable_is_stripped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "  Bearer sk-strip-me-0001\n")
    headers = {"Authorization": EnvRef(env="PREFS_TOKEN")}
    assert resolve_secrets(headers, tool_name="t") == {"Authorization": "Bearer sk-strip-me-0001"}


@pytest.mark.parametrize(
    ("value", "problem"),
    [("sk-bell-\x07-0002", "a control character"), ("sk-ümlaut-0003", "a non-ASCII character")],
)
def test_a_header_variable_that_cannot_be_sent_is_a_tool_error_naming_only_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", value)
    with pytest.raises(ToolError) as caught:
        resolve_secrets({"Authorization": EnvRef(env="PREFS_TOKEN")}, tool_name="t")
    assert f"environment variable 'PREFS_TOKEN' holds {problem}" in str(caught.value)
    assert value not in str(caught.value)


def test_a_literal_header_that_cannot_be_sent_is_a_tool_error_naming_the_header() -> None:
    with pytest.raises(ToolError, match="the value of 'X-Api-Key' holds a control character"):
        resolve_secrets({"X-Api-Key": "sk-literal\r\nX-Injected: 1"}, tool_name="t")


def test_a_child_environment_may_hold_non_ascii_but_not_control_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GREETING", " grüße ")
    env = {"GREETING": EnvRef(env="GREETING"), "LITERAL": "naïve"}
    assert resolve_secrets(env, tool_name="t", for_child_env=True) == {
        "GREETING": "grüße",
        "LITERAL": "naïve",
    }
    monkeypatch.setenv("GREETING", "two\x1bparts")
    with pytest.raises(ToolError, match="'GREETING' holds a control character"):
        resolve_secrets(env, tool_name="t", for_child_env=True)


def test_every_resolved_value_is_scrubbed_from_then_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer sk-from-env-0004")
    resolve_secrets(
        {"Authorization": EnvRef(env="PREFS_TOKEN"), "X-Api-Key": "sk-literal-0005"},
        tool_name="t",
    )
    assert scrub("sk-from-env-0004 and sk-literal-0005") == "*** and ***"


def test_a_short_value_read_from_the_environment_is_scrubbed_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEST_SHORT_SECRET", " k9x2q\n")
    assert read_env_secret("TEST_SHORT_SECRET", tool_name="t") == "k9x2q"
    assert scrub("HTTP 500: bad key k9x2q") == "HTTP 500: bad key ***"
