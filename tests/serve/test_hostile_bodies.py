"""Hostile bodies, second round (SPEC 16), on every route: a body that is not UTF-8 is a 400 in
the dialect's shape and never reaches the upstream. The app runs in process against the real
recording upstream, with a hook on the REST test API, so every step a body can reach runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
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
