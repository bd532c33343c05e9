"""Histories we produce are histories real providers accept (SPEC section 4).

The rules come from the providers, not from our echo model:
- OpenAI / Azure Chat Completions: ``tool_calls[].id`` at most 40 characters; every assistant
  ``tool_calls`` entry is answered by ``tool`` messages that follow it, before the next other
  message; ``function.arguments`` is the JSON text of an object.
- Anthropic Messages: ``tool_use.id`` matches ``^[a-zA-Z0-9_-]+$``.

Every example manifest runs three turns (a TTL expiring in between, content changing), with and
without a signing key, and every history it writes must pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.config import ApplicationConfig
from agent_hooks.messages import Message, Role
from agent_hooks.testing import run_manifest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OPENAI_MAX_ID = 40
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
OUR_ID = re.compile(r"^[a-z0-9_]{1,40}$")
NOW = 1_800_000_000


def provider_violations(messages: Sequence[Message]) -> list[str]:
    """Every way ``messages`` breaks the rules above; empty when a provider accepts them."""
    problems: list[str] = []
    for index, message in enumerate(messages):
        if message.role is not Role.ASSISTANT or not message.tool_calls:
            continue
        answered = set()
        for follower in messages[index + 1 :]:
            if follower.role is not Role.TOOL:
                break
            answered.add(follower.tool_call_id)
        for call in message.tool_calls:
            where = f"[{index}] call {call.id!r}"
            if len(call.id) > OPENAI_MAX_ID or not ANTHROPIC_ID.fullmatch(call.id):
                problems.append(f"{where}: an id OpenAI or Anthropic refuses")
            if call.id.startswith("ah_") and not OUR_ID.fullmatch(call.id):
                problems.append(f"{where}: not of [a-z0-9_]")
            if call.id not in answered:
                problems.append(f"{where}: not answered by the tool messages that follow")
            arguments = json.loads(call.function.arguments) if call.function else None
            if not isinstance(arguments, dict):
                problems.append(f"{where}: arguments are not the JSON text of an object")
    return problems


def _examples() -> list[Path]:
    return sorted(path.parent for path in EXAMPLES.glob("*/manifest.json"))


def _replacements(manifest: dict[str, Any]) -> dict[str, Any]:
    config = ApplicationConfig.from_dict(manifest, preview=True)
    hooks = config.hooks or []  # completion hooks' tools too: an example's host may register them
    turn = {"n": 0}

    def answer(arguments: dict[str, Any]) -> str:
        return f"result {turn['n'] // 2} for {json.dumps(arguments, sort_keys=True)}"

    return {hook.final_tool_name: answer for hook in hooks} | {"_turn": turn}


@pytest.mark.parametrize("example", _examples(), ids=lambda path: path.name)
@pytest.mark.parametrize("key", [None, "a-signing-key"])
async def test_every_history_an_example_writes_is_accepted_by_every_provider(
    example: Path, key: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)
    if key is None:
        monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEY", raising=False)
    else:
        monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", key)
    manifest = json.loads((example / "manifest.json").read_text())
    tools = _replacements(manifest)
    turn = tools.pop("_turn")
    history_file = example / "history.json"
    history: list[Any] = (
        json.loads(history_file.read_text())
        if history_file.exists()
        else [{"role": "user", "content": "hello"}]
    )
    seen_ids = 0
    for step in range(3):
        turn["n"] = step
        run = await run_manifest(
            manifest, history, tools=tools, now=NOW + step * 3600, request={"user_id": "u7"}
        )
        assert provider_violations(run.messages) == []
        seen_ids += sum(len(m.tool_calls or []) for m in run.messages)
        history = [
            *[m.to_openai() for m in run.messages],
            {"role": "assistant", "content": f"answer {step}"},
            {"role": "user", "content": f"question {step + 1}"},
        ]
    assert seen_ids > 0


def test_the_checker_sees_each_kind_of_violation() -> None:
    call = {"id": "x" * 41, "type": "function", "function": {"name": "t", "arguments": "[]"}}
    history = [
        Message.model_validate({"role": "user", "content": "hi"}),
        Message.model_validate({"role": "assistant", "tool_calls": [call]}),
        Message.model_validate({"role": "user", "content": "unanswered"}),
    ]
    problems = provider_violations(history)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "an id OpenAI or Anthropic refuses",
        "not answered by the tool messages that follow",
        "arguments are not the JSON text of an object",
    ]
