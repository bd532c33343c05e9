"""``--max-inflight-bytes`` end to end (SPEC 16): while the bodies held at once fill the bound,
a new request is a 503 in its dialect's shape; room frees when a request's answer is complete,
and nothing stays counted after errors, disconnects and streams."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.serve._proxy import Proxy, running_proxy
from tests.servers.fixtures import RecordingServer

LIMIT = 10_000
HELD_BYTES = 6_000
"""Two such bodies do not fit in :data:`LIMIT`; one does."""
ROOM_SECONDS = 10.0
"""How long a request that ended may take to give its bytes back (its handler winds down)."""
ANTHROPIC_HEADERS = {"anthropic-version": "2023-06-01"}

ROUTES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "chat": ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}, {}),
    "responses": ("/v1/responses", {"input": "hi"}, {}),
    "anthropic": (
        "/v1/messages",
        {"max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]},
        ANTHROPIC_HEADERS,
    ),
}


@pytest.fixture
def proxy(tmp_path: Path, upstream: RecordingServer) -> Iterator[Proxy]:
    """A proxy whose bound holds one body of the largest size allowed (serve refuses less)."""
    limits = ("--max-inflight-bytes", str(LIMIT), "--max-body-bytes", str(LIMIT))
    with running_proxy({"hooks": []}, tmp_path, "--upstream", upstream.url, *limits) as running:
        yield running


def sized(fields: dict[str, Any], size: int, **more: Any) -> bytes:
    """A body of exactly ``size`` bytes: ``fields`` and ``more`` padded with a field the
    upstream ignores."""
    body = {**fields, **more, "padding": ""}
    short = size - len(json.dumps(body).encode())
    assert short >= 0
    return json.dumps({**body, "padding": "x" * short}).encode()


def post(proxy: Proxy, route: str, content: bytes | Iterator[bytes]) -> httpx.Response:
    path, _, headers = ROUTES[route]
    return httpx.post(
        f"{proxy.url}{path}",
        content=content,
        headers={"content-type": "application/json", **headers},
        timeout=20,
    )


def error_shape(route: str, response: httpx.Response) -> Any:
    body = response.json()
    if route == "anthropic":
        assert body["type"] == "error"
        return body["error"]["type"]
    assert set(body["error"]) == {"message", "type", "code"}
    return body["error"]["type"], body["error"]["code"]


@contextmanager
def held_in_flight(proxy: Proxy, upstream: RecordingServer, route: str) -> Iterator[None]:
    """A streamed request of :data:`HELD_BYTES` on ``route``, its answer held by the upstream
    until the block ends (then released and read to its end)."""
    path, fields, headers = ROUTES[route]
    with httpx.stream(
        "POST",
        f"{proxy.url}{path}",
        content=sized(fields, HELD_BYTES, model="gated", stream=True),
        headers={"content-type": "application/json", **headers},
        timeout=20,
    ) as stream:
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data:"))  # held upstream now
        yield
        httpx.post(f"{upstream.url}/_release").raise_for_status()
        list(lines)


def eventually_ok(proxy: Proxy, route: str, content: bytes) -> httpx.Response:
    """The answer to ``content`` once it is not a 503 (a request that just ended gives its
    bytes back when its handler has returned), within :data:`ROOM_SECONDS`."""
    deadline = time.monotonic() + ROOM_SECONDS
    while True:
        response = post(proxy, route, content)
        if response.status_code != 503 or time.monotonic() > deadline:
            return response
        time.sleep(0.05)  # paces the retries


@pytest.mark.parametrize(
    ("route", "shape"),
    [
        ("chat", ("server_error", "overloaded")),
        ("responses", ("server_error", "overloaded")),
        ("anthropic", "overloaded_error"),
    ],
)
def test_a_request_beyond_the_bodies_in_flight_is_503_in_its_dialect_until_room_is_free(
    proxy: Proxy, upstream: RecordingServer, route: str, shape: Any
) -> None:
    second = sized(ROUTES[route][1], HELD_BYTES, model="m")
    with held_in_flight(proxy, upstream, route):
        refused = post(proxy, route, second)
        assert refused.status_code == 503
        assert error_shape(route, refused) == shape
        assert refused.headers["retry-after"] == "1"  # the SDKs retry after what it says
    assert eventually_ok(proxy, route, second).status_code == 200


def test_a_declared_body_is_refused_before_it_is_read_and_a_chunked_one_as_it_comes(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    no_room = sized(ROUTES["chat"][1], HELD_BYTES, model="m")
    with held_in_flight(proxy, upstream, "chat"):
        assert post(proxy, "chat", no_room).status_code == 503
        chunks = iter([no_room[at : at + 1000] for at in range(0, len(no_room), 1000)])
        assert post(proxy, "chat", chunks).status_code == 503
    assert [entry["body"]["model"] for entry in upstream.received()] == ["gated"]


def test_nothing_stays_counted_after_errors_disconnects_and_streams(
    proxy: Proxy, upstream: RecordingServer
) -> None:
    fields = ROUTES["chat"][1]
    assert post(proxy, "chat", b"{oops").status_code == 400
    assert post(proxy, "chat", sized(fields, HELD_BYTES, model="teapot")).status_code == 418
    assert post(proxy, "chat", sized(fields, HELD_BYTES, model="broken")).status_code == 502
    streamed = sized(fields, HELD_BYTES, model="m", stream=True)
    assert b"[DONE]" in post(proxy, "chat", streamed).content
    assert post(proxy, "chat", sized(fields, LIMIT + 1, model="m")).status_code == 413
    left = sized(fields, HELD_BYTES, model="hold", stream=True)
    with httpx.stream(
        "POST", f"{proxy.url}/v1/chat/completions", content=left, timeout=20
    ) as stream:
        next(line for line in stream.iter_lines() if line.startswith("data:"))
    # A body of exactly the limit fits only when every byte above was given back.
    whole = sized(fields, LIMIT, model="m")
    assert eventually_ok(proxy, "chat", whole).status_code == 200
