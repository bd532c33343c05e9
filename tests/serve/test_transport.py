"""The aiohttp-backed transport: httpx's answers and exceptions, aiohttp's pool underneath.

Each test talks to a real TCP server on 127.0.0.1 that plays one scripted answer byte by byte,
so every failure the proxy tells apart (502 vs 504) is produced by a real socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest

from agent_hooks.serve._transport import AiohttpTransport
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
async def client(read_timeout: float = 10) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=AiohttpTransport(keepalive_seconds=5), timeout=read_timeout
    ) as opened:
        yield opened


async def answer_ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while not reader.at_eof():
        try:
            await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-upstream: kept\r\n\r\nok")
        await writer.drain()


async def test_an_answer_arrives_with_its_status_headers_and_body() -> None:
    async with scripted(answer_ok) as (url, _), client() as http:
        response = await http.post(url, content=b"{}")
    assert (response.status_code, response.headers["x-upstream"], response.content) == (
        200,
        "kept",
        b"ok",
    )


async def test_credentials_in_the_url_go_as_a_basic_authorization_header() -> None:
    heads: list[bytes] = []

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await read_request(reader))
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()

    async with scripted(script) as (url, _), client() as http:
        with_credentials = url.replace("http://", "http://user:secret@")
        assert (await http.post(with_credentials, content=b"{}")).content == b"ok"
    request_line, *headers = heads[0].split(b"\r\n")
    assert b"secret" not in request_line
    assert b"authorization: basic dxnlcjpzzwnyzxq=" in [line.lower() for line in headers]


async def test_connections_are_reused_across_requests() -> None:
    async with scripted(answer_ok) as (url, connections), client() as http:
        for _ in range(3):
            assert (await http.post(url, content=b"{}")).content == b"ok"
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

    async with scripted(script) as (url, _), client() as http:
        request = http.build_request("POST", url, content=b"{}")
        response = await http.send(request, stream=True)
        chunks = response.aiter_bytes()
        with anyio.fail_after(10):
            assert await anext(chunks) == b"data: first\n\n"
        proceed.set()
        assert b"".join([part async for part in chunks]) == b"data: second\n\n"
        await response.aclose()


async def test_closing_an_unfinished_body_closes_the_upstream_connection() -> None:
    closed = asyncio.Event()

    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await reader.read()  # returns when the client closes the connection
        closed.set()

    async with scripted(script) as (url, _), client() as http:
        response = await http.send(http.build_request("POST", url, content=b"{}"), stream=True)
        await anext(response.aiter_bytes())
        await response.aclose()
        with anyio.fail_after(10):
            await closed.wait()


async def test_a_closed_port_is_a_connect_error() -> None:
    async with client() as http:
        with pytest.raises(httpx.ConnectError):
            await http.post(f"http://127.0.0.1:{free_port()}", content=b"{}")


async def test_a_silent_upstream_is_a_read_timeout() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await reader.read()

    async with scripted(script) as (url, _), client(read_timeout=0.2) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.post(url, content=b"{}")


async def test_a_hang_up_before_answering_is_a_protocol_error() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with scripted(script) as (url, _), client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post(url, content=b"{}")


async def test_an_answer_that_is_not_http_is_a_protocol_error() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SMTP ready\r\n\r\n")
        await writer.drain()

    async with scripted(script) as (url, _), client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post(url, content=b"{}")


async def test_a_body_that_breaks_off_is_a_read_error() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        await writer.drain()

    async with scripted(script) as (url, _), client() as http:
        response = await http.send(http.build_request("POST", url, content=b"{}"), stream=True)
        with pytest.raises(httpx.ReadError):
            await response.aread()
        await response.aclose()


async def test_a_body_that_stalls_is_a_read_timeout() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(HEAD + chunk(b"data: first\n\n"))
        await writer.drain()
        await reader.read()

    async with scripted(script) as (url, _), client(read_timeout=0.2) as http:
        response = await http.send(http.build_request("POST", url, content=b"{}"), stream=True)
        with pytest.raises(httpx.ReadTimeout):
            await response.aread()
        await response.aclose()


async def test_closing_the_client_closes_the_pool() -> None:
    transport = AiohttpTransport(keepalive_seconds=5)
    async with scripted(answer_ok) as (url, _), httpx.AsyncClient(transport=transport) as http:
        await http.post(url, content=b"{}")
    with pytest.raises(RuntimeError):
        await transport.handle_async_request(httpx.Request("POST", url, content=b"{}"))
