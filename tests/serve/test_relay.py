"""``unless_client_leaves``: the work stops when the client goes, and only then. ``StreamRelay``:
a successful stream goes as it came, however it is cut into chunks, and a failed one never
hands the client a secret.

Driven with a hand-written ASGI ``receive`` (a queue of messages), so each ordering of
"the work ends" and "the client leaves" is produced on purpose rather than by timing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks._scrub import register_secret
from agent_hooks.serve._dialects import ANTHROPIC, CHAT, RESPONSES, Dialect
from agent_hooks.serve._relay import ClientGone, StreamRelay, unless_client_leaves
from agent_hooks.serve._transport import UpstreamAnswer


class Client:
    """An ASGI ``receive`` whose next message is whatever the test puts in."""

    def __init__(self) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def receive(self) -> dict[str, Any]:
        return await self.messages.get()

    def leave(self) -> None:
        self.messages.put_nowait({"type": "http.disconnect"})


async def test_the_work_s_result_is_returned_while_the_client_stays() -> None:
    client = Client()

    async def work() -> str:
        await asyncio.sleep(0)
        return "answer"

    assert await unless_client_leaves(client.receive, work()) == "answer"


async def test_a_client_that_leaves_cancels_the_work() -> None:
    client = Client()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def work() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    async def leave_once_started() -> None:
        await started.wait()
        client.leave()

    leaving = asyncio.create_task(leave_once_started())
    with pytest.raises(ClientGone):
        await unless_client_leaves(client.receive, work())
    await leaving
    assert cancelled.is_set()
    # The caller's task is not left cancelling: it can go on awaiting.
    current = asyncio.current_task()
    assert current is not None
    assert current.cancelling() == 0
    await asyncio.sleep(0)


async def test_a_client_that_leaves_as_the_work_ends_still_counts_as_gone() -> None:
    """The disconnect arrives in the same loop turn the work's result does: the result of a
    turn whose client left is never used (nothing may be stored for it)."""
    client = Client()
    result: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def work() -> str:
        return await result

    async def finish_and_leave() -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        client.leave()
        result.set_result("too late")

    finishing = asyncio.create_task(finish_and_leave())
    with pytest.raises(ClientGone):
        await unless_client_leaves(client.receive, work())
    await finishing


async def test_the_work_s_own_failure_is_raised_as_it_is() -> None:
    client = Client()

    async def work() -> str:
        raise LookupError("no such model")

    with pytest.raises(LookupError, match="no such model"):
        await unless_client_leaves(client.receive, work())


async def test_a_cancel_from_elsewhere_is_not_mistaken_for_the_client_leaving() -> None:
    """A server shutting down cancels the request's task: that cancel goes on up."""
    client = Client()
    started = asyncio.Event()

    async def work() -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def request() -> str:
        return await unless_client_leaves(client.receive, work())

    task = asyncio.create_task(request())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_watcher_is_gone_once_the_work_is_done() -> None:
    client = Client()

    async def work() -> str:
        return "answer"

    before = len(asyncio.all_tasks())
    await unless_client_leaves(client.receive, work())
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) == before


SECRET = f"sk-unit/{uuid.uuid4().hex}"
register_secret(SECRET, always_whole=True)


def sse(payload: dict[str, Any], event: bool = True) -> bytes:
    named = f"event: {payload['type']}\n" if event else ""
    return f"{named}data: {json.dumps(payload)}\n\n".encode()


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return f"data: {json.dumps({'choices': [choice]})}\n\n".encode()


LEAK = f"Incorrect API key provided: {SECRET}"
RESPONSE = {"id": "resp_1", "status": "completed", "output": []}
STREAMS: dict[str, tuple[Dialect, bytes, bytes]] = {
    "chat": (
        CHAT,
        chat_chunk({"role": "assistant", "content": "an error, "})
        + chat_chunk({"content": "explained"}, "stop")
        + b"data: [DONE]\n\n",
        chat_chunk({"role": "assistant", "content": "Hel"})
        + b"data: "
        + json.dumps({"error": {"message": LEAK}}).replace("/", "\\/").encode()  # as PHP writes
        + b"\n\n",
    ),
    "responses": (
        RESPONSES,
        sse({"type": "response.created", "response": RESPONSE})
        + sse({"type": "response.output_text.delta", "delta": "an error, explained"})
        + sse({"type": "response.completed", "response": RESPONSE}),
        sse({"type": "response.created", "response": RESPONSE})
        + sse({"type": "error", "message": LEAK, "code": "invalid_api_key"}),
    ),
    "anthropic": (
        ANTHROPIC,
        sse({"type": "message_start", "message": {}})
        + sse({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "error"}})
        + sse({"type": "message_stop"}),
        sse({"type": "message_start", "message": {}})
        + sse({"type": "error", "error": {"type": "authentication_error", "message": LEAK}}),
    ),
}


async def relayed(dialect: Dialect, chunks: list[bytes]) -> bytes:
    """What a client receives when the upstream sends ``chunks`` with status 200."""

    async def upstream() -> AsyncGenerator[bytes, None]:
        for chunk in chunks:
            yield chunk

    async def nothing() -> None:
        pass

    answer = UpstreamAnswer(200, {}, upstream(), nothing)
    relay = StreamRelay(
        answer, headers={}, error_body=lambda error: {"error": str(error)}, reader=dialect.reader()
    )
    bodies: list[bytes] = []

    async def send(message: Any) -> None:
        bodies.append(message.get("body", b""))

    await relay({"type": "http"}, Client().receive, send)
    return b"".join(bodies)


def cut(text: bytes, points: list[int]) -> list[bytes]:
    edges = [0, *sorted({point % (len(text) + 1) for point in points}), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(edges)]


@given(route=st.sampled_from(sorted(STREAMS)), points=st.lists(st.integers(min_value=0)))
def test_a_successful_stream_is_relayed_byte_for_byte_however_it_is_cut(
    route: str, points: list[int]
) -> None:
    dialect, stream, _ = STREAMS[route]
    assert asyncio.run(relayed(dialect, cut(stream, points))) == stream


@given(route=st.sampled_from(sorted(STREAMS)), points=st.lists(st.integers(min_value=0)))
def test_an_error_event_never_hands_the_client_a_secret_however_it_is_cut(
    route: str, points: list[int]
) -> None:
    """SPEC 16: the error event's lines wait for their end, then go scrubbed; what came before
    them goes as it came."""
    dialect, _, failing = STREAMS[route]
    received = asyncio.run(relayed(dialect, cut(failing, points)))
    assert SECRET.encode() not in received
    assert SECRET.replace("/", "\\/").encode() not in received
    assert b"Incorrect API key provided: ***" in received
    before = failing[: failing.rindex(b"\n\n", 0, failing.index(b"Incorrect")) + 2]
    assert received.startswith(before)
