"""Secrets in what the proxy relays that is not a successful answer's content (SPEC 16): error
bodies, error events inside a 200 event stream, response headers; as the upstream wrote them,
percent-encoded, and JSON-escaped with ``/`` as ``\\/``. The upstream is a careless real server
on 127.0.0.1 that quotes the credentials it got. And a literal header of a toolset, which a REST
API reflects, reaches neither the upstream nor the store nor the log."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.serve._proxy import Proxy, running_proxy
from tests.servers.fixtures import RecordingServer

UPSTREAM_KEY = "sk-relay/Secret+Key=9f3a0c"
"""The proxy's upstream key: a ``/`` (escaped ``\\/`` by PHP's JSON), a ``+`` and a ``=``
(percent-encoded in a URL)."""
FORMS = {
    "literal": UPSTREAM_KEY,
    "json-escaped": UPSTREAM_KEY.replace("/", "\\/"),
    "percent-encoded": quote(UPSTREAM_KEY, safe=""),
}
USER = {"role": "user", "content": "hi"}
BODIES = {
    "/v1/chat/completions": {"messages": [USER]},
    "/v1/responses": {"input": "hi"},
    "/v1/messages": {"max_tokens": 8, "messages": [USER]},
}
HEADERS = {"authorization": "Bearer client-key-relayed", "anthropic-version": "2023-06-01"}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory, _upstream_process: str) -> Iterator[Proxy]:
    workdir: Path = tmp_path_factory.mktemp("relayed-secrets")
    env = {"AGENT_HOOKS_UPSTREAM_API_KEY": UPSTREAM_KEY}
    options = ("--upstream", _upstream_process)
    with running_proxy({"hooks": []}, workdir, *options, env=env) as running:
        yield running


def post(proxy: Proxy, path: str, model: str, *, stream: bool) -> httpx.Response:
    body: dict[str, Any] = {"model": model, **BODIES[path], "stream": stream}
    return httpx.post(proxy.url + path, json=body, headers=HEADERS, timeout=20)


def leaked(response: httpx.Response) -> list[str]:
    """The forms of the key found in the response's body or headers."""
    relayed = response.text + json.dumps(dict(response.headers))
    return [name for name, form in FORMS.items() if form in relayed]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "event-stream"])
@pytest.mark.parametrize("path", BODIES)
def test_an_error_body_quoting_the_key_in_any_form_is_relayed_scrubbed(
    proxy: Proxy, upstream: RecordingServer, path: str, stream: bool
) -> None:
    response = post(proxy, path, "leaky-forms", stream=stream)
    assert response.status_code == 401
    assert leaked(response) == []
    assert "Incorrect API key provided:" in response.text
    assert "***" in response.headers["x-seen-quoted"]
    assert upstream.received()[-1]["headers"] != {}  # the upstream did get the key


@pytest.mark.parametrize(
    ("path", "model"),
    [
        ("/v1/chat/completions", "leaky-event"),
        ("/v1/responses", "leaky-event"),
        ("/v1/responses", "leaky-failed"),
        ("/v1/messages", "leaky-event"),
    ],
    ids=["chat-error", "responses-error", "responses-failed", "anthropic-error"],
)
def test_an_error_event_in_a_200_stream_quoting_the_key_is_relayed_scrubbed(
    proxy: Proxy, upstream: RecordingServer, path: str, model: str
) -> None:
    """The event reaches the proxy in two chunks split inside the key; the answer's first delta
    before it is relayed as it came."""
    response = post(proxy, path, model, stream=True)
    assert response.status_code == 200
    assert leaked(response) == []
    assert "Incorrect API key provided:" in response.text
    assert "***" in response.text
    assert "Hello" in response.text  # the delta before the error event


def test_a_literal_header_value_a_tool_echoes_reaches_neither_the_model_nor_the_store(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """SPEC 16: a header value written in the manifest in clear is a secret: the REST API that
    reflects its request headers hands the upstream, the stored pairs and the log ``***``."""
    literal = f"lit-serve-{uuid.uuid4().hex}"
    toolset = {
        "type": "rest-api",
        "name": "debug",
        "base_url": rest_server.url,
        "headers": {"api-key": literal},
        "tools": [{"name": "echo", "path": "/echo-headers"}],
    }
    hook = {"kind": "tool_call", "event": "on_request_start", "toolset_name": "debug",
            "tool_name": "echo"}  # fmt: skip
    manifest = {"toolsets": [toolset], "hooks": [hook]}
    with running_proxy(manifest, tmp_path, "--upstream", upstream.url) as proxy:
        response = post(proxy, "/v1/chat/completions", "m", stream=False)
        assert response.status_code == 200
        log = proxy.log()
    assert rest_server.received()[0]["headers"]["api-key"] == literal  # the API did get it
    (received,) = upstream.received()
    assert '\\"api-key\\":\\"***\\"' in received["text"]
    assert literal not in received["text"]
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("state.db*"))
    assert stored
    assert literal.encode() not in stored
    assert literal not in log
