"""Streamed answers that end without completing, in every dialect (SPEC 12 and 12.1): nothing is
stored, no response id is linked, no ``on_completion`` hook runs, and a stream that ends before its
answer's last event ends the client's stream with one error event in the dialect's shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.serve._dialects import dialect_manifest, hits, notes
from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.servers.fixtures import RecordingServer

USER = {"role": "user", "content": "What are my preferences?"}
ROUTES = {
    "chat": ("/v1/chat/completions", {"messages": [USER]}),
    "responses": ("/v1/responses", {"input": [USER]}),
    "anthropic": ("/v1/messages", {"messages": [USER], "max_tokens": 16}),
}
HEADERS = {"authorization": f"Bearer {CLIENT_KEY}", "x-api-key": CLIENT_KEY}


@pytest.fixture
def proxy(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> Iterator[Proxy]:
    options = ("--upstream", upstream.url)
    with running_proxy(dialect_manifest(rest_server.url), tmp_path, *options) as running:
        yield running


def stream(proxy: Proxy, dialect: str, model: str, **headers: str) -> list[dict[str, Any]]:
    """The JSON of every ``data:`` event of a streamed answer."""
    path, fields = ROUTES[dialect]
    request = {"model": model, **fields, "stream": True}
    with httpx.stream(
        "POST", proxy.url + path, json=request, headers={**HEADERS, **headers}, timeout=20
    ) as response:
        assert response.status_code == 200
        lines = [line[5:] for line in response.iter_lines() if line.startswith("data:")]
    return [json.loads(line) for line in lines if line.strip() != "[DONE]"]


def is_error(event: dict[str, Any], dialect: str) -> bool:
    if dialect == "anthropic":
        return event.get("type") == "error" and "message" in event["error"]
    if dialect == "responses" and event.get("type") == "response.failed":
        return True
    return set(event) == {"error"}


@pytest.mark.parametrize("fault", ["cut-short", "fails"])
@pytest.mark.parametrize("dialect", list(ROUTES))
def test_an_answer_that_did_not_complete_is_neither_stored_nor_completed(
    proxy: Proxy, rest_server: RecordingServer, dialect: str, fault: str
) -> None:
    """The first turn's TTL'd pair is not stored (the second turn calls its tool again) and its
    completion hook does not run (only the second turn's does). A Responses follow-up names the
    failed response, whose id must not lead to a conversation."""
    conversation = {} if dialect == "responses" else {"x-conversation-id": f"{dialect}-{fault}"}
    events = stream(proxy, dialect, fault, **conversation)
    errors = [event for event in events if is_error(event, dialect)]
    assert len(errors) == 1
    assert events[-1] == errors[0]
    if fault == "cut-short" and dialect != "anthropic":
        assert errors[0]["error"]["code"] == "upstream_broke_off"

    path, fields = ROUTES[dialect]
    if dialect == "responses":
        (first_id,) = {e["response"]["id"] for e in events if isinstance(e.get("response"), dict)}
        fields = {**fields, "previous_response_id": first_id}
    follow_up = {"model": "m", **fields}
    headers = {**HEADERS, **conversation}
    assert httpx.post(proxy.url + path, json=follow_up, headers=headers).status_code == 200
    assert hits(rest_server, "/preferences") == 2
    assert len(notes(rest_server)) == 1


@pytest.mark.parametrize("dialect", ["responses", "anthropic"])
def test_the_error_event_the_proxy_ends_a_broken_stream_with_is_named_error(
    proxy: Proxy, dialect: str
) -> None:
    """Responses and Anthropic name their events; the proxy's own error event is named
    ``error`` like theirs (chat's events have no names, so its is unnamed)."""
    path, fields = ROUTES[dialect]
    request = {"model": "cut-short", **fields, "stream": True}
    with httpx.stream("POST", proxy.url + path, json=request, headers=HEADERS) as response:
        lines = list(response.iter_lines())
    last_data = max(i for i, line in enumerate(lines) if line.startswith("data:"))
    assert lines[last_data - 1] == "event: error", lines[-4:]
    assert "ended before its answer was complete" in lines[last_data]


def test_the_anthropic_client_raises_for_a_stream_the_proxy_ended_with_an_error(
    proxy: Proxy,
) -> None:
    """The official client raises only for an event named ``error``: before, it took the
    proxy's unnamed error event for the end of an empty answer (``stop_reason=None``)."""
    client = anthropic.Anthropic(base_url=proxy.url, api_key=CLIENT_KEY, max_retries=0)
    with (
        pytest.raises(anthropic.APIStatusError, match="ended before its answer was complete"),
        client.messages.stream(
            model="cut-short",
            max_tokens=16,
            messages=[USER],  # type: ignore[list-item]
        ) as events,
    ):
        events.get_final_message()


def test_the_openai_client_raises_for_a_responses_stream_the_proxy_ended_with_an_error(
    proxy: Proxy,
) -> None:
    client = openai.OpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0)
    with pytest.raises(openai.APIError, match="ended before its answer was complete"):
        for _ in client.responses.create(model="cut-short", input="hi", stream=True):
            pass
