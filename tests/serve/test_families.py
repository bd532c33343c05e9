"""Model families: which rules a request's model follows, and what they do to a pair."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from agent_hooks.serve._dialects import ANTHROPIC, CHAT, RESPONSES, RenderContext
from agent_hooks.serve._families import (
    FAMILIES,
    FamilyRule,
    for_family,
    mistral_alias,
    model_family,
)

CALL_ID = "ah_0123abcd_a1b2c3_t65f00000"
CALL = {"id": CALL_ID, "type": "function", "function": {"name": "clock", "arguments": "{}"}}
ASSISTANT = {"role": "assistant", "tool_calls": [CALL]}
TOOL = {"role": "tool", "tool_call_id": CALL_ID, "content": "12:00"}
USER = {"role": "user", "content": "What time is it?"}
SIGNATURE = {"google": {"thought_signature": "skip_thought_signature_validator"}}


def base62_prefix(text: str, digits: int = 9) -> str:
    """SPEC 15's alias computed independently: SHA-256 as hex, big-endian, base 62."""
    alphabet = "0123456789" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "abcdefghijklmnopqrstuvwxyz"
    number = int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)
    out = ""
    while number > 0:
        out = alphabet[number % 62] + out
        number //= 62
    return out[:digits]


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "anthropic"),
        ("anthropic/claude-opus-4", "anthropic"),
        ("gemini-3-pro-preview", "gemini"),
        ("google/Gemini-2.5-flash", "gemini"),
        ("mistral-large-latest", "mistral"),
        ("codestral-2508", "mistral"),
        ("magistral-medium", "mistral"),
        ("ministral-8b", "mistral"),
        ("devstral-small", "mistral"),
        ("openrouter/mistralai/pixtral-large", "mistral"),
        ("gpt-5", "openai"),
        ("my-claude", "openai"),
        ("", "openai"),
        (None, "openai"),
    ],
)
def test_the_name_after_the_last_slash_picks_the_family(model: str | None, family: str) -> None:
    assert model_family(model) == family


def test_rules_come_first_in_order_and_match_case_insensitively() -> None:
    rules = [FamilyRule.parse("My-*=mistral"), FamilyRule.parse("my-gem*=gemini")]
    assert model_family("vendor/MY-GEMMA", rules) == "mistral"  # the first match wins
    assert model_family("claude-local", [FamilyRule.parse("claude-*=openai")]) == "openai"
    assert model_family("claude-local", rules) == "anthropic"  # no rule: the built-in ones
    assert model_family("x/other", [FamilyRule.parse("o?her=GEMINI")]) == "gemini"


@pytest.mark.parametrize("text", ["my-*=llama", "my-*", "=mistral", "my-*="])
def test_a_bad_rule_names_the_value(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        FamilyRule.parse(text)


def test_an_unknown_family_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="anthropic, gemini, mistral, openai"):
        FamilyRule.parse("x*=llama")
    assert FAMILIES == ("anthropic", "gemini", "mistral", "openai")


@pytest.mark.parametrize(
    "call_id", [CALL_ID, "ah_ffffffff_000000", "ah_00000000_000000_s0a1b2c3d4e"]
)
def test_the_mistral_alias_is_the_first_nine_base62_digits_of_the_ids_sha256(
    call_id: str,
) -> None:
    alias = mistral_alias(call_id)
    assert alias == base62_prefix(call_id)
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", alias)
    assert mistral_alias(call_id) == alias  # the same every turn


def test_known_aliases_are_pinned() -> None:
    assert mistral_alias(CALL_ID) == "THnznGgGH"
    assert mistral_alias("abc") == "iDUK5mbjE"


def test_mistral_gets_aliases_in_the_call_and_its_answer() -> None:
    alias = mistral_alias(CALL_ID)
    assert for_family(ASSISTANT, "mistral") == {
        "role": "assistant",
        "tool_calls": [{**CALL, "id": alias}],
    }
    assert for_family(TOOL, "mistral") == {**TOOL, "tool_call_id": alias}
    assert ASSISTANT["tool_calls"][0]["id"] == CALL_ID  # never mutated


def test_gemini_gets_the_documented_signature_on_the_call_only() -> None:
    assert for_family(ASSISTANT, "gemini") == {
        "role": "assistant",
        "tool_calls": [{**CALL, "extra_content": SIGNATURE}],
    }
    assert for_family(TOOL, "gemini") is TOOL
    assert "extra_content" not in CALL


@pytest.mark.parametrize("family", ["openai", "anthropic"])
def test_openai_and_anthropic_get_the_pair_as_written(family: Any) -> None:
    assert for_family(ASSISTANT, family) is ASSISTANT
    assert for_family(TOOL, family) is TOOL


def test_chat_renders_only_synthetic_messages_for_the_family() -> None:
    own = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    client_call = {"role": "assistant", "tool_calls": [own]}
    client_answer = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
    body = {"model": "mistral-small", "messages": [USER, client_call, client_answer]}
    parsed = CHAT.parse(json.dumps(body).encode())
    history = [USER, ASSISTANT, TOOL, client_call, client_answer]
    sent = json.loads(parsed.render(history, RenderContext(family="mistral")))["messages"]
    alias = mistral_alias(CALL_ID)
    assert sent == [
        USER,
        {"role": "assistant", "tool_calls": [{**CALL, "id": alias}]},
        {**TOOL, "tool_call_id": alias},
        client_call,
        client_answer,
    ]
    gemini = json.loads(parsed.render(history, RenderContext(family="gemini")))["messages"]
    assert gemini[1]["tool_calls"][0]["extra_content"] == SIGNATURE
    assert "extra_content" not in gemini[3]["tool_calls"][0]


def test_responses_and_anthropic_render_aliased_ids_for_mistral() -> None:
    alias = mistral_alias(CALL_ID)
    context = RenderContext(family="mistral")
    responses = RESPONSES.parse(json.dumps({"model": "m", "input": [USER]}).encode())
    items = json.loads(responses.render([USER, ASSISTANT, TOOL], context))["input"]
    assert [item.get("call_id") for item in items] == [None, alias, alias]
    body = {"model": "m", "max_tokens": 8, "messages": [USER]}
    anthropic = ANTHROPIC.parse(json.dumps(body).encode())
    messages = json.loads(anthropic.render([USER, ASSISTANT, TOOL], context))["messages"]
    assert messages[1]["content"][0]["id"] == alias
    assert messages[2]["content"][0]["tool_use_id"] == alias
