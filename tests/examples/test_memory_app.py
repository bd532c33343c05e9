"""examples/memory-app: the user's memories from the example MCP server, before each answer, and
each exchange remembered after it.

The server's tools are replaced, so these tests pin what the manifest asks for, not what the
server stores (tests/integration runs the real server).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_hooks.testing import ToolAnswer, run_manifest
from tests.examples._examples import history, manifest

ANSWERS: dict[str, ToolAnswer] = {
    "memory_server_get_memories": "- Prefers short answers.",
    "memory_server_search_memories": "- Works in Python 3.11.",
}


def asked() -> tuple[Callable[[dict[str, Any]], str], list[dict[str, Any]]]:
    """A tool that records the arguments it is called with, and its record."""
    calls: list[dict[str, Any]] = []

    def tool(arguments: dict[str, Any]) -> str:
        calls.append(arguments)
        return "ok"

    return tool, calls


async def test_both_memory_hooks_inject_before_the_model_answers() -> None:
    run = await run_manifest(manifest("memory-app"), history("memory-app"), tools=ANSWERS)
    assert [(r.hook, r.outcome) for r in run.records] == [
        ("user-memories", "injected"),
        ("related-memories", "injected"),
    ]


async def test_the_memories_are_those_of_the_requests_user_or_of_current() -> None:
    tool, calls = asked()
    tools: dict[str, ToolAnswer] = {**ANSWERS, "memory_server_get_memories": tool}
    await run_manifest(manifest("memory-app"), history("memory-app"), tools=tools)
    await run_manifest(
        manifest("memory-app"), history("memory-app"), tools=tools, request={"user_id": "u7"}
    )
    assert calls == [{"user_id": "current"}, {"user_id": "u7"}]


async def test_related_memories_are_searched_with_the_users_question() -> None:
    tool, calls = asked()
    tools: dict[str, ToolAnswer] = {**ANSWERS, "memory_server_search_memories": tool}
    await run_manifest(manifest("memory-app"), history("memory-app"), tools=tools)
    assert calls == [{"query": "Can you suggest how I should structure my next project?"}]


async def test_the_answer_is_remembered_after_the_completion() -> None:
    tool, calls = asked()
    answered = [*history("memory-app"), {"role": "assistant", "content": "Start small."}]
    tools: dict[str, ToolAnswer] = {**ANSWERS, "memory_server_add_memory": tool}
    run = await run_manifest(
        manifest("memory-app"),
        answered,
        tools=tools,
        event="on_completion",
    )
    assert [(r.hook, r.outcome) for r in run.records] == [("remember-answer", "completed")]
    assert calls == [
        {
            "user_id": "current",
            "text": "Asked: Can you suggest how I should structure my next project?"
            " Answered: Start small.",
        }
    ]
