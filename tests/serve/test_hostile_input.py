"""Hostile input and upstream faults end to end (SPEC 12.1): each is a 4xx or 5xx in OpenAI's
shape, never a 500, and a client that gives up stops the upstream's work at once."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.serve._proxy import Proxy, running_proxy
from tests.servers.fixtures import RecordingServer

UPSTREAM_KEY = "upstream-secret-key-5678"
USER = {"role": "user", "content": "hi"}
CLOSE_BOUND_SECONDS = 2.0


def manifest(rest_url: str) -> dict[str, Any]:
    """A hook that records every completion it sees, so a completion that ran shows."""
    tools = [{"name": "save_note", "method": "POST", "path": "/users/{user_id}/notes"}]
    hook = {
        "kind": "tool_call",
        "event": "on_completion",
        "name": "remember",
        "toolset_name": "notes",
        "tool_name": "save_note",
        "arguments": {"user_id": "u1", "answer": "${last_assistant_message.content}"},
    }
    toolset = {"type": "rest-api", "name": "notes", "base_url": rest_url, "tools": tools}
    return {"toolsets": [toolset], "hooks": [hook]}


@pytest.fixture
def proxy(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> Iterator[Proxy]:
    options = ("--upstream", upstream.url, "--max-body-bytes", "4000000", "--upstream-timeout", "3")
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    with running_proxy(manifest(rest_server.url), tmp_path, *options, env=env) as running:
        yield running


def post(proxy: Proxy, content: bytes | Iterator[bytes], **headers: Any) -> httpx.Response:
    return httpx.post(
        f"{proxy.url}/v1/chat/completions", content=content, headers=headers, timeout=30
    )


def body(**fields: Any) -> bytes:
    return json.dumps({"model": "m", "messages": [USER], **fields}).encode()


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "code"}
    return response.status_code, error["type"], error["code"]


def test_a_body_over_the_limit_is_413_whether_declared_or_streamed(proxy: Proxy) -> None:
    big = body(padding="x" * 4_000_000)
    assert error_of(post(proxy, big)) == (413, "request_too_large", "request_too_large")
    chunked = iter([big[i : i + 65536] for i in range(0, len(big), 65536)])
    assert error_of(post(proxy, chunked))[0] == 413


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"{oops", "invalid_json"),
        (b'{"messages": ' + b"[" * 129 + b"]" * 129 + b"}", "too_deep"),
        (b"[" * 100_000 + b"]" * 100_000, "too_deep"),
        (body(temperature=float("nan")), "non_finite_number"),
        (body(temperature=float("inf")), "non_finite_number"),
        (body(temperature=1).replace(b": 1}", b": 1e999}"), "non_finite_number"),
        (body(seed=1).replace(b": 1}", b": " + b"9" * 5000 + b"}"), "number_too_large"),
        (json.dumps({"messages": [USER] * 100_001}).encode(), "too_many_messages"),
    ],
    ids=[
        "not-json",
        "depth-129",
        "depth-100k",
        "nan",
        "infinity",
        "1e999",
        "5000-digits",
        "100k+1",
    ],
)
def test_hostile_json_is_a_400(proxy: Proxy, content: bytes, code: str) -> None:
    assert error_of(post(proxy, content)) == (400, "invalid_request_error", code)


@pytest.mark.parametrize(
    "conversation",
    [b"", b"c" * 257, b"caf\xc3\xa9", b"tab\there"],
    ids=["empty", "257", "utf8", "tab"],
)
def test_a_bad_conversation_id_is_a_400(proxy: Proxy, conversation: bytes) -> None:
    response = post(proxy, body(), **{"X-Conversation-Id": conversation})
    assert error_of(response) == (400, "invalid_request_error", "invalid_conversation_id")


def test_a_256_character_conversation_id_is_accepted(proxy: Proxy) -> None:
    assert post(proxy, body(), **{"X-Conversation-Id": "c" * 256}).status_code == 200


def test_an_upstream_body_that_breaks_off_is_502_and_one_that_stalls_504(proxy: Proxy) -> None:
    client = proxy.client()
    with pytest.raises(openai.InternalServerError) as broken:
        client.chat.completions.create(model="broken", messages=[USER])  # type: ignore[list-item]
    with pytest.raises(openai.InternalServerError) as stalled:
        client.chat.completions.create(model="stalled", messages=[USER])  # type: ignore[list-item]
    assert (broken.value.status_code, broken.value.code) == (502, "upstream_broke_off")
    assert (stalled.value.status_code, stalled.value.code) == (504, "upstream_timeout")


def test_a_stream_that_breaks_off_ends_with_one_error_event(proxy: Proxy) -> None:
    request = {"model": "broken", "messages": [USER], "stream": True}
    with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", json=request) as response:
        events = [line for line in response.iter_lines() if line.startswith("data:")]
    errors = [json.loads(line[5:])["error"] for line in events if '"error"' in line]
    assert len(errors) == 1
    assert errors[0]["code"] == "upstream_broke_off"
    assert events[-1].startswith('data: {"error"')


def test_an_upstream_error_quoting_our_key_reaches_the_client_scrubbed(proxy: Proxy) -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        proxy.client().chat.completions.create(model="leaky", messages=[USER])  # type: ignore[list-item]
    assert UPSTREAM_KEY not in caught.value.message
    assert "Incorrect API key provided: Bearer ***" in caught.value.message
    assert caught.value.response.headers["x-seen-authorization"] == "Bearer ***"


def test_a_streamed_upstream_error_quoting_our_key_reaches_the_client_scrubbed(
    proxy: Proxy,
) -> None:
    response = post(proxy, body(model="leaky", stream=True))
    assert response.status_code == 401
    assert UPSTREAM_KEY not in response.text
    assert "Incorrect API key provided: Bearer ***" in response.text
    assert response.headers["x-seen-authorization"] == "Bearer ***"


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_that_gives_up_closes_the_upstream_request_within_two_seconds(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer, stream: bool
) -> None:
    before = closed_count(upstream)
    client = proxy.client().with_options(timeout=1.0)

    def ask_and_read() -> None:
        created = client.chat.completions.create(model="hold", messages=[USER], stream=stream)  # type: ignore[call-overload]
        if stream:
            list(created)

    with pytest.raises(openai.APITimeoutError):
        ask_and_read()
    gave_up = time.monotonic()
    while closed_count(upstream) == before:
        assert time.monotonic() - gave_up < CLOSE_BOUND_SECONDS, "the upstream request is open"
    assert rest_server.received() == []  # no completion hooks ran
    assert "client left before its answer was complete" in proxy.log()


def test_sigterm_closes_answers_still_in_flight_after_the_shutdown_timeout(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    options = ("--upstream", upstream.url, "--shutdown-timeout", "1")
    with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
        before = closed_count(upstream)
        client = proxy.client()
        stream = client.chat.completions.create(model="hold", messages=[USER], stream=True)  # type: ignore[list-item]
        chunks = iter(stream)
        assert next(chunks).choices[0].delta.content == "Hello"  # the answer is in flight
        proxy.process.send_signal(signal.SIGTERM)
        assert proxy.process.wait(timeout=20) == 0
        assert closed_count(upstream) == before + 1
    assert rest_server.received() == []


def closed_count(upstream: RecordingServer) -> int:
    count: int = httpx.get(f"{upstream.url}/_closed", timeout=5).json()
    return count


def test_connections_beyond_max_connections_are_503(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    options = ("--upstream", upstream.url, "--max-connections", "2")
    with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
        held = [proxy.client(), proxy.client()]
        streams = [
            iter(client.chat.completions.create(model="hold", messages=[USER], stream=True))  # type: ignore[list-item]
            for client in held
        ]
        for stream in streams:
            assert next(stream).choices[0].delta.content == "Hello"  # two answers in flight
        assert post(proxy, body()).status_code == 503
