"""The scripted upstream itself: its tool loop on each route, and its 400s in each provider's
shape, recorded with the request."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.coding_agents.scripted_upstream import ASIDE, FINAL
from tests.servers.fixtures import RecordingServer

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]
USER = {"role": "user", "content": "hi"}


def _post(server: RecordingServer, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.url}{path}", json=body, timeout=10)


def test_a_messages_turn_is_a_tool_call_then_the_final_answer(
    scripted_upstream: RecordingServer,
) -> None:
    body = {"model": "claude-x", "tools": TOOLS, "messages": [USER]}
    first = _post(scripted_upstream, "/v1/messages", body).json()
    assert first["stop_reason"] == "tool_use"
    use = first["content"][-1]
    assert use["name"] == "Bash"
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "scripted"}
    body["messages"] = [USER, {"role": "assistant", "content": first["content"]}]
    body["messages"].append({"role": "user", "content": [result]})
    second = _post(scripted_upstream, "/v1/messages", body).json()
    assert second["content"] == [{"type": "text", "text": FINAL}]


def test_with_thinking_the_answers_carry_a_signed_thinking_block_it_then_accepts(
    scripted_upstream: RecordingServer,
) -> None:
    body = {"model": "c", "tools": TOOLS, "messages": [USER], "thinking": {"type": "adaptive"}}
    first = _post(scripted_upstream, "/v1/messages", body).json()
    assert first["content"][0]["type"] == "thinking"
    use = first["content"][1]
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "scripted"}
    body["messages"] = [USER, {"role": "assistant", "content": first["content"]}]
    body["messages"].append({"role": "user", "content": [result]})
    assert _post(scripted_upstream, "/v1/messages", body).status_code == 200
    body["messages"][1] = {"role": "assistant", "content": [use]}  # the thinking block dropped
    assert _post(scripted_upstream, "/v1/messages", body).status_code == 400


def test_a_violation_is_a_provider_shaped_400_and_is_recorded(
    scripted_upstream: RecordingServer,
) -> None:
    orphan = {"role": "tool", "tool_call_id": "ah_1", "content": "ok"}
    chat = _post(scripted_upstream, "/v1/chat/completions", {"model": "m", "messages": [orphan]})
    result = {"type": "tool_result", "tool_use_id": "ah_1", "content": "ok"}
    anthropic = {"model": "m", "messages": [{"role": "user", "content": [result]}]}
    messages = _post(scripted_upstream, "/v1/messages", anthropic)
    assert chat.status_code == messages.status_code == 400
    assert chat.json()["error"]["type"] == "invalid_request_error"
    assert messages.json()["type"] == "error"
    assert messages.json()["error"]["type"] == "invalid_request_error"
    recorded = [entry["violations"] for entry in scripted_upstream.received()]
    assert len(recorded) == 2
    assert all(recorded)


def test_a_streamed_responses_turn_without_tools_is_the_aside(
    scripted_upstream: RecordingServer,
) -> None:
    body = {"model": "gpt", "input": "hi", "stream": True, "reasoning": {"effort": "low"}}
    answer = _post(scripted_upstream, "/v1/responses", body)
    events = [
        json.loads(line[len("data: ") :])
        for line in answer.text.splitlines()
        if line.startswith("data: ")
    ]
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    output = events[-1]["response"]["output"]
    assert [item["type"] for item in output] == ["reasoning", "message"]
    assert output[1]["content"][0]["text"] == ASIDE
    assert json.loads(scripted_upstream.received()[0]["text"]) == body
