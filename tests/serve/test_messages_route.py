"""``POST /v1/messages`` end to end: the real ``anthropic`` client, the proxy as a child
process, a recording upstream and the REST test API."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from agent_hooks.serve._dialects import tool_result_text
from tests.serve._dialects import (
    DESCRIPTION,
    PREFS,
    SCHEMA,
    UNITS,
    dialect_manifest,
    hits,
    is_synthetic,
    notes,
)
from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.serve.upstream_server import ANSWER
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port

UPSTREAM_KEY = "upstream-secret-key-5678"
USER = {"role": "user", "content": "What are my preferences?"}
CLIENT_TOOL = {"name": "lookup", "input_schema": {"type": "object"}}


@pytest.fixture
def proxy(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> Iterator[Proxy]:
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    # The chat routes' upstream is closed: the Anthropic route must use its own.
    options = (
        "--upstream",
        f"http://127.0.0.1:{free_port()}",
        "--anthropic-upstream",
        upstream.url,
    )
    with running_proxy(dialect_manifest(rest_server.url), tmp_path, *options, env=env) as running:
        yield running


_clients: list[anthropic.Anthropic] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def client(proxy: Proxy, **options: Any) -> anthropic.Anthropic:
    """An Anthropic client for the proxy, closed after the test; one call, one request."""
    made = anthropic.Anthropic(
        base_url=proxy.url, api_key=CLIENT_KEY, max_retries=0, timeout=20, **options
    )
    _clients.append(made)
    return made


def pairs(messages: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The synthetic pairs by tool name, each checked to be a ``tool_use`` message answered by
    a ``tool_result`` at the start of the next message."""
    found = {}
    for at, message in enumerate(messages):
        content = message["content"]
        if message["role"] != "assistant" or isinstance(content, str):
            continue
        for block in content:
            if block["type"] == "tool_use" and is_synthetic(block["id"]):
                result = messages[at + 1]["content"][0]
                assert messages[at + 1]["role"] == "user"
                assert result == {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "content": result["content"],
                }
                found[block["name"]] = (block, result)
    return found


def test_the_upstream_gets_the_pairs_and_their_tools_and_all_else_unchanged(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    reply = client(proxy).messages.create(
        model="claude-test",
        max_tokens=64,
        system="You are terse.",
        messages=[USER],  # type: ignore[list-item]
        metadata={"user_id": "u1"},
        stop_sequences=["END"],
        extra_body={"vendor_option": {"keep": [1, 2]}},
        extra_headers={"anthropic-version": "2023-06-01"},
    )
    assert reply.content[0].type == "text"
    assert reply.content[0].text == ANSWER
    (received,) = upstream.received()
    assert received["path"] == "/v1/messages"
    body = received["body"]
    assert body["messages"][0] == USER
    found = pairs(body["messages"])
    assert list(found) == [PREFS, UNITS]
    assert len(body["messages"]) == 5
    assert json.loads(found[PREFS][1]["content"])["language"] == "en-GB"
    rest = {key: value for key, value in body.items() if key not in ("messages", "tools")}
    assert rest == {
        "model": "claude-test",
        "max_tokens": 64,
        "system": "You are terse.",
        "metadata": {"user_id": "u1"},
        "stop_sequences": ["END"],
        "vendor_option": {"keep": [1, 2]},
        "tool_choice": {"type": "none"},
    }
    units_schema = body["tools"][1]["input_schema"]
    assert body["tools"] == [
        {"name": PREFS, "description": DESCRIPTION, "input_schema": SCHEMA},
        {"name": UNITS, "input_schema": units_schema},
    ]
    assert units_schema["type"] == "object"
    headers = received["headers"]
    assert headers["x-api-key"] == UPSTREAM_KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers


def test_a_mid_conversation_system_message_is_forwarded_in_place_with_the_pairs(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    """Claude Code's default model sends a ``{"role": "system"}`` message inside ``messages``
    (the ``mid-conversation-system`` beta); the route used to answer 400 before any hook ran.
    SPEC 15: it passes through in place, untouched; the pairs go after the first user message."""
    system = {"role": "system", "content": [{"type": "text", "text": "Reminder", "x": 1}]}
    reply = {"role": "assistant", "content": "Noted."}
    later = {"role": "user", "content": "Go on."}
    sent = [system, USER, reply, system, later]
    response = httpx.post(
        f"{proxy.url}/v1/messages",
        json={"model": "claude-test", "max_tokens": 64, "messages": sent},
        headers={"x-api-key": CLIENT_KEY, "anthropic-beta": "mid-conversation-system"},
        timeout=20,
    )
    assert response.status_code == 200, response.text
    (received,) = upstream.received()
    forwarded = received["body"]["messages"]
    assert list(pairs(forwarded)) == [PREFS, UNITS]
    assert forwarded[:2] == [system, USER]
    assert [json.dumps(m) for m in forwarded[6:]] == [json.dumps(m) for m in sent[2:]]
    assert received["headers"]["anthropic-beta"] == "mid-conversation-system"


TEXT_RESULT = re.compile(
    r'<tool_result tool="(?P<tool>[a-z_]+)" id="(?P<id>[a-z0-9_]+)">\n'
    r"(?P<content>.*)\n</tool_result>",
    re.DOTALL,
)


def text_results(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The (tool, id, content) of each text-form pair in a message, each checked exact."""
    found = []
    for block in message["content"]:
        match = TEXT_RESULT.fullmatch(block.get("text", "")) if block["type"] == "text" else None
        if match is not None:
            tool, call_id, content = match["tool"], match["id"], match["content"]
            assert is_synthetic(call_id)
            assert block == {"type": "text", "text": tool_result_text(tool, call_id, content)}
            found.append((tool, call_id, content))
    return found


def test_with_thinking_no_synthetic_tool_use_reaches_the_current_tool_cycle(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """SPEC 15: with thinking on (adaptive counts), a hook firing on turn 1 and in a tool loop
    puts no ``tool_use`` in the current tool cycle (the upstream would answer 400: the cycle's
    last assistant message must start with its signed thinking block). Each pair is a text
    block appended to the user message it follows, and declares no tool."""
    manifest = dialect_manifest(rest_server.url)
    manifest["hooks"][1]["frequency"] = "always"  # units fires on every request
    options = ("--anthropic-upstream", upstream.url)
    headers = {"x-api-key": CLIENT_KEY, "x-conversation-id": "thinking-1"}

    def send(messages: list[Any], **fields: Any) -> dict[str, Any]:
        body = {"model": "claude-test", "max_tokens": 64, "messages": messages, **fields}
        response = httpx.post(f"{proxy.url}/v1/messages", json=body, headers=headers, timeout=20)
        assert response.status_code == 200, response.text
        forwarded: dict[str, Any] = upstream.received()[-1]["body"]
        assert not pairs(forwarded["messages"])  # no synthetic tool_use anywhere
        assert "tool_choice" not in forwarded
        return forwarded

    with running_proxy(manifest, tmp_path, *options) as proxy:
        first = send([USER], thinking={"type": "adaptive"})
        assert "tools" not in first
        (user,) = first["messages"]
        assert user["content"][0] == {"type": "text", "text": USER["content"]}
        assert [tool for tool, _, _ in text_results(user)] == [PREFS, UNITS]
        assert json.loads(text_results(user)[0][2])["language"] == "en-GB"

        thought = {"type": "thinking", "thinking": "I'll look.", "signature": "sig=="}
        call = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}
        loop = [
            USER,
            {"role": "assistant", "content": [thought, call]},
            {"role": "user", "content": [result]},
        ]
        thinking = {"type": "enabled", "budget_tokens": 1024}
        second = send(loop, thinking=thinking, tools=[CLIENT_TOOL])
    assert second["tools"] == [CLIENT_TOOL]
    user, assistant, answer = second["messages"]
    assert user == first["messages"][0]  # the stored pairs, re-applied in the same form
    assert assistant == loop[1]
    assert answer["content"][0] == result
    ((tool, call_id, _),) = text_results(answer)
    assert tool == UNITS
    assert call_id not in {each for _, each, _ in text_results(user)}


def test_a_request_with_tools_keeps_its_tools_and_tool_choice(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    client(proxy).messages.create(
        model="m",
        max_tokens=8,
        messages=[USER],  # type: ignore[list-item]
        tools=[CLIENT_TOOL],  # type: ignore[list-item]
        tool_choice={"type": "auto"},
        extra_headers={"anthropic-beta": "some-beta-2025"},
    )
    (received,) = upstream.received()
    assert received["body"]["tools"] == [CLIENT_TOOL]
    assert received["body"]["tool_choice"] == {"type": "auto"}
    assert list(pairs(received["body"]["messages"])) == [PREFS, UNITS]
    assert received["headers"]["anthropic-beta"] == "some-beta-2025"


def test_streamed_events_reach_the_client_as_the_upstream_sends_them(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """The upstream holds back its second delta until the client has seen the first."""
    stream = client(proxy).messages.create(
        model="gated",
        max_tokens=8,
        messages=[USER],
        stream=True,  # type: ignore[list-item]
    )
    events = iter(stream)
    deltas = []
    for event in events:
        if event.type == "content_block_delta":
            deltas.append(event.delta.text)  # type: ignore[union-attr]
            break
    assert deltas == ["Hello"]
    httpx.post(f"{upstream.url}/_release").raise_for_status()
    rest = list(events)
    assert rest[-1].type == "message_stop"
    (note,) = notes(rest_server)
    assert note["answer"] == ANSWER


def test_the_second_turn_keeps_the_ttl_and_dedupe(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    anthropic_client = client(proxy)
    first = anthropic_client.messages.create(
        model="m",
        max_tokens=8,
        messages=[USER],
        metadata={"user_id": "u9"},  # type: ignore[list-item]
    )
    turn_two = [
        USER,
        {"role": "assistant", "content": [block.model_dump() for block in first.content]},
        {"role": "user", "content": "And my units?"},
    ]
    with anthropic_client.messages.stream(
        model="m",
        max_tokens=8,
        messages=turn_two,
        metadata={"user_id": "u9"},  # type: ignore[arg-type]
    ) as stream:
        assert stream.get_final_text() == ANSWER
    assert hits(rest_server, "/preferences") == 1
    first_sent, second_sent = (entry["body"]["messages"] for entry in upstream.received())
    assert second_sent[:5] == first_sent[:5]  # both pairs after the first user message
    assert second_sent[5:] == turn_two[1:]


@pytest.mark.parametrize("stream", [False, True])
def test_on_completion_hooks_receive_the_answer_and_the_request_context(
    proxy: Proxy, rest_server: RecordingServer, stream: bool
) -> None:
    created = client(proxy, default_headers={"X-Conversation-Id": "msg-conv"}).messages.create(
        model="m",
        max_tokens=8,
        messages=[USER],  # type: ignore[list-item]
        metadata={"user_id": "u1"},
        stream=stream,
    )
    if stream:
        list(created)  # type: ignore[call-overload]
    (note,) = notes(rest_server)
    assert note["answer"] == ANSWER
    assert note["request"] == {"conversation_id": "msg-conv", "user": "u1", "model": "m"}


def test_a_tool_use_answer_runs_no_completion_hook(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    reply = client(proxy).messages.create(model="tool-call", max_tokens=8, messages=[USER])  # type: ignore[list-item]
    assert reply.stop_reason == "tool_use"
    client(proxy).messages.create(model="m", max_tokens=8, messages=[USER])  # type: ignore[list-item]
    assert len(notes(rest_server)) == 1


def test_forward_auth_sends_the_clients_own_credential(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """Recent ``anthropic`` clients send their key as a bearer token, others in ``x-api-key``."""
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    options = ("--upstream", upstream.url, "--forward-auth")
    body = {"model": "m", "max_tokens": 8, "messages": [USER]}
    with running_proxy(dialect_manifest(rest_server.url), tmp_path, *options, env=env) as proxy:
        client(proxy).messages.create(**body)  # type: ignore[arg-type]
        httpx.post(f"{proxy.url}/v1/messages", json=body, headers={"x-api-key": CLIENT_KEY})
    by_client, by_key = (entry["headers"] for entry in upstream.received())
    assert by_client["authorization"] == f"Bearer {CLIENT_KEY}"
    assert "x-api-key" not in by_client
    assert by_key == {"x-api-key": CLIENT_KEY}


def test_errors_are_anthropic_shaped(
    tmp_path: Path, proxy: Proxy, rest_server: RecordingServer
) -> None:
    with pytest.raises(anthropic.BadRequestError) as bad:
        client(proxy).messages.create(model="m", max_tokens=8, messages="hi")  # type: ignore[arg-type]
    closed = ("--upstream", f"http://127.0.0.1:{free_port()}")
    with (
        running_proxy(dialect_manifest(rest_server.url), tmp_path / "closed", *closed) as down,
        pytest.raises(anthropic.InternalServerError) as unreachable,
    ):
        client(down).messages.create(model="m", max_tokens=8, messages=[USER])  # type: ignore[list-item]
    for caught, kind in ((bad, "invalid_request_error"), (unreachable, "api_error")):
        body: Any = caught.value.body
        assert body == {
            "type": "error",
            "error": {"type": kind, "message": body["error"]["message"]},
        }
    assert unreachable.value.status_code == 502


def test_an_anthropic_clients_model_list_comes_from_the_anthropic_upstream(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    assert [model.id for model in client(proxy).models.list()] == ["up-model"]
    (received,) = upstream.received()
    assert received["path"] == "/v1/models"
    assert received["headers"]["x-api-key"] == UPSTREAM_KEY


@pytest.mark.parametrize("stream", [False, True])
def test_without_an_upstream_the_echo_model_answers_with_fresh_ids(
    tmp_path: Path, rest_server: RecordingServer, stream: bool
) -> None:
    with running_proxy(dialect_manifest(rest_server.url), tmp_path) as proxy:
        echo = client(proxy)
        texts, ids = [], []
        for _ in range(2):
            if stream:
                with echo.messages.stream(model="m", max_tokens=8, messages=[USER]) as events:  # type: ignore[list-item]
                    kinds = [event.type for event in events]
                    message = events.get_final_message()
                assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]
                assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
            else:
                message = echo.messages.create(model="m", max_tokens=8, messages=[USER])  # type: ignore[list-item]
            assert message.content[0].type == "text"
            texts.append(message.content[0].text)
            ids.append(message.id)
    assert texts[0].startswith(f"{PREFS}: {{")
    assert texts[0].split("\n")[1].startswith(f"{UNITS}: {{")
    assert ids[0] != ids[1]


SIGNING_KEY = "messages-route-signing-key-0123"
DUPLICATED = {
    "top level": '{"user_id": "u1", "user_id": "u2"}',
    "at depth": '{"filter": {"scope": [{"tag": "a", "tag": "b"}]}}',
}


@pytest.mark.parametrize("tampered", DUPLICATED.values(), ids=DUPLICATED.keys())
def test_a_signed_pair_sent_back_with_a_duplicated_key_goes_upstream_as_the_proxy_stored_it(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer, tampered: str
) -> None:
    """SPEC 16 and 12.1: a genuine signed pair whose ``input`` gains a duplicated key (which the
    body's parser collapses) is the client's copy, removed like a forged pair; the request is
    answered and the upstream gets the pair the proxy stored, never the client's ``input``."""
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY, "AGENT_HOOKS_SIGNING_KEY": SIGNING_KEY}
    options = ("--anthropic-upstream", upstream.url)
    first = {"model": "m", "max_tokens": 8, "messages": [USER], "metadata": {"user_id": "u7"}}
    headers = {"x-api-key": CLIENT_KEY, "content-type": "application/json"}
    with running_proxy(dialect_manifest(rest_server.url), tmp_path, *options, env=env) as proxy:
        httpx.post(f"{proxy.url}/v1/messages", json=first, headers=headers, timeout=20)
        (turn_one,) = upstream.received()
        sent = turn_one["body"]["messages"]
        use = pairs(sent)[PREFS][0]
        assert re.search(r"_s[0-9a-f]{10}$", use["id"])  # signed
        upstream.forget()
        messages = [
            *sent,
            {"role": "assistant", "content": ANSWER},
            {"role": "user", "content": "?"},
        ]
        genuine = json.dumps(use)
        raw = json.dumps({**first, "messages": messages}).replace(
            genuine, genuine.replace('"input": {}', f'"input": {tampered}')
        )
        assert tampered in raw
        response = httpx.post(f"{proxy.url}/v1/messages", content=raw, headers=headers, timeout=20)
        log = proxy.log()
    assert response.status_code == 200
    assert response.json()["content"][0]["text"] == ANSWER
    (turn_two,) = upstream.received()
    assert turn_two["body"]["messages"] == messages
    assert "removed 2 synthetic pair(s) sent by the client" in log


def test_an_ordinary_tool_use_with_a_duplicated_key_is_forwarded_as_before(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    """Not the proxy's pair, so not its business: the block goes on as the body's parser read
    it (the last value), beside the pairs."""
    use = {"type": "tool_use", "id": "toolu_9", "name": "lookup", "input": {"q": "b"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "found"}
    messages = [
        USER,
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]
    raw = json.dumps({"model": "m", "max_tokens": 8, "messages": messages, "tools": [CLIENT_TOOL]})
    headers = {"x-api-key": CLIENT_KEY, "content-type": "application/json"}
    duplicated = raw.replace('"input": {"q": "b"}', '"input": {"q": "a", "q": "b"}')
    response = httpx.post(
        f"{proxy.url}/v1/messages", content=duplicated, headers=headers, timeout=20
    )
    assert response.status_code == 200
    (received,) = upstream.received()
    sent = received["body"]["messages"]
    assert list(pairs(sent)) == [PREFS, UNITS]
    assert sent[-2:] == messages[1:]
