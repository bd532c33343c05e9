"""The upstream client: credentials it sends, and how failures to answer are told apart."""

from __future__ import annotations

import json

import pytest

from agent_hooks.serve._errors import UpstreamTimeout, UpstreamUnreachable
from agent_hooks.serve._upstream import UpstreamClient
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
PATH = "/v1/chat/completions"
CLIENT_HEADERS = {"authorization": "Bearer client-key", "api-key": "client-api-key"}


async def sent_headers(upstream: RecordingServer, client: UpstreamClient) -> dict[str, str]:
    answer = await client.send(PATH, BODY, CLIENT_HEADERS)
    await answer.aread()
    await answer.aclose()
    await client.aclose()
    headers: dict[str, str] = upstream.received()[-1]["headers"]
    return headers


async def test_the_configured_key_is_sent_and_the_clients_are_not(
    upstream: RecordingServer,
) -> None:
    client = UpstreamClient(upstream.url, timeout_seconds=10, api_key="proxy-key")
    assert await sent_headers(upstream, client) == {"authorization": "Bearer proxy-key"}


async def test_forward_auth_sends_the_clients_own_credentials(upstream: RecordingServer) -> None:
    client = UpstreamClient(
        upstream.url, timeout_seconds=10, api_key="proxy-key", forward_auth=True
    )
    assert await sent_headers(upstream, client) == CLIENT_HEADERS


async def test_without_a_key_no_credentials_are_sent(upstream: RecordingServer) -> None:
    client = UpstreamClient(upstream.url, timeout_seconds=10)
    assert await sent_headers(upstream, client) == {}


async def test_a_closed_port_is_unreachable() -> None:
    client = UpstreamClient(f"http://127.0.0.1:{free_port()}", timeout_seconds=10)
    with pytest.raises(UpstreamUnreachable):
        await client.send(PATH, BODY, {})
    await client.aclose()


async def test_a_silent_upstream_times_out(upstream: RecordingServer) -> None:
    client = UpstreamClient(upstream.url, timeout_seconds=0.5)
    with pytest.raises(UpstreamTimeout):
        await client.send(PATH, json.dumps({"model": "slow", "messages": []}).encode(), {})
    await client.aclose()
