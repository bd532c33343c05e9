from __future__ import annotations

import pytest

from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools.toolsets._http import ToolHttpClient, excerpt
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port


async def test_one_client_is_reused_so_calls_share_a_connection(
    rest_server: RecordingServer,
) -> None:
    http = ToolHttpClient(owner="prefs", timeout_seconds=5, base_url=rest_server.url)
    try:
        for _ in range(3):
            await http.send("GET", "/preferences", tool_name="t", headers={})
    finally:
        await http.aclose()
    ports = {record["client_port"] for record in rest_server.received()}
    assert len(ports) == 1


async def test_a_non_2xx_status_is_a_tool_error_naming_status_and_body(
    rest_server: RecordingServer,
) -> None:
    http = ToolHttpClient(owner="prefs", timeout_seconds=5, base_url=rest_server.url)
    try:
        with pytest.raises(ToolError) as caught:
            await http.send(
                "GET", "/status/503", tool_name="t", headers={}, params={"token": "q-secret"}
            )
    finally:
        await http.aclose()
    message = str(caught.value)
    assert "HTTP 503" in message
    assert "the server says 503 with details" in message
    assert "q-secret" not in message  # the query string is left out of messages


async def test_a_transport_failure_is_a_tool_error() -> None:
    http = ToolHttpClient(
        owner="down", timeout_seconds=5, base_url=f"http://127.0.0.1:{free_port()}"
    )
    try:
        with pytest.raises(ToolError, match="ConnectError"):
            await http.send("GET", "/anything", tool_name="t", headers={})
    finally:
        await http.aclose()


async def test_a_slow_server_hits_the_transport_timeout(rest_server: RecordingServer) -> None:
    http = ToolHttpClient(owner="slow", timeout_seconds=0.2, base_url=rest_server.url)
    try:
        with pytest.raises(ToolTimeoutError, match=r"timed out after 0\.2 seconds"):
            await http.send("GET", "/slow", tool_name="t", headers={}, params={"seconds": "1"})
    finally:
        await http.aclose()


async def test_header_values_are_never_quoted_in_errors(rest_server: RecordingServer) -> None:
    http = ToolHttpClient(owner="prefs", timeout_seconds=5, base_url=rest_server.url)
    try:
        with pytest.raises(ToolError) as caught:
            await http.send("GET", "/status/401", tool_name="t", headers={"api-key": "k-secret"})
    finally:
        await http.aclose()
    assert "k-secret" not in str(caught.value)


async def test_closing_is_idempotent_and_later_use_is_a_usage_error() -> None:
    http = ToolHttpClient(owner="prefs", timeout_seconds=5, base_url="http://127.0.0.1:1")
    await http.aclose()
    await http.aclose()
    with pytest.raises(UsageError, match="'prefs' is closed"):
        await http.send("GET", "/", tool_name="t", headers={})


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", "(empty body)"),
        ("  line one\n\n  line   two ", "line one line two"),
        ("x" * 300, "x" * 200 + "..."),
    ],
)
def test_excerpt_is_one_short_line(body: str, expected: str) -> None:
    assert excerpt(body) == expected
