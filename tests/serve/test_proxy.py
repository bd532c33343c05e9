"""``agent-hooks serve`` end to end: the real ``openai`` client, the proxy as a child process,
a recording upstream and a REST tool server that counts its hits."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import openai
import pytest

from agent_hooks.injection._ids import is_synthetic_call_id
from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.serve.upstream_server import ANSWER
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port

UPSTREAM_KEY = "upstream-secret-key-5678"
SYSTEM = {"role": "system", "content": "You are terse."}
USER = {"role": "user", "content": "What are my preferences?"}
TOOL = "prefs_get_preferences"

_T = TypeVar("_T")


def manifest(rest_url: str, *, fail: bool = False) -> dict[str, Any]:
    """A TTL'd REST hook at request start and a REST hook that stores the answer at completion."""
    tools = [
        {"name": "get_preferences", "path": "/preferences"},
        {"name": "save_note", "method": "POST", "path": "/users/{user_id}/notes"},
        {"name": "broken", "path": "/status/500"},
    ]
    hooks: list[dict[str, Any]] = [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "prefs",
            "toolset_name": "prefs",
            "tool_name": "get_preferences",
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
        },
        {
            "kind": "tool_call",
            "event": "on_completion",
            "name": "remember",
            "toolset_name": "prefs",
            "tool_name": "save_note",
            "arguments": {
                "user_id": "u1",
                "answer": "${last_assistant_message.content}",
                "request": {"$eval": "request"},
            },
        },
    ]
    if fail:
        hooks.append(
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "must-work",
                "toolset_name": "prefs",
                "tool_name": "broken",
                "on_error": "fail",
            }
        )
    toolset = {"type": "rest-api", "name": "prefs", "base_url": rest_url, "tools": tools}
    return {"toolsets": [toolset], "hooks": hooks}


@pytest.fixture
def proxy(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> Iterator[Proxy]:
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    with running_proxy(
        manifest(rest_server.url), tmp_path, "--upstream", upstream.url, env=env
    ) as running:
        yield running


def eventually(probe: Callable[[], _T | None], seconds: float = 20.0) -> _T:
    """``probe()``'s first non-None value, polled for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value is not None:
            return value
        time.sleep(0.05)  # paces the poll
    raise TimeoutError(f"nothing after {seconds}s")


def held_stream(proxy: Proxy) -> Iterator[Any]:
    """A streamed chat answer from the ``gated`` upstream model, its first chunk (``Hello``)
    read: the upstream holds the rest until ``POST {upstream}/_release``."""
    stream = proxy.client().chat.completions.create(
        model="gated",
        messages=[USER],
        stream=True,  # type: ignore[list-item]
    )
    chunks = iter(stream)
    assert next(chunks).choices[0].delta.content == "Hello"
    return chunks


def tool_hits(rest_server: RecordingServer) -> int:
    return sum(1 for entry in rest_server.received() if entry["raw_path"] == "/preferences")


def saved_notes(rest_server: RecordingServer, count: int = 1) -> list[dict[str, Any]]:
    def probe() -> list[dict[str, Any]] | None:
        notes = [e["body"] for e in rest_server.received() if e["method"] == "POST"]
        return notes if len(notes) >= count else None

    return eventually(probe)


def is_pair_at(messages: list[dict[str, Any]], index: int) -> bool:
    call = messages[index]["tool_calls"][0]
    return (
        call["function"]["name"] == TOOL
        and is_synthetic_call_id(call["id"])
        and messages[index + 1]
        == {**messages[index + 1], "role": "tool", "tool_call_id": call["id"]}
    )


def test_the_upstream_gets_the_pair_after_the_first_user_message_and_all_else_unchanged(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    answer = proxy.client().chat.completions.create(
        model="gpt-test",
        messages=[SYSTEM, USER],  # type: ignore[list-item]
        tools=tools,  # type: ignore[list-item]
        temperature=0.25,
        user="u1",
        extra_body={"vendor_option": {"keep": [1, 2]}},
    )
    assert answer.choices[0].message.content == ANSWER
    (received,) = upstream.received()
    body = received["body"]
    assert body["messages"][:2] == [SYSTEM, USER]
    assert is_pair_at(body["messages"], 2)
    assert len(body["messages"]) == 4
    assert json.loads(body["messages"][3]["content"])["language"] == "en-GB"
    rest = {key: value for key, value in body.items() if key != "messages"}
    expected = {"model": "gpt-test", "tools": tools, "temperature": 0.25, "user": "u1"}
    assert rest == {**expected, "vendor_option": {"keep": [1, 2]}}
    assert received["headers"] == {"authorization": f"Bearer {UPSTREAM_KEY}"}


def test_messages_the_hooks_leave_alone_reach_the_upstream_exactly_as_sent(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    """Key order, unknown fields and nulls of the client's messages survive: the proxy forwards
    the client's own dicts, it does not rebuild them from its models."""
    system = {"content": "You are terse.", "name": "setup", "role": "system", "x_note": None}
    user = {
        "x_vendor": {"b": 2, "a": 1},
        "content": [{"type": "text", "text": "Hi"}],
        "role": "user",
    }
    reply = {"tool_calls": None, "role": "assistant", "content": "Hello", "refusal": None}
    later = {"role": "user", "content": "And now?", "name": "u"}
    sent = [system, user, reply, later]
    body = {"model": "gpt-test", "messages": sent}
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    response = httpx.post(
        f"{proxy.url}/v1/chat/completions", json=body, headers=headers, timeout=20
    )
    assert response.status_code == 200
    (received,) = upstream.received()
    forwarded = received["body"]["messages"]
    assert is_pair_at(forwarded, 2)
    untouched = forwarded[:2] + forwarded[4:]
    assert [list(message.items()) for message in untouched] == [
        list(message.items()) for message in sent
    ]


def test_messages_the_proxy_does_not_model_reach_the_upstream_in_place(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    """SPEC 15: a role, a content or a shape the proxy does not know is not refused: it goes
    upstream in place, untouched (whether it is valid is the upstream's call)."""
    critic = {"role": "critic", "content": "too long", "x": [1]}
    odd = {"role": "user", "content": 5}
    later = {"role": "developer", "content": "Be kind.", "vendor": {"b": 1, "a": 2}}
    sent = [SYSTEM, critic, USER, odd, "text", later]
    headers = {"authorization": f"Bearer {CLIENT_KEY}"}
    response = httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json={"model": "m", "messages": sent},
        headers=headers,
        timeout=20,
    )
    assert response.status_code == 200
    (received,) = upstream.received()
    forwarded = received["body"]["messages"]
    assert is_pair_at(forwarded, 3)
    assert [json.dumps(m) for m in forwarded[:3] + forwarded[5:]] == [json.dumps(m) for m in sent]


def test_a_body_no_hook_changes_goes_upstream_as_the_bytes_the_client_sent(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """Nothing to write (no hook at request start here): the client's own bytes are forwarded,
    spacing and escapes included, unless reading the body changed it (DIAL's deployment) or it
    starts with a byte order mark (the upstream gets UTF-8 without one)."""
    completion_only = manifest(rest_server.url)
    completion_only["hooks"] = [
        hook for hook in completion_only["hooks"] if hook["event"] == "on_completion"
    ]
    sent = (
        '{ "model" : "m",\n "messages": [{"role": "user", "content": "caf\\u00e9 \\ud83d\\ude00"}]}'
    )
    headers = {"authorization": f"Bearer {CLIENT_KEY}", "content-type": "application/json"}
    with running_proxy(completion_only, tmp_path, "--upstream", upstream.url) as proxy:
        chat = f"{proxy.url}/v1/chat/completions"
        assert httpx.post(chat, content=sent.encode(), headers=headers).status_code == 200
        dial = f"{proxy.url}/openai/deployments/dep-1/chat/completions"
        assert httpx.post(dial, json={"messages": [USER]}, headers=headers).status_code == 200
        with_bom = b"\xef\xbb\xbf" + json.dumps({"model": "m", "messages": [USER]}).encode()
        assert httpx.post(chat, content=with_bom, headers=headers).status_code == 200
    as_sent, named, reencoded = upstream.received()
    assert as_sent["text"] == sent
    assert named["body"] == {"messages": [USER], "model": "dep-1"}
    assert reencoded["text"] == json.dumps(
        {"model": "m", "messages": [USER]}, separators=(",", ":")
    )


def test_streamed_chunks_reach_the_client_as_the_upstream_sends_them(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    """The upstream holds back its second chunk until the client has seen the first."""
    chunks = held_stream(proxy)
    httpx.post(f"{upstream.url}/_release").raise_for_status()
    rest = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert "Hello" + rest == ANSWER


def test_the_second_turn_reapplies_the_stored_pair_and_skips_the_fresh_tool(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    client = proxy.client(default_headers={"X-Conversation-Id": "conv-1"})
    first = client.chat.completions.create(model="m", messages=[SYSTEM, USER])  # type: ignore[list-item]
    turn_two = [
        SYSTEM,
        USER,
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "And my units?"},
    ]
    client.chat.completions.create(model="m", messages=turn_two)  # type: ignore[arg-type]
    assert tool_hits(rest_server) == 1
    first_sent, second_sent = (entry["body"]["messages"] for entry in upstream.received())
    assert second_sent[:4] == first_sent[:4]  # the same pair, after the first user message
    assert second_sent[4:] == turn_two[2:]


def test_user_and_first_message_keep_a_conversation_without_a_header(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    client = proxy.client()
    for _ in range(2):
        client.chat.completions.create(model="m", messages=[USER], user="u9")  # type: ignore[list-item]
    client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
    assert tool_hits(rest_server) == 2  # the anonymous request shares nobody's state


@pytest.mark.parametrize("stream", [False, True])
def test_on_completion_hooks_receive_the_answer_and_the_request_context(
    proxy: Proxy, rest_server: RecordingServer, stream: bool
) -> None:
    client = proxy.client(default_headers={"X-Conversation-Id": "conv-2"})
    created = client.chat.completions.create(
        model="m",
        messages=[USER],
        user="u1",
        stream=stream,  # type: ignore[call-overload]
    )
    if stream:
        list(created)
    (note,) = saved_notes(rest_server)
    assert note["answer"] == ANSWER
    assert note["request"] == {"conversation_id": "conv-2", "user": "u1", "model": "m"}


def test_the_access_log_names_route_status_and_outcomes_but_no_secrets(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
    saved_notes(rest_server)
    proxy.process.send_signal(signal.SIGTERM)
    proxy.process.wait(timeout=20)
    log = proxy.log()
    assert "method=POST path=/v1/chat/completions status=200" in log
    assert "hooks=prefs:injected" in log
    assert UPSTREAM_KEY not in log
    assert CLIENT_KEY not in log
    assert USER["content"] not in log


def test_forward_auth_sends_the_clients_credentials(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    options = ("--upstream", upstream.url, "--forward-auth")
    with running_proxy(manifest(rest_server.url), tmp_path, *options, env=env) as proxy:
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
    assert upstream.received()[0]["headers"] == {"authorization": f"Bearer {CLIENT_KEY}"}


def test_the_dial_route_names_the_model_when_the_body_does_not(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    url = f"{proxy.url}/openai/deployments/dep-1/chat/completions?api-version=2024-02-01"
    response = httpx.post(url, json={"messages": [USER]}, timeout=20)
    assert response.status_code == 200
    assert response.headers["x-upstream"] == "kept"
    assert upstream.received()[0]["body"]["model"] == "dep-1"


def test_bad_bodies_are_openai_shaped_bad_requests(proxy: Proxy) -> None:
    response = httpx.post(f"{proxy.url}/v1/chat/completions", content=b"{oops", timeout=20)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    without = httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": "m"}, timeout=20)
    assert without.status_code == 400
    assert without.json()["error"]["code"] == "invalid_messages"
    missing = httpx.get(f"{proxy.url}/v1/nothing", timeout=20)
    assert missing.status_code == 404
    assert set(missing.json()["error"]) == {"message", "type", "code"}


def test_an_upstream_error_is_passed_through_as_it_came(proxy: Proxy) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        proxy.client().chat.completions.create(model="teapot", messages=[USER])  # type: ignore[list-item]
    assert (caught.value.status_code, caught.value.code) == (418, "418")
    assert "short and stout" in caught.value.message


def test_a_failing_must_work_hook_answers_424_without_calling_the_upstream(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    options = ("--upstream", upstream.url)
    config = manifest(rest_server.url, fail=True)
    with (
        running_proxy(config, tmp_path, *options) as proxy,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
    assert caught.value.status_code == 424
    assert "must-work" in caught.value.message
    assert upstream.received() == []


def test_an_unreachable_upstream_is_502_and_a_silent_one_504(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    with (
        running_proxy(manifest(rest_server.url), tmp_path / "a", "--upstream", closed) as proxy,
        pytest.raises(openai.InternalServerError) as unreachable,
    ):
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
    options = ("--upstream", upstream.url, "--upstream-timeout", "0.5")
    with (
        running_proxy(manifest(rest_server.url), tmp_path / "b", *options) as proxy,
        pytest.raises(openai.InternalServerError) as silent,
    ):
        proxy.client().chat.completions.create(model="slow", messages=[USER])  # type: ignore[list-item]
    assert (unreachable.value.status_code, unreachable.value.code) == (502, "upstream_unreachable")
    assert (silent.value.status_code, silent.value.code) == (504, "upstream_timeout")


@pytest.mark.parametrize("stream", [False, True])
def test_without_an_upstream_the_echo_model_lists_the_pairs(
    tmp_path: Path, rest_server: RecordingServer, stream: bool
) -> None:
    with running_proxy(manifest(rest_server.url), tmp_path) as proxy:
        created = proxy.client().chat.completions.create(
            model="m",
            messages=[USER],
            stream=stream,  # type: ignore[call-overload]
        )
        if stream:
            text = "".join(chunk.choices[0].delta.content or "" for chunk in created)
        else:
            text = created.choices[0].message.content
    assert text.startswith(f"{TOOL}: {{")
    assert "\n" not in text


def test_two_proxies_sharing_one_redis_agree_on_the_conversation(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer, redis_url: str
) -> None:
    options = ("--upstream", upstream.url, "--state", redis_url)
    config = manifest(rest_server.url)
    headers = {"X-Conversation-Id": f"replicas-{tmp_path.name}"}
    with (
        running_proxy(config, tmp_path / "a", *options) as first,
        running_proxy(config, tmp_path / "b", *options) as second,
    ):
        first.client(default_headers=headers).chat.completions.create(
            model="m",
            messages=[USER],  # type: ignore[list-item]
        )
        second.client(default_headers=headers).chat.completions.create(
            model="m",
            messages=[USER],  # type: ignore[list-item]
        )
    assert tool_hits(rest_server) == 1
    sent = [entry["body"]["messages"] for entry in upstream.received()]
    assert sent[0] == sent[1]
    assert is_pair_at(sent[1], 1)


def test_sigterm_during_a_streamed_answer_lets_it_and_its_hooks_finish(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    chunks = held_stream(proxy)
    proxy.process.send_signal(signal.SIGTERM)
    httpx.post(f"{upstream.url}/_release").raise_for_status()
    rest = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    assert "Hello" + rest == ANSWER
    (note,) = saved_notes(rest_server)
    assert note["answer"] == ANSWER
    assert proxy.process.wait(timeout=20) == 0
