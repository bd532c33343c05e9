from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import httpx
import pytest

from agent_hooks._scrub import register_secret
from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools._call_context import ToolCallContext, call_context
from agent_hooks.toolsets._http import ToolHttpClient, excerpt
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


def test_excerpt_scrubs_before_it_cuts() -> None:
    secret = "sk-excerpt-cut-0001"
    register_secret(secret)
    text = excerpt("x" * 195 + secret)
    assert secret[:5] not in text
    assert text == "x" * 195 + "***"


def test_the_last_word_of_a_cut_body_is_not_quoted_as_it_may_be_half_a_secret() -> None:
    assert excerpt("denied for sk-half-of-a-sec", complete=False) == "denied for"
    assert excerpt("sk-half-of-a-sec", complete=False) == "(one word too long to quote)"


async def test_a_body_over_the_byte_bound_is_cut_on_a_character_boundary(
    rest_server: RecordingServer,
) -> None:
    http = ToolHttpClient(owner="big", timeout_seconds=5, base_url=rest_server.url)
    try:
        with call_context(ToolCallContext(max_content_chars=10)):  # 40 bytes: 13 euro signs + 1
            body = await http.send(
                "GET", "/big", tool_name="t", headers={}, params={"fill": "€", "bytes": "3000"}
            )
    finally:
        await http.aclose()
    assert body.cut
    assert body.text == "€" * 13


async def test_a_body_at_the_byte_bound_is_whole(rest_server: RecordingServer) -> None:
    http = ToolHttpClient(owner="big", timeout_seconds=5, base_url=rest_server.url)
    try:
        with call_context(ToolCallContext(max_content_chars=10)):
            body = await http.send("GET", "/big", tool_name="t", headers={}, params={"bytes": "40"})
    finally:
        await http.aclose()
    assert (body.text, body.cut) == ("x" * 40, False)


async def test_redirects_are_not_followed_so_secret_headers_stay_home(
    rest_server: RecordingServer,
) -> None:
    http = ToolHttpClient(owner="loop", timeout_seconds=5, base_url=rest_server.url)
    try:
        with pytest.raises(ToolError) as caught:
            await http.send("GET", "/loop", tool_name="t", headers={"api-key": "k"})
    finally:
        await http.aclose()
    assert "returned HTTP 302 (a redirect to /loop, not followed)" in caught.value.reason
    assert len(rest_server.received()) == 1


async def test_credentials_in_the_base_url_are_used_but_never_shown(
    rest_server: RecordingServer,
) -> None:
    base_url = rest_server.url.replace("http://", "http://ada:sk-in-the-url-0002@")
    http = ToolHttpClient(owner="creds", timeout_seconds=5, base_url=base_url)
    try:
        with pytest.raises(ToolError) as caught:
            await http.send("GET", "/status/500", tool_name="t", headers={})
    finally:
        await http.aclose()
    assert f"GET {rest_server.url}/status/500 returned HTTP 500" in caught.value.reason
    assert "sk-in-the-url" not in caught.value.reason
    assert rest_server.received()[0]["headers"]["authorization"].startswith("Basic ")


class _TrackedClient(httpx.AsyncClient):
    """Remembers every client made, so a test can check each one was closed."""

    made: ClassVar[list[httpx.AsyncClient]] = []

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.made.append(self)


def test_threads_each_running_their_own_loop_share_one_client_object(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host with a thread pool: every thread's loop gets its own connections, and each loop
    closes its own as it shuts down."""
    monkeypatch.setattr(httpx, "AsyncClient", _TrackedClient)
    monkeypatch.setattr(_TrackedClient, "made", [])
    http = ToolHttpClient(owner="threads", timeout_seconds=10, base_url=rest_server.url)
    start = threading.Barrier(4, timeout=30)

    async def three_calls() -> list[str]:
        start.wait()  # all four loops run at once
        return [
            (await http.send("GET", "/preferences", tool_name="t", headers={})).text
            for _ in range(3)
        ]

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: asyncio.run(three_calls()), range(4)))
    assert all(len(texts) == 3 and texts[0] == texts[2] for texts in answers)
    assert len(_TrackedClient.made) == 4
    assert all(client.is_closed for client in _TrackedClient.made)
    assert len(rest_server.received()) == 12


def test_closing_reaches_the_client_of_a_loop_still_running_in_another_thread(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(httpx, "AsyncClient", _TrackedClient)
    monkeypatch.setattr(_TrackedClient, "made", [])
    http = ToolHttpClient(owner="threads", timeout_seconds=10, base_url=rest_server.url)
    called, release = threading.Event(), threading.Event()

    async def call_then_wait() -> None:
        await http.send("GET", "/preferences", tool_name="t", headers={})
        called.set()
        await asyncio.to_thread(release.wait, 30)

    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(asyncio.run, call_then_wait())
        assert called.wait(30)
        asyncio.run(http.aclose())
        [client] = _TrackedClient.made
        assert client.is_closed  # closed by its own loop, while that loop still runs
        release.set()
        running.result(timeout=30)
