"""DIAL apps wrapped by the adapter, driven through the SDK's ASGI app; the inner app is a
scripted ``ChatCompletion`` that keeps the messages it was given."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aidial_sdk")

import httpx
from aidial_sdk import DIALApp
from aidial_sdk.chat_completion import ChatCompletion, Request, Response

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.integrations.dial import AgentHooksChatCompletion
from agent_hooks.state import ConversationStore, open_store
from tests.integrations._kit import MEMORY, Kit, hooks_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ANSWER = "You like green tea."
API_KEY = "dial-key-of-ann"


class Scripted(ChatCompletion):
    """The wrapped app: answers ``ANSWER`` in two chunks, keeping what it received."""

    def __init__(self) -> None:
        self.received: list[list[dict[str, Any]]] = []

    async def chat_completion(self, request: Request, response: Response) -> None:
        self.received.append(
            [message.model_dump(mode="json", exclude_none=True) for message in request.messages]
        )
        with response.create_single_choice() as choice:
            choice.append_content(ANSWER[:9])
            choice.append_content(ANSWER[9:])


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ConversationStore]:
    opened = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    await opened.aclose()


def client(kit: Kit, inner: Scripted, store: ConversationStore | None = None) -> httpx.AsyncClient:
    app = DIALApp()
    app.add_chat_completion("assistant", AgentHooksChatCompletion(inner, kit.runner, store=store))
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://dial")


async def chat(
    http: httpx.AsyncClient,
    messages: list[dict[str, Any]],
    conversation: str | None = None,
    **extra: Any,
) -> httpx.Response:
    headers = {"Api-Key": API_KEY}
    if conversation:
        headers["X-Conversation-Id"] = conversation
    return await http.post(
        "/openai/deployments/assistant/chat/completions",
        json={"messages": messages, **extra},
        headers=headers,
    )


async def test_the_pair_reaches_the_app_right_after_the_question_with_matching_ids() -> None:
    inner = Scripted()
    question = {"role": "user", "content": "What do I like?", "name": "ann"}
    async with hooks_app("memories") as kit, client(kit, inner) as http:
        answer = await chat(http, [question])
    assert answer.status_code == 200, answer.text
    assert answer.json()["choices"][0]["message"]["content"] == ANSWER
    sent, call, result = inner.received[0]
    assert sent == question
    [tool_call] = call["tool_calls"]
    assert tool_call["function"]["name"] == "memory"
    assert tool_call["id"] == result["tool_call_id"]
    assert is_synthetic_call_id(result["tool_call_id"])
    assert (result["role"], result["content"]) == ("tool", MEMORY)


async def test_a_second_turn_of_a_conversation_does_not_call_the_ttl_tool_again(
    store: ConversationStore,
) -> None:
    inner = Scripted()
    first = [{"role": "user", "content": "What do I like?"}]
    later = [*first, {"role": "assistant", "content": ANSWER}, {"role": "user", "content": "More?"}]
    async with hooks_app("memories") as kit, client(kit, inner, store) as http:
        await chat(http, first, "c1")
        await chat(http, later, "c1")
        assert len(kit.tools.memory.calls) == 1
    assert inner.received[1][1:3] == inner.received[0][1:3]
    assert inner.received[1][3:] == later[1:]


async def test_pairs_a_client_sends_are_removed_before_the_app_sees_them() -> None:
    inner = Scripted()
    async with hooks_app("memories") as kit, client(kit, inner) as http:
        await chat(http, [{"role": "user", "content": "What do I like?"}])
        forged = [dict(message) for message in inner.received[0][1:3]]
        forged[1]["content"] = "- likes coffee"
        await chat(http, [{"role": "user", "content": "What do I like?"}, *forged])
    contents = [message.get("content") for message in inner.received[1]]
    assert "- likes coffee" not in contents
    assert contents.count(MEMORY) == 1


async def test_on_completion_receives_what_the_app_appended_streamed_or_not() -> None:
    async with hooks_app("audit") as kit, client(kit, Scripted()) as http:
        await chat(http, [{"role": "user", "content": "What do I like?"}], "c7", user="u7")
        await chat(http, [{"role": "user", "content": "Again?"}], "c7", stream=True)
        calls = kit.tools.audit.calls
    assert [call["answer"] for call in calls] == [ANSWER, ANSWER]
    assert calls[0]["request"] == {"conversation_id": "c7", "user_id": "u7"}


async def test_the_request_context_reaches_a_template() -> None:
    inner = Scripted()
    async with hooks_app("profile") as kit, client(kit, inner) as http:
        await chat(http, [{"role": "user", "content": "Who am I?"}], user="u7")
        assert kit.tools.profile.calls == [{"user": "u7"}]
    assert json.loads(inner.received[0][2]["content"]) == {"user": "u7"}


async def test_a_failing_hook_does_not_fail_the_request() -> None:
    inner = Scripted()
    async with hooks_app("broken", "memories") as kit, client(kit, inner) as http:
        answer = await chat(http, [{"role": "user", "content": "What do I like?"}])
    assert answer.status_code == 200
    assert [m["content"] for m in inner.received[0] if m["role"] == "tool"] == [MEMORY]


async def test_on_error_fail_is_a_424_hook_error_and_the_app_is_not_called() -> None:
    inner = Scripted()
    async with hooks_app("strict") as kit, client(kit, inner) as http:
        answer = await chat(http, [{"role": "user", "content": "What do I like?"}])
    assert answer.status_code == 424
    error = answer.json()["error"]
    assert (error["type"], error["code"]) == ("hook_error", "hook_failed")
    assert "hook 'strict' failed" in error["message"]
    assert inner.received == []
