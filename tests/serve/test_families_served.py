"""Model families end to end: ``agent-hooks serve`` as a child process forwards each family's
pairs as its provider takes them, to a recording upstream on 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_hooks.injection._ids import is_synthetic_call_id
from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.serve.test_proxy import eventually
from tests.servers.fixtures import RecordingServer

CLOCK_HOOK = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "time",
            "tool_name": "current_time",
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 60},
        }
    ],
}
USER = {"role": "user", "content": "What time is it?"}
SIGNATURE = {"google": {"thought_signature": "skip_thought_signature_validator"}}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, _upstream_process: str) -> Iterator[Proxy]:
    workdir = tmp_path_factory.mktemp("families")
    options = ("--upstream", _upstream_process, "--model-family", "my-*=mistral")
    with running_proxy(CLOCK_HOOK, workdir, *options) as running:
        yield running


@pytest.fixture
def upstream(_upstream_process: str) -> RecordingServer:
    server = RecordingServer(_upstream_process)
    server.forget()
    return server


def post(proxy: Proxy, path: str, body: dict[str, Any], conversation: str) -> None:
    headers = {
        "authorization": f"Bearer {CLIENT_KEY}",
        "x-api-key": CLIENT_KEY,
        "anthropic-version": "2023-06-01",
        "x-conversation-id": conversation,
    }
    answer = httpx.post(f"{proxy.url}{path}", json=body, headers=headers, timeout=20)
    assert answer.status_code == 200, answer.text


def forwarded_pair(upstream: RecordingServer) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chat-completions pair of the last request the upstream got (after the user)."""
    messages = upstream.received()[-1]["body"]["messages"]
    assert messages[0] == USER
    call, answer = messages[1], messages[2]
    assert call["tool_calls"][0]["function"]["name"] == "current_time"
    return call, answer


def chat(proxy: Proxy, model: str, conversation: str) -> None:
    post(proxy, "/v1/chat/completions", {"model": model, "messages": [USER]}, conversation)


def test_a_gemini_models_pair_carries_the_documented_thought_signature(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    chat(proxy, "google/gemini-3-pro-preview", "gemini")
    call, answer = forwarded_pair(upstream)
    assert call["tool_calls"][0]["extra_content"] == SIGNATURE
    assert is_synthetic_call_id(call["tool_calls"][0]["id"])
    assert answer["tool_call_id"] == call["tool_calls"][0]["id"]


def test_a_mistral_models_ids_are_the_same_nine_character_aliases_every_turn(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    aliases = []
    for _ in range(2):  # the second turn re-applies the stored, TTL-fresh pair
        chat(proxy, "mistral-large-latest", "mistral")
        call, answer = forwarded_pair(upstream)
        alias = call["tool_calls"][0]["id"]
        assert re.fullmatch(r"[a-zA-Z0-9]{9}", alias)
        assert answer["tool_call_id"] == alias
        assert "extra_content" not in call["tool_calls"][0]
        aliases.append(alias)
    assert aliases[0] == aliases[1]
    # the hook did not run again: a stored pair (the access line follows the answer's last byte)
    assert eventually(lambda: "time:skipped_fresh" in proxy.log() or None)


def test_a_model_family_rule_maps_a_custom_name(proxy: Proxy, upstream: RecordingServer) -> None:
    chat(proxy, "local/My-Model-7b", "custom")
    call, answer = forwarded_pair(upstream)
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", call["tool_calls"][0]["id"])
    assert answer["tool_call_id"] == call["tool_calls"][0]["id"]


def test_an_openai_models_pair_is_forwarded_as_the_hooks_wrote_it(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    chat(proxy, "gpt-5", "openai")
    call, answer = forwarded_pair(upstream)
    assert set(call["tool_calls"][0]) == {"id", "type", "function"}
    assert is_synthetic_call_id(call["tool_calls"][0]["id"])
    assert answer["tool_call_id"] == call["tool_calls"][0]["id"]


def test_mistral_aliases_on_the_responses_and_messages_routes(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    post(proxy, "/v1/responses", {"model": "devstral-small", "input": [USER]}, "responses")
    items = upstream.received()[-1]["body"]["input"]
    call_ids = [item["call_id"] for item in items[1:]]
    assert call_ids[0] == call_ids[1]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", call_ids[0])
    body = {"model": "codestral-latest", "max_tokens": 8, "messages": [USER]}
    post(proxy, "/v1/messages", body, "messages")
    messages = upstream.received()[-1]["body"]["messages"]
    tool_use, tool_result = messages[1]["content"][0], messages[2]["content"][0]
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", tool_use["id"])
    assert tool_result["tool_use_id"] == tool_use["id"]


def test_a_bad_model_family_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text('{"hooks": []}')
    done = subprocess.run(
        [sys.executable, "-m", "agent_hooks.serve", str(manifest), "--model-family", "x*=llama"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "'llama'" in done.stderr
    assert "anthropic, gemini, mistral, openai" in done.stderr


def test_the_echo_model_gets_the_pairs_as_the_hooks_wrote_them(tmp_path: Path) -> None:
    with running_proxy(CLOCK_HOOK, tmp_path) as echo:
        answer = echo.client().chat.completions.create(
            model="mistral-large-latest", messages=[{"role": "user", "content": "hi"}]
        )
    assert (answer.choices[0].message.content or "").startswith("current_time: ")
