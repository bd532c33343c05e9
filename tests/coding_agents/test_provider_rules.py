"""The scripted upstream's rule checks on small bodies: each rule of PROVIDER-RULES.md refuses
the history that breaks it and accepts the one that keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.coding_agents.provider_rules import (
    Issued,
    chat_violations,
    messages_violations,
    responses_violations,
)

USER = {"role": "user", "content": "hi"}
BETA = "claude-code-20250219,mid-conversation-system-2026-04-07"


def _call(call_id: str, **extra: Any) -> dict[str, Any]:
    function = {"name": "f", "arguments": "{}"}
    return {"id": call_id, "type": "function", "function": function, **extra}


def _chat(*messages: dict[str, Any], model: str = "gpt-5") -> dict[str, Any]:
    return {"model": model, "messages": [USER, *messages]}


def _asks(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _answers(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


GEMINI_SIGNATURE = {"google": {"thought_signature": "skip_thought_signature_validator"}}


@pytest.mark.parametrize(
    ("body", "violation"),
    [
        pytest.param(_chat(_asks(_call("c" * 40)), _answers("c" * 40)), None, id="id-of-40"),
        pytest.param(
            _chat(_asks(_call("c" * 41)), _answers("c" * 41)), "longer than 40", id="id-41"
        ),
        pytest.param(
            _chat(_asks(_call("a")), USER, _answers("a")), "before the results", id="late"
        ),
        pytest.param(_chat(_answers("a")), "answers no preceding", id="orphan-result"),
        pytest.param(_chat(_asks(_call("a"))), "ends before the results", id="unanswered"),
        pytest.param(
            _chat(_asks(_call("a"), _call("b")), _answers("a"), _asks(_call("x")), _answers("b")),
            "before the results",
            id="pair-inside-a-parallel-group",
        ),
        pytest.param(
            _chat(_asks(_call("a"), _call("b")), _answers("b"), _answers("a")),
            None,
            id="parallel-group",
        ),
        pytest.param(
            _chat(_asks(_call("abcDEF123")), _answers("abcDEF123"), model="mistral-large-latest"),
            None,
            id="mistral-9",
        ),
        pytest.param(
            _chat(_asks(_call("ah_1234")), _answers("ah_1234"), model="openrouter/devstral-2"),
            "not 9 characters",
            id="mistral-ah-id",
        ),
        pytest.param(
            _chat(_asks(_call("a")), _answers("a"), model="gemini-3-pro-preview"),
            "no thought signature",
            id="gemini-unsigned",
        ),
        pytest.param(
            _chat(
                _asks(_call("a", extra_content=GEMINI_SIGNATURE), _call("b")),
                _answers("a"),
                _answers("b"),
                model="google/gemini-3-pro-preview",
            ),
            None,
            id="gemini-first-of-parallel-signed",
        ),
        pytest.param(
            {"model": "gemini-3-pro", "messages": [USER, _asks(_call("a")), _answers("a"), USER]},
            None,
            id="gemini-earlier-turn-unsigned",
        ),
    ],
)
def test_chat_completions_rules(body: dict[str, Any], violation: str | None) -> None:
    _assert_found(chat_violations(body), violation)


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
INPUT = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
ANSWER = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "k"}]}
SYNTHETIC_CALL = {"type": "function_call", "call_id": "ah_1", "name": "g", "arguments": "{}"}
SYNTHETIC_OUTPUT = {"type": "function_call_output", "call_id": "ah_1", "output": "ok"}


@pytest.mark.parametrize(
    ("items", "violation"),
    [
        pytest.param([INPUT, REASONING, CALL, OUTPUT], None, id="reasoning-call-output"),
        pytest.param([INPUT, OUTPUT], "has no call", id="output-without-call"),
        pytest.param([INPUT, OUTPUT, CALL], "has no call", id="output-before-call"),
        pytest.param([INPUT, REASONING, ANSWER], None, id="reasoning-then-message"),
        pytest.param([INPUT, REASONING], "not followed by its item", id="reasoning-last"),
        pytest.param(
            [INPUT, {**REASONING, "encrypted_content": "f"}, CALL, OUTPUT],
            "came back modified",
            id="reasoning-modified",
        ),
        pytest.param(
            [INPUT, REASONING, SYNTHETIC_OUTPUT, CALL, OUTPUT],
            "not followed by its item",
            id="pair-output-after-reasoning",
        ),
        pytest.param(
            [INPUT, REASONING, SYNTHETIC_CALL, SYNTHETIC_OUTPUT, CALL, OUTPUT],
            "lacks its reasoning",
            id="pair-between-reasoning-and-its-call",
        ),
        pytest.param(
            [INPUT, SYNTHETIC_CALL, SYNTHETIC_OUTPUT, REASONING, CALL, OUTPUT],
            None,
            id="pair-before-reasoning",
        ),
    ],
)
def test_responses_rules(items: list[dict[str, Any]], violation: str | None) -> None:
    issued = Issued(reasoning_of={"fc_1": "rs_1"}, encrypted={"rs_1": "e"})
    _assert_found(responses_violations({"model": "gpt-5", "input": items}, issued), violation)


TOOLS = [{"name": "f", "input_schema": {"type": "object"}}]


def _use(use_id: str = "toolu_1", name: str = "f") -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": {}}


def _result(use_id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": "ok"}


def _thinking(signature: str = "sig-1") -> dict[str, Any]:
    return {"type": "thinking", "thinking": "hm", "signature": signature}


def _says(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def _hears(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


TEXT = {"type": "text", "text": "more"}


def _messages(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": "claude-opus-4-8", "tools": TOOLS, "messages": [USER, *messages], **fields}


ADAPTIVE = {"thinking": {"type": "adaptive"}}
MANUAL = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


@pytest.mark.parametrize(
    ("body", "violation"),
    [
        pytest.param(_messages(_says(_use()), _hears(_result())), None, id="tool-loop"),
        pytest.param(
            _messages(_says(_use("toolu.1")), _hears(_result("toolu.1"))),
            "does not match",
            id="id-charset",
        ),
        pytest.param(
            _messages(_says(_use(name="n" * 65)), _hears(_result())),
            "not a valid name",
            id="name-length",
        ),
        pytest.param(
            _messages(_says(_use()), USER, _hears(_result())), "answers []", id="not-next-message"
        ),
        pytest.param(
            _messages(_says(_use()), _hears(TEXT, _result())),
            "content before its tool_result",
            id="result-not-first",
        ),
        pytest.param(_messages(_hears(_result())), "follows no tool_use", id="orphan-result"),
        pytest.param(_messages(_says(_use())), "nobody answered", id="unanswered"),
        pytest.param(
            {"model": "claude", "messages": [USER, _says(_use()), _hears(_result())]},
            "declares no tools",
            id="tools-undeclared",
        ),
        pytest.param(
            _messages({"role": "system", "content": "be brief"}),
            "without the beta",
            id="system-role-without-beta",
        ),
        pytest.param(
            _messages(_says(_thinking(), _use()), _hears(_result()), **ADAPTIVE),
            None,
            id="adaptive-signed",
        ),
        pytest.param(
            _messages(_says(_use()), _hears(_result()), **ADAPTIVE),
            "a final `assistant` message must start with a thinking block",
            id="adaptive-tool-use-first",
        ),
        pytest.param(
            _messages(
                _says(_thinking(), _use()),
                _hears(_result()),
                _says(_use("ah_1")),
                _hears(_result("ah_1")),
                **MANUAL,
            ),
            "but found `tool_use`",
            id="pair-appended-in-the-cycle",
        ),
        pytest.param(
            _messages(_says(_thinking("forged"), _use()), _hears(_result()), **MANUAL),
            "never issued",
            id="unknown-signature",
        ),
        pytest.param(
            _messages(
                _says({**_thinking(), "thinking": "edited"}, _use()), _hears(_result()), **MANUAL
            ),
            "text was modified",
            id="thinking-modified",
        ),
        pytest.param(
            _messages(_says(_use()), _hears(_result()), _says(TEXT), USER, **ADAPTIVE),
            None,
            id="earlier-turn-without-thinking",
        ),
        pytest.param(
            _messages(_says(_use()), _hears(_result()), thinking={"type": "disabled"}),
            None,
            id="thinking-disabled",
        ),
        pytest.param(
            _messages(tool_choice={"type": "any"}, **MANUAL),
            "tool_choice 'any' with manual thinking",
            id="manual-thinking-forced-tool",
        ),
        pytest.param(
            _messages(*[_hears({**TEXT, "cache_control": {"type": "ephemeral"}})] * 5),
            "5 cache_control breakpoints",
            id="five-breakpoints",
        ),
    ],
)
def test_messages_rules(body: dict[str, Any], violation: str | None) -> None:
    _assert_found(messages_violations(body, "", Issued(thoughts={"sig-1": "hm"})), violation)


def test_a_system_role_message_is_accepted_with_its_beta() -> None:
    body = _messages({"role": "system", "content": "be brief"})
    assert messages_violations(body, BETA, Issued()) == []


def _assert_found(found: list[str], violation: str | None) -> None:
    if violation is None:
        assert found == []
    else:
        assert any(violation in line for line in found), found
