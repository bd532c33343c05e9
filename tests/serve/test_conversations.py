"""Conversations as agents send them (SPEC 15), end to end through ``serve``: each turn the
upstream sees last turn's history, byte for byte, plus what is new."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_hooks.injection._ids import is_synthetic_call_id
from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.serve.test_proxy import SYSTEM, USER, eventually, manifest, tool_hits
from tests.servers.fixtures import RecordingServer

ALWAYS = {
    "kind": "tool_call",
    "event": "on_request_start",
    "name": "always",
    "toolset_name": "prefs",
    "tool_name": "get_preferences",
    "arguments": {"every": "turn"},
    "frequency": "always",
}


@pytest.fixture
def proxy(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> Iterator[Proxy]:
    with running_proxy(manifest(rest_server.url), tmp_path, "--upstream", upstream.url) as running:
        yield running


def chat(proxy: Proxy, messages: list[dict[str, Any]], **headers: str) -> str:
    response = httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json={"model": "m", "messages": messages},
        headers={"authorization": f"Bearer {CLIENT_KEY}", **headers},
        timeout=20,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


def forwarded(upstream: RecordingServer) -> list[list[str]]:
    """Each forwarded request's messages, each as its JSON text (key order included)."""
    return [
        [json.dumps(message, ensure_ascii=False) for message in entry["body"]["messages"]]
        for entry in upstream.received()
    ]


def assert_prefix_kept(requests: list[list[str]]) -> None:
    for before, after in itertools.pairwise(requests):
        assert after[: len(before)] == before


def pair_names(messages: list[str]) -> list[str]:
    names = []
    for text in messages:
        message = json.loads(text)
        for call in message.get("tool_calls") or []:
            if is_synthetic_call_id(call["id"]):
                names.append(call["function"]["name"])
    return names


def test_a_session_header_keeps_state_through_a_tool_loop_and_later_turns(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    session = {"x-session-id": "ses_0123"}
    history: list[dict[str, Any]] = [SYSTEM, USER]
    answer = chat(proxy, history, **session)
    call = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    history += [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
    ]
    chat(proxy, history, **session)
    history += [{"role": "assistant", "content": answer}, {"role": "user", "content": "more?"}]
    chat(proxy, history, **session)
    assert tool_hits(rest_server) == 1  # the TTL hook fired once, on the first request
    requests = forwarded(upstream)
    assert_prefix_kept(requests)
    assert pair_names(requests[-1]) == ["prefs_get_preferences"]


@pytest.mark.parametrize("header", ["session-id", "x-claude-code-session-id", "x-conversation-id"])
def test_every_session_header_names_the_conversation(
    proxy: Proxy, rest_server: RecordingServer, header: str
) -> None:
    chat(proxy, [USER], **{header: "abc"})
    chat(proxy, [USER, {"role": "assistant", "content": "hi"}, USER], **{header: "abc"})
    assert tool_hits(rest_server) == 1


def test_a_bad_session_header_is_ignored_and_the_end_user_field_is_next(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    for _ in range(2):
        response = httpx.post(
            f"{proxy.url}/v1/chat/completions",
            json={"model": "m", "messages": [USER], "prompt_cache_key": "cache-1"},
            headers={"authorization": f"Bearer {CLIENT_KEY}", "x-session-id": "x" * 300},
            timeout=20,
        )
        assert response.status_code == 200
    assert tool_hits(rest_server) == 1


def test_two_histories_under_one_session_never_share_state(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    session = {"x-session-id": "ses_1"}
    title = [{"role": "user", "content": "Write a title for: fix the bug"}]
    chat(proxy, [USER], **session)
    chat(proxy, title, **session)
    assert tool_hits(rest_server) == 2
    chat(proxy, [USER, {"role": "assistant", "content": "ok"}, USER], **session)
    chat(proxy, [*title, {"role": "assistant", "content": "Bug fix"}, USER], **session)
    assert tool_hits(rest_server) == 2


def test_an_appended_pair_stays_where_it_was_appended(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    app = manifest(rest_server.url)
    app["hooks"] = [*app["hooks"], ALWAYS]
    with running_proxy(app, tmp_path, "--upstream", upstream.url) as proxy:
        history: list[dict[str, Any]] = [USER]
        for turn in range(3):
            answer = chat(proxy, history, **{"x-session-id": "s"})
            history += [
                {"role": "assistant", "content": answer},
                {"role": "user", "content": f"{turn}"},
            ]
    requests = forwarded(upstream)
    assert_prefix_kept(requests)
    assert pair_names(requests[-1]) == ["prefs_get_preferences"] + ["prefs_get_preferences"] * 3


def test_an_edited_message_drops_the_pairs_anchored_from_it_on(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    app = manifest(rest_server.url)
    app["hooks"] = [*app["hooks"], ALWAYS]
    session = {"x-session-id": "s"}
    with running_proxy(app, tmp_path, "--upstream", upstream.url) as proxy:
        chat(proxy, [USER], **session)
        turn2 = [USER, {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
        chat(proxy, turn2, **session)
        chat(proxy, [*turn2[:2], {"role": "user", "content": "y, edited"}], **session)
        log = proxy.log()
    second, third = forwarded(upstream)[1:]
    assert len(pair_names(second)) == 3
    assert len(pair_names(third)) == 3  # the pair after "y" went; a new one follows the edit
    assert third[:5] == second[:5]  # everything before the edited message is as it was
    assert "stored pairs dropped: 1 whose client message changed" in log
    assert tool_hits(rest_server) == 3 + 1  # "always" on every request, the TTL hook once


@pytest.mark.parametrize(
    ("replacement", "names"),
    [([ALWAYS], ["prefs_get_preferences"]), ([], [])],
    ids=["another hook in its place", "no request-start hook left"],
)
def test_a_removed_hook_stops_its_stored_content_at_once(
    tmp_path: Path,
    upstream: RecordingServer,
    rest_server: RecordingServer,
    replacement: list[dict[str, Any]],
    names: list[str],
) -> None:
    """The TTL hook is removed (the store is the same): its stored pair is not forwarded again.
    With no request-start hook left the store is not even read, so nothing says it dropped."""
    app = manifest(rest_server.url)
    with running_proxy(app, tmp_path, "--upstream", upstream.url) as proxy:
        chat(proxy, [USER], **{"x-session-id": "s"})
    app["hooks"] = [*app["hooks"][1:], *replacement]
    with running_proxy(app, tmp_path, "--upstream", upstream.url) as proxy:
        chat(proxy, [USER, {"role": "assistant", "content": "x"}, USER], **{"x-session-id": "s"})
        log = proxy.log()
    assert pair_names(forwarded(upstream)[-2]) == ["prefs_get_preferences"]
    assert pair_names(forwarded(upstream)[-1]) == names
    dropped = "stored pairs dropped: 0 whose client message changed, 1 of no current hook"
    assert (dropped in log) == bool(replacement)


def test_count_tokens_is_forwarded_with_the_stored_pairs_and_runs_no_hook(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    headers = {"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01", "x-session-id": "s"}
    body = {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    sent = httpx.post(f"{proxy.url}/v1/messages", json=body, headers=headers, timeout=20)
    assert sent.status_code == 200
    counted = httpx.post(
        f"{proxy.url}/v1/messages/count_tokens",
        json={"model": "claude-x", "messages": body["messages"]},
        headers=headers,
        timeout=20,
    )
    assert counted.json() == {"input_tokens": 7}
    first, count = upstream.received()
    assert count["path"] == "/v1/messages/count_tokens"
    assert count["body"]["messages"] == first["body"]["messages"]
    assert count["body"]["tools"] == first["body"]["tools"]
    assert tool_hits(rest_server) == 1


def _anthropic_turns() -> list[dict[str, Any]]:
    user = {
        "role": "user",
        "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
    }
    use = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}],
    }
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}],
    }
    moved = {"role": "user", "content": "hi"}  # Claude Code moves its breakpoint: same message
    answer = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    tools = [{"name": "ls", "input_schema": {"type": "object"}}]
    return [
        {"model": "claude-x", "max_tokens": 9, "tools": tools, "messages": [user]},
        {"model": "claude-x", "max_tokens": 9, "tools": tools, "messages": [moved, use, result]},
        {
            "model": "claude-x",
            "max_tokens": 9,
            "tools": tools,
            "messages": [moved, use, result, answer, {"role": "user", "content": "more"}],
        },
    ]


def _responses_turns() -> list[dict[str, Any]]:
    dev = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "be brief"}],
    }
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    call = {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "a"}
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "done"}],
    }
    more = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}
    base = {"model": "gpt-x", "store": False, "prompt_cache_key": "k1"}
    return [
        {**base, "input": [dev, user]},
        {**base, "input": [dev, user, reasoning, call, output]},
        {**base, "input": [dev, user, reasoning, call, output, answer, more]},
    ]


@pytest.mark.parametrize(
    ("path", "turns", "field"),
    [
        ("/v1/messages", _anthropic_turns(), "messages"),
        ("/v1/responses", _responses_turns(), "input"),
    ],
    ids=["anthropic", "responses"],
)
def test_every_route_keeps_state_and_the_forwarded_prefix(
    proxy: Proxy,
    upstream: RecordingServer,
    rest_server: RecordingServer,
    path: str,
    turns: list[dict[str, Any]],
    field: str,
) -> None:
    headers = {
        "authorization": f"Bearer {CLIENT_KEY}",
        "x-api-key": CLIENT_KEY,
        "anthropic-version": "2023-06-01",
        "session-id": "codex-or-claude-session",
    }
    for body in turns:
        response = httpx.post(f"{proxy.url}{path}", json=body, headers=headers, timeout=20)
        assert response.status_code == 200, response.text
    assert tool_hits(rest_server) == 1
    requests = [
        [json.dumps(item, ensure_ascii=False) for item in entry["body"][field]]
        for entry in upstream.received()
    ]
    # a moved cache breakpoint is the client's own change to its message, nothing of ours
    canonical = [
        [text.replace(', "cache_control": {"type": "ephemeral"}', "") for text in r]
        for r in requests
    ]
    if path == "/v1/messages":
        canonical = [
            [t.replace('[{"type": "text", "text": "hi"}]', '"hi"') for t in r] for r in canonical
        ]
    assert_prefix_kept(canonical)
    assert len(requests[-1]) == len(turns[-1][field]) + 2  # one pair, where it first went


def test_claude_codes_trailing_system_message_does_not_move_the_text_form_pair(
    proxy: Proxy, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """Claude Code's first request ends with a ``system`` message after the user's; with
    thinking on, the pair goes in text form into that user message, before the system message
    (its anchor), where it is again when the tool loop's messages follow it."""
    user = {
        "role": "user",
        "content": [{"type": "text", "text": "list", "cache_control": {"type": "ephemeral"}}],
    }
    system = {"role": "system", "content": "Available agent types: none"}
    use = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}},
        ],
    }
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}],
    }
    moved = {"role": "user", "content": [{"type": "text", "text": "list"}]}
    base = {"model": "claude-x", "max_tokens": 9, "thinking": {"type": "adaptive"}}
    base["tools"] = [{"name": "ls", "input_schema": {"type": "object"}}]
    headers = {"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"}
    headers["x-claude-code-session-id"] = "claude-session"
    for messages in ([user, system], [moved, system, use, result]):
        sent = httpx.post(
            f"{proxy.url}/v1/messages", json={**base, "messages": messages}, headers=headers
        )
        assert sent.status_code == 200, sent.text
    assert tool_hits(rest_server) == 1
    first, second = (entry["body"]["messages"] for entry in upstream.received())
    assert [m["role"] for m in first] == ["user", "system"]
    assert first[0]["content"][-1]["text"].startswith('<tool_result tool="prefs_get_preferences"')
    without_breakpoint = [
        {k: v for k, v in b.items() if k != "cache_control"} for b in first[0]["content"]
    ]
    assert second[:2] == [{**first[0], "content": without_breakpoint}, system]


def test_a_fresh_hooks_record_line_is_debug_in_serve_the_access_line_names_it(
    proxy: Proxy, rest_server: RecordingServer
) -> None:
    """SPEC 17: ``skipped_fresh`` is the steady state of a long conversation; its record line
    is DEBUG (serve logs INFO here), other outcomes stay INFO."""
    chat(proxy, [USER], **{"x-session-id": "s"})
    chat(proxy, [USER, {"role": "assistant", "content": "x"}, USER], **{"x-session-id": "s"})
    # the access line is written once the answer's last byte is sent: the client may read first
    log = eventually(lambda: text if "hooks=prefs:skipped_fresh" in (text := proxy.log()) else None)
    assert tool_hits(rest_server) == 1
    assert "INFO agent_hooks.hooks: hook=prefs event=on_request_start" in log
    assert "outcome=injected" in log
    assert "outcome=skipped_fresh" not in log
