"""Hostile bodies, second round (SPEC 16), on every route: a body that is not UTF-8 is a 400 in
the dialect's shape and never reaches the upstream; no field of any type gives a 500. The app runs
in process against the real recording upstream (or the echo model), with hooks on the REST test
API, so every step a body can reach runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.serve._dialects import dialect_manifest
from tests.serve._in_process import in_process_proxy
from tests.servers.fixtures import RecordingServer

HEADERS = {
    "authorization": "Bearer hostile-bodies-client",
    "content-type": "application/json",
    "anthropic-version": "2023-06-01",
}
ROUTES = {
    "chat": "/v1/chat/completions",
    "dial": "/openai/deployments/gpt/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
    "count_tokens": "/v1/messages/count_tokens",
}
MARK = b"@TEXT@"
"""Where a template below puts the bytes under test: inside a string."""
TEMPLATES = {
    "chat": b'{"model": "m", "messages": [{"role": "user", "content": "hi @TEXT@"}]}',
    "dial": b'{"messages": [{"role": "user", "content": "hi @TEXT@"}]}',
    "responses": b'{"model": "m", "input": "hi @TEXT@"}',
    "messages": (
        b'{"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi @TEXT@"}]}'
    ),
    "count_tokens": b'{"model": "m", "messages": [{"role": "user", "content": "hi @TEXT@"}]}',
}


@pytest.fixture(scope="module")
def upstream_server(_upstream_process: str) -> RecordingServer:
    return RecordingServer(_upstream_process)


@pytest.fixture(scope="module")
def proxy(
    tmp_path_factory: pytest.TempPathFactory, _rest_process: str, upstream_server: RecordingServer
) -> Iterator[TestClient]:
    workdir: Path = tmp_path_factory.mktemp("hostile-bodies")
    manifest = dialect_manifest(_rest_process)
    with in_process_proxy(manifest, workdir, upstream=upstream_server.url) as client:
        yield client


CLOCK_HOOKS = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "fresh",
            "tool_name": "current_time",
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
        },
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "changed",
            "tool_name": "current_time",
            "frequency": "append_if_changed",
        },
        {
            "kind": "tool_call",
            "event": "on_completion",
            "name": "done",
            "tool_name": "current_time",
        },
    ],
}
"""Hooks of every frequency and event on an in-process tool: thousands of bodies in seconds."""


@pytest.fixture(scope="module")
def proxy_echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """Hooks in front of the echo model, which answers any body it gets."""
    workdir: Path = tmp_path_factory.mktemp("hostile-fields")
    with in_process_proxy(CLOCK_HOOKS, workdir) as client:
        yield client


def error_of(response: Any, route: str) -> tuple[int, str]:
    """The status and error type, after checking the body has the dialect's error shape."""
    body = response.json()
    if route in ("messages", "count_tokens"):
        assert body["type"] == "error"
        assert set(body["error"]) == {"type", "message"}
    else:
        assert set(body["error"]) == {"message", "type", "code"}
    return response.status_code, body["error"]["type"]


NOT_UTF8 = {
    "encoded-high-surrogate": b"\xed\xa0\x80",
    "encoded-low-surrogate": b"\xed\xbf\xbf",
    "encoded-surrogate-pair": b"\xed\xa0\xbd\xed\xb8\x80",
    "ff-byte": b"\xff",
    "latin-1": b"caf\xe9",
    "overlong-slash": b"\xc0\xaf",
    "truncated-euro": b"\xe2\x82",
    "lone-continuation": b"\x80",
    "beyond-u10ffff": b"\xf4\x90\x80\x80",
}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("text", NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_a_body_that_is_not_utf8_is_a_400_and_never_forwarded(
    proxy: TestClient, upstream_server: RecordingServer, route: str, text: bytes
) -> None:
    upstream_server.forget()
    response = proxy.post(
        ROUTES[route], content=TEMPLATES[route].replace(MARK, text), headers=HEADERS
    )
    assert error_of(response, route) == (400, "invalid_request_error")
    assert "UTF-8" in response.text
    assert upstream_server.received() == []


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_json_in_another_unicode_encoding_is_a_400_too(
    proxy: TestClient, upstream_server: RecordingServer, route: str, encoding: str
) -> None:
    """RFC 8259: JSON exchanged between systems is UTF-8; Python's parser would take these."""
    upstream_server.forget()
    body = TEMPLATES[route].replace(MARK, b"there").decode().encode(encoding)
    response = proxy.post(ROUTES[route], content=body, headers=HEADERS)
    assert error_of(response, route) == (400, "invalid_request_error")
    assert upstream_server.received() == []


@pytest.mark.parametrize("route", ROUTES)
def test_a_lone_surrogate_escape_is_a_400_on_every_route(
    proxy: TestClient, upstream_server: RecordingServer, route: str
) -> None:
    upstream_server.forget()
    response = proxy.post(
        ROUTES[route], content=TEMPLATES[route].replace(MARK, b"\\ud800"), headers=HEADERS
    )
    assert error_of(response, route) == (400, "invalid_request_error")
    assert "surrogate" in response.text
    assert upstream_server.received() == []


@pytest.mark.parametrize("route", ROUTES)
def test_utf8_with_a_byte_order_mark_is_served_and_forwarded_without_it(
    proxy: TestClient, upstream_server: RecordingServer, route: str
) -> None:
    """RFC 8259 lets a parser ignore a BOM; the upstream gets plain UTF-8."""
    upstream_server.forget()
    body = b"\xef\xbb\xbf" + TEMPLATES[route].replace(MARK, "caf\u00e9 \U0001f600".encode())
    response = proxy.post(ROUTES[route], content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    (received,) = upstream_server.received()
    assert not received["text"].startswith("\ufeff")
    assert "caf\u00e9 \U0001f600" in json.dumps(received["body"], ensure_ascii=False)


# No field of any type gives a 500: valid bodies of every dialect, one field (or a few) at a time
# replaced by a value of each JSON type or deleted. The echo model answers (it lists the pairs it
# got, so the pairs are rendered for it), the hooks run on the clock and every request names one
# conversation, so stored pairs are re-applied to the mutated bodies too.

TEXT = {"type": "text", "text": "r"}
OUTPUT_TEXT = {"type": "output_text", "text": "a"}
CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"q": 1}'}}
VALID: dict[str, list[dict[str, Any]]] = {
    "chat": [
        {
            "model": "m",
            "user": "u1",
            "stream": False,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": None, "tool_calls": [CALL]},
                {"role": "tool", "tool_call_id": "call_1", "content": "r"},
                {"role": "user", "content": "go on", "name": "bob"},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "stream_options": {"include_usage": True},
        }
    ],
    "responses": [
        {
            "model": "m",
            "user": "u1",
            "instructions": "be brief",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "message", "role": "assistant", "content": [OUTPUT_TEXT]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"},
                {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "r"},
                {"role": "user", "content": "go on"},
            ],
            "store": False,
        },
        {
            "model": "m",
            "input": "hi",
            "previous_response_id": "resp_1",
            "conversation": {"id": "conv_1"},
            "stream": False,
        },
    ],
    "messages": [
        {
            "model": "m",
            "max_tokens": 8,
            "system": [{"type": "text", "text": "be brief"}],
            "metadata": {"user_id": "u1"},
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "t", "signature": "s"},
                        {"type": "text", "text": "a"},
                        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"q": 1}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [TEXT]},
                        {"type": "text", "text": "go on"},
                    ],
                },
            ],
            "tools": [{"name": "f", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "auto"},
            "stream": False,
        },
        {
            "model": "m",
            "max_tokens": 8,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        },
    ],
}  # fmt: skip
VALID["dial"] = [{key: v for key, v in body.items() if key != "model"} for body in VALID["chat"]]
VALID["count_tokens"] = VALID["messages"]
CONVERSATION = {**HEADERS, "x-conversation-id": "hostile-fields"}

Path_ = tuple[str | int, ...]
REMOVE = object()
"""A mutation that deletes the field (an array element is deleted too)."""


def paths(value: Any, at: Path_ = ()) -> list[Path_]:
    """Every field and element of ``value``, containers before what they hold."""
    if not isinstance(value, dict | list):
        return []
    children: Any = value.items() if isinstance(value, dict) else enumerate(value)
    found: list[Path_] = []
    for key, child in children:
        found += [(*at, key), *paths(child, (*at, key))]
    return found


def mutated(body: dict[str, Any], changes: list[tuple[Path_, Any]]) -> dict[str, Any]:
    """A deep copy of ``body`` with each change applied in turn (a path that an earlier change
    took away is skipped)."""
    copy: dict[str, Any] = json.loads(json.dumps(body))
    for path, value in changes:
        parent: Any = copy
        for key in path[:-1]:
            try:
                parent = parent[key]
            except (KeyError, IndexError, TypeError):
                break
        else:
            last = path[-1]
            if isinstance(parent, dict) and isinstance(last, str):
                if value is REMOVE:
                    parent.pop(last, None)
                else:
                    parent[last] = value
            elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
                if value is REMOVE:
                    del parent[last]
                else:
                    parent[last] = value
    return copy


ONE_OF_EACH_TYPE = [None, True, 0, 1.5, 2**70, "", "user", [], [1], {}, {"type": "text"}, REMOVE]
"""A value of every JSON type (null, bool, int, float, a big int, string, array, object), a few
of them the words the dialects look for, and the deletion of the field."""


def assert_served_or_refused(response: Any, route: str) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error_of(response, route)


def every_field_of_every_body() -> list[tuple[str, int, Path_]]:
    return [
        (route, index, path)
        for route, bodies in VALID.items()
        for index, body in enumerate(bodies)
        for path in paths(body)
    ]


@pytest.mark.parametrize(
    ("route", "index", "path"),
    every_field_of_every_body(),
    ids=[f"{r}{i}:{'.'.join(map(str, p))}" for r, i, p in every_field_of_every_body()],
)
def test_no_field_of_any_type_gives_a_server_error(
    proxy_echo: TestClient, route: str, index: int, path: Path_
) -> None:
    for value in ONE_OF_EACH_TYPE:
        body = mutated(VALID[route][index], [(path, value)])
        response = proxy_echo.post(ROUTES[route], json=body, headers=CONVERSATION)
        assert_served_or_refused(response, route)


_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=2**63, max_value=2**300)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
    | st.sampled_from(["user", "assistant", "text", "message", "function_call", "tool_use"]),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
) | st.just(REMOVE)  # fmt: skip


@st.composite
def hostile_bodies(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A valid body of some route with one to three fields replaced or deleted."""
    route = draw(st.sampled_from(sorted(VALID)))
    body = draw(st.sampled_from(VALID[route]))
    where = st.sampled_from(paths(body))
    changes = draw(st.lists(st.tuples(where, _VALUE), min_size=1, max_size=3))
    return route, mutated(body, changes)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=hostile_bodies())
def test_bodies_with_fields_of_any_type_never_give_a_server_error(
    proxy_echo: TestClient, case: tuple[str, dict[str, Any]]
) -> None:
    route, body = case
    response = proxy_echo.post(ROUTES[route], json=body, headers=CONVERSATION)
    assert_served_or_refused(response, route)
