"""The aiohttp transport: answers streamed as they come, each failure told apart as the client is.

Each test talks to a real TCP server on 127.0.0.1 that plays one scripted answer byte by byte,
so every failure the proxy tells apart (502 vs 504) is produced by a real socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from agent_hooks.serve._errors import UpstreamBrokeOff, UpstreamTimeout, UpstreamUnreachable
from agent_hooks.serve._transport import AiohttpTransport, UpstreamAnswer
from tests.servers.processes import free_port

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


@asynccontextmanager
async def scripted(script: Script) -> AsyncIterator[tuple[str, list[int]]]:
    """A server that runs ``script`` per connection; yields its URL and a connection counter."""
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            await script(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        server.close()


@asynccontextmanager
async def transport(url: str, bound_seconds: float = 10) -> AsyncIterator[AiohttpTransport]:
    opened = AiohttpTransport(url, timeout_seconds=bound_seconds, keepalive_seconds=5)
    try:
        yield opened
    finally:
        await opened.aclose()


async def post(to: AiohttpTransport) -> UpstreamAnswer:
    return await to.request("POST", "/v1/chat/completions", {"x-test": "1"}, b"{}")


async def read(answer: UpstreamAnswer) -> bytes:
    try:
        return await answer.aread()
    finally:
        await answer.aclose()


async def answer_ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while not reader.at_eof():
        try:
            await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-upstream: kept\r\n\r\nok")
        await writer.drain()


async def test_an_answer_arrives_with_its_status_headers_and_body() -> None:
    heads: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await read_request(reader))
        writer.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\nX-Upstream: kept\r\n\r\nok")
        await writer.drain()

    async with scripted(script) as (url, _), transport(url) as upstream:
        answer = await post(upstream)
        assert (answer.status_code, answer.is_success) == (201, True)
        assert answer.headers["x-upstream"] == "kept"  # any case, as sent
        assert await read(answer) == b"ok"
    request_line, *headers = heads[0].split(b"\r\n")
    assert request_line == b"POST /v1/chat/completions HTTP/1.1"
    assert b"x-test: 1" in [line.lower() for line in headers]


async def test_credentials_in_the_url_go_as_a_basic_authorization_header() -> None:
    heads: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await read_request(reader))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()

    async with scripted(script) as (url, _):
        with_credentials = url.replace("http://", "http://user:secret@")
        async with transport(with_credentials) as upstream:
            assert await read(await post(upstream)) == b"ok"
    request_line, *headers = heads[0].split(b"\r\n")
    assert b"secret" not in request_line
    assert b"authorization: basic dxnlcjpzzwnyzxq=" in [line.lower() for line in headers]


async def test_connections_are_reused_across_requests() -> None:
    async with scripted(answer_ok) as (url, connections), transport(url) as upstream:
        for _ in range(3):
            assert await read(await post(upstream)) == b"ok"
    assert len(connections) == 1


async def test_a_streamed_body_is_passed_on_as_it_arrives() -> None:
    proceed = asyncio.Event()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await proceed.wait()  # the second chunk exists only after the client saw the first
        writer.write(chunk(b"data: second\n\n") + b"0\r\n\r\n")
        await writer.drain()

    async with scripted(script) as (url, _), transport(url) as upstream:
        answer = await post(upstream)
        chunks = answer.aiter_bytes()
        with anyio.fail_after(10):
            assert await anext(chunks) == b"data: first\n\n"
        proceed.set()
        assert b"".join([part async for part in chunks]) == b"data: second\n\n"
        await answer.aclose()


async def test_closing_an_unfinished_body_closes_the_upstream_connection() -> None:
    closed = asyncio.Event()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await reader.read()  # returns when the client closes the connection
        closed.set()

    async with scripted(script) as (url, _), transport(url) as upstream:
        answer = await post(upstream)
        await anext(answer.aiter_bytes())
        await answer.aclose()
        with anyio.fail_after(10):
            await closed.wait()


async def test_a_closed_port_is_unreachable() -> None:
    async with transport(f"http://127.0.0.1:{free_port()}") as upstream:
        with pytest.raises(UpstreamUnreachable, match="cannot be reached"):
            await post(upstream)


async def test_a_silent_upstream_times_out() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await reader.read()

    async with scripted(script) as (url, _), transport(url, bound_seconds=0.2) as upstream:
        with pytest.raises(UpstreamTimeout, match="did not answer in time"):
            await post(upstream)


async def test_a_hang_up_before_answering_is_unreachable() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with scripted(script) as (url, _), transport(url) as upstream:
        with pytest.raises(UpstreamUnreachable):
            await post(upstream)


async def test_an_answer_that_is_not_http_is_unreachable() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SMTP ready\r\n\r\n")
        await writer.drain()

    async with scripted(script) as (url, _), transport(url) as upstream:
        with pytest.raises(UpstreamUnreachable):
            await post(upstream)


async def test_a_body_that_breaks_off_is_reported_as_broken_off() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        await writer.drain()

    async with scripted(script) as (url, _), transport(url) as upstream:
        answer = await post(upstream)
        with pytest.raises(UpstreamBrokeOff, match="broke off"):
            await read(answer)


async def test_a_body_that_stalls_times_out() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await reader.read()

    async with scripted(script) as (url, _), transport(url, bound_seconds=0.2) as upstream:
        answer = await post(upstream)
        with pytest.raises(UpstreamTimeout, match="stalled"):
            await read(answer)


async def test_closing_the_transport_closes_the_pool() -> None:
    async with scripted(answer_ok) as (url, _):
        upstream = AiohttpTransport(url, timeout_seconds=5, keepalive_seconds=5)
        await read(await post(upstream))
        await upstream.aclose()
        with pytest.raises(RuntimeError):
            await post(upstream)
