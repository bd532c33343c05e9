from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from agent_hooks.config.toolsets import RestApiToolsetConfig
from agent_hooks.errors import ToolError
from agent_hooks.toolsets.rest import RestApiToolset, fill_path
from tests.servers.fixtures import RecordingServer


def _toolset(base_url: str, **overrides: Any) -> RestApiToolset:
    config = {
        "name": "user prefs",
        "base_url": base_url,
        "headers": {"X-Tenant": "acme", "Authorization": {"env": "PREFS_TOKEN"}},
        "tools": [
            {"name": "get preferences", "path": "/users/{user_id}/preferences"},
            {"name": "save_note", "method": "POST", "path": "/users/{user_id}/notes"},
            {"name": "fail", "method": "DELETE", "path": "/status/500"},
        ],
        **overrides,
    }
    return RestApiToolset(RestApiToolsetConfig.model_validate(config))


async def _call(toolset: RestApiToolset, name: str, **arguments: Any) -> str | None:
    tool = await toolset.find_tool(name)
    assert tool is not None
    return await tool.execute(arguments)


async def test_tools_have_prefixed_sanitised_names_and_need_no_io_to_list() -> None:
    toolset = _toolset("http://127.0.0.1:1")
    names = [tool.name for tool in await toolset.list_tools()]
    assert names == ["user_prefs_get_preferences", "user_prefs_save_note", "user_prefs_fail"]
    assert toolset.may_provide("user_prefs_save_note")
    assert not toolset.may_provide("memory_server_get_memories")
    await toolset.aclose()


async def test_get_fills_encoded_path_parameters_and_sends_the_rest_as_query(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer t0ken")
    async with _toolset(rest_server.url) as toolset:
        text = await _call(
            toolset,
            "user_prefs_get_preferences",
            user_id="ada lovelace/1",
            verbose=True,
            tags=["a", "b"],
        )
    assert text is not None
    assert json.loads(text)["user_id"] == "ada lovelace/1"
    [record] = rest_server.received()
    assert record["method"] == "GET"
    assert record["raw_path"] == "/users/ada%20lovelace%2F1/preferences"
    assert record["query"] == {"verbose": ["true"], "tags": ['["a", "b"]']}  # JSON text
    assert record["headers"]["authorization"] == "Bearer t0ken"
    assert record["headers"]["x-tenant"] == "acme"
    assert record["body"] is None


async def test_post_sends_the_remaining_arguments_as_a_json_body(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer t0ken")
    async with _toolset(rest_server.url) as toolset:
        text = await _call(toolset, "user_prefs_save_note", user_id="ada", text="hi", pinned=True)
    assert json.loads(text or "") == {"user_id": "ada", "saved": {"text": "hi", "pinned": True}}
    [record] = rest_server.received()
    assert record["query"] == {}
    assert record["body"] == {"text": "hi", "pinned": True}


async def test_a_non_2xx_status_is_a_tool_error_with_the_status(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer t0ken")
    async with _toolset(rest_server.url) as toolset:
        with pytest.raises(ToolError, match=r"DELETE .*/status/500 returned HTTP 500"):
            await _call(toolset, "user_prefs_fail")


async def test_a_missing_header_variable_fails_before_anything_is_sent(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PREFS_TOKEN", raising=False)
    async with _toolset(rest_server.url) as toolset:
        with pytest.raises(ToolError, match="'PREFS_TOKEN' is not set"):
            await _call(toolset, "user_prefs_get_preferences", user_id="ada")
    assert rest_server.received() == []


def test_a_missing_path_parameter_is_a_tool_error_naming_it() -> None:
    with pytest.raises(ToolError, match=r"missing path parameter 'user_id' for '/u/\{user_id\}'"):
        fill_path("/u/{user_id}", {"other": 1}, tool_name="t")


@pytest.mark.parametrize(
    ("value", "segment"),
    [("a b", "a%20b"), (42, "42"), (True, "true"), ("ü/?", "%C3%BC%2F%3F")],
)
def test_path_parameters_are_written_as_text_and_url_encoded(value: Any, segment: str) -> None:
    path, rest = fill_path("/items/{id}/x", {"id": value, "q": 1}, tool_name="t")
    assert path == f"/items/{segment}/x"
    assert rest == {"q": 1}


@pytest.mark.parametrize("value", ["", ".", ".."])
async def test_an_empty_or_dot_segment_path_parameter_is_a_tool_error_and_never_sent(
    value: str, rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer t0ken")
    async with _toolset(f"{rest_server.url}/users/ada") as toolset:
        with pytest.raises(ToolError) as raised:
            await _call(toolset, "user_prefs_get_preferences", user_id=value)
    assert raised.value.reason == "path parameter 'user_id' must not be empty, '.' or '..'"
    assert rest_server.received() == []


async def test_a_slash_in_a_path_parameter_arrives_inside_one_encoded_segment(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFS_TOKEN", "Bearer t0ken")
    async with _toolset(rest_server.url) as toolset:
        text = await _call(toolset, "user_prefs_get_preferences", user_id="../a/b")
    assert json.loads(text or "")["user_id"] == "../a/b"
    [record] = rest_server.received()
    assert record["raw_path"] == "/users/..%2Fa%2Fb/preferences"


def test_one_app_serves_requests_run_in_separate_event_loops(rest_server: RecordingServer) -> None:
    """A host may call ``asyncio.run`` per request with one long-lived toolset."""
    toolset = _toolset(rest_server.url, headers={})

    async def one_request() -> str | None:
        return await _call(toolset, "user_prefs_get_preferences", user_id="ada")

    first = asyncio.run(one_request())
    second = asyncio.run(one_request())
    assert first == second
    assert first is not None
    assert len(rest_server.received()) == 2
    asyncio.run(toolset.aclose())


def test_building_many_toolsets_installs_each_log_filter_once() -> None:
    """SPEC 16: the scrubbing filter goes on the HTTP loggers once, not once per toolset built."""
    names = ("httpx", "httpcore", "agent_hooks.toolsets._http")
    watched = [logging.getLogger(name) for name in names]
    _toolset("http://127.0.0.1:1")
    counts = [len(logger.filters) for logger in watched]
    for _ in range(100):
        _toolset("http://127.0.0.1:1")
    assert [len(logger.filters) for logger in watched] == counts
    assert max(counts) <= 1
