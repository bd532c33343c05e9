"""``agent-hooks validate`` on mutated manifests never raises and always exits 0 or 2.

Mutations start from valid manifests (every toolset type, hooks with every option) and break them
the way people do: a value of the wrong type, a deleted or misspelt key, an extra key, a cut-off
file, a stray character. Whatever comes in, the command answers with ``PATH: message`` lines.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agent_hooks.cli import main

VALID_MANIFESTS: list[dict[str, Any]] = [
    {
        "$schema": "./generated-app-schema.json",
        "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "time",
                "tool_name": "current_time",
                "frequency": "append_if_changed",
                "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
            }
        ],
    },
    {
        "toolsets": [
            {
                "type": "mcp",
                "name": "memory_server",
                "timeout_seconds": 5,
                "allowed_tools": ["get_memories"],
                "fallback": {"kind": "error_message", "template": "down: {error}"},
                "server": {
                    "transport": "stdio",
                    "command": "python",
                    "args": ["server.py"],
                    "env": {"TOKEN": {"env": "MEMORY_TOKEN"}, "MODE": "test"},
                    "cwd": ".",
                },
            },
            {
                "type": "mcp",
                "name": "remote",
                "server": {
                    "transport": "streamable_http",
                    "url": "http://127.0.0.1:8000/mcp",
                    "headers": {"Authorization": {"env": "REMOTE_TOKEN"}},
                },
            },
        ],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "toolset_name": "memory_server",
                "tool_name": "get_memories",
                "arguments": {"user_id": "u1", "limit": 3},
                "frequency": "always",
            }
        ],
    },
    {
        "toolsets": [
            {
                "type": "rest-api",
                "name": "prefs",
                "base_url": "https://prefs.example.com",
                "headers": {"X-Key": "k"},
                "tools": [
                    {
                        "name": "get",
                        "method": "GET",
                        "path": "/users/{user_id}",
                        "description": "preferences",
                        "parameters": {"type": "object", "properties": {}},
                    }
                ],
            },
            {
                "type": "deployment",
                "name": "dial",
                "endpoint": "https://dial.example.com",
                "api_key_env": "DIAL_API_KEY",
                "tools": [{"name": "Summarizer", "deployment": "gpt-4o-mini"}],
            },
        ],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "toolset_name": "prefs",
                "tool_name": "get",
                "refresh_condition": None,
            },
            {"kind": "tool_call", "event": "on_request_start", "tool_name": "Summarizer"},
        ],
    },
]

LINE = re.compile(r"\S[^\n]*: \S[^\n]*")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def containers(node: Any) -> Iterator[dict[str, Any] | list[Any]]:
    """Every object and array in the manifest, the root included."""
    if isinstance(node, dict | list):
        yield node
        for child in node.values() if isinstance(node, dict) else node:
            yield from containers(child)


@st.composite
def mutated_manifests(draw: st.DrawFn) -> str:
    manifest = json.loads(json.dumps(draw(st.sampled_from(VALID_MANIFESTS))))
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(list(containers(manifest))))
        keys: list[Any] = list(target) if isinstance(target, dict) else list(range(len(target)))
        action = draw(st.sampled_from(["replace", "delete", "add", "misspell"]))
        if action == "add" or not keys:
            if isinstance(target, dict):
                target[draw(st.text(max_size=12))] = draw(json_values)
            else:
                target.append(draw(json_values))
            continue
        key = draw(st.sampled_from(keys))
        if action == "replace":
            target[key] = draw(json_values)
        elif action == "delete":
            del target[key]
        elif isinstance(target, dict):
            target[key[:-1] or "x"] = target.pop(key)
    text = json.dumps(manifest, indent=draw(st.sampled_from([None, 2])))
    damage = draw(st.sampled_from(["none", "truncate", "insert"]))
    position = draw(st.integers(0, len(text)))
    if damage == "truncate":
        text = text[:position]
    elif damage == "insert":
        text = text[:position] + draw(st.text(min_size=1, max_size=2)) + text[position:]
    return text


@pytest.fixture(scope="module")
def manifest_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "manifest.json"


def validate(path: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", str(path)])
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue()


def test_the_seed_manifests_are_valid(manifest_file: Path) -> None:
    for manifest in VALID_MANIFESTS:
        manifest_file.write_text(json.dumps(manifest))
        assert validate(manifest_file) == (0, "")


@settings(
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=mutated_manifests())
def test_validate_never_raises_and_answers_with_exit_0_or_path_lines_and_exit_2(
    manifest_file: Path, text: str
) -> None:
    manifest_file.write_text(text, encoding="utf-8", errors="surrogatepass")

    code, out = validate(manifest_file)

    event(f"exit {code}")
    assert code in (0, 2)
    if code == 0:
        assert out == ""
    else:
        assert out.endswith("\n")
        lines = out.splitlines()
        assert lines
        assert all(LINE.fullmatch(line) for line in lines), lines
