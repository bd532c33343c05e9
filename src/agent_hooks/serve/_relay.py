"""Talking to a client that may leave: the upstream's work stops as soon as the client goes.

SPEC 12.1: a client that disconnects before its answer is complete has its upstream request
closed at once, streaming or not; no completion hooks run and nothing is stored. ASGI reports the
disconnect as an ``http.disconnect`` message on ``receive``, so both helpers watch for it while
the upstream works, and cancel that work when it comes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import anyio
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agent_hooks.serve._dialects import AnswerReader
from agent_hooks.serve._errors import ProxyError, UpstreamBrokeOff, UpstreamError
from agent_hooks.serve._transport import UpstreamAnswer
from agent_hooks.serve._upstream import scrubbed

__all__ = ["ClientGone", "StreamRelay", "log_client_gone", "unless_client_leaves"]

logger = logging.getLogger("agent_hooks.serve")

_T = TypeVar("_T")


class ClientGone(Exception):
    """The client disconnected before its answer was complete."""


async def unless_client_leaves(receive: Receive, work: Awaitable[_T]) -> _T:
    """``await work``, cancelled as soon as the client disconnects.

    Call it once the request body has been read, so the next message can only be the disconnect.
    The work runs in the caller's task and one small task watches ``receive``: a task group per
    request (anyio's) cost a tenth of the proxy's CPU. A disconnect noticed after the work
    finished but before the caller resumed still counts as one (the caller is cancelled at that
    very ``await``), so the result of a turn whose client left is never used.

    Raises:
        ClientGone: the client left first; ``work`` was cancelled.
    """
    caller = asyncio.current_task()
    assert caller is not None  # always called from a request's task
    left = False

    async def watch() -> None:
        nonlocal left
        while (await receive())["type"] != "http.disconnect":
            pass
        left = True
        caller.cancel()

    watcher = asyncio.create_task(watch())
    try:
        return await work
    except asyncio.CancelledError:
        # Ours alone: the client left. Anyone else's cancel (shutdown) goes on up.
        if left and caller.uncancel() == 0:
            raise ClientGone from None
        raise
    finally:
        watcher.cancel()


def log_client_gone() -> None:
    logger.info("client left before its answer was complete: upstream request closed")


class StreamRelay(Response):
    """An ASGI response that passes an upstream event stream on as it arrives.

    It owns the upstream response: closed when the stream ends, breaks off, or the client leaves
    (at once, not when the next chunk comes). ``reader`` sees every chunk (to reassemble the
    answer) and says whether the answer's last event went by and whether it reported a failure.
    ``before_end`` runs when the client got the whole answer and it succeeded, before the
    response's last frame (state is saved there, so a client's next turn finds it); ``after``
    runs then too, once the response is over (SPEC 12.1: state only after a successful answer;
    SPEC 12: no ``on_completion`` when the upstream failed). A stream that breaks off, or ends
    at the HTTP level before the answer's last event, ends with one ``data: {"error": ...}``
    event shaped by ``error_body``, named ``error_event`` where the dialect names its events
    (never a silent clean end); neither of the two runs then.

    Whole lines are relayed: an unfinished last line waits for the chunk that ends it (an event
    is only read at its end anyway). So when the reader reports a failure (an error event, a
    failed response), the lines that carried it have not gone out, and everything from them on
    is relayed with the proxy's secrets scrubbed (SPEC 16): an upstream that quotes our key in
    an error event inside a 200 stream hands the client ``***``. A successful answer's lines go
    as they came.
    """

    def __init__(
        self,
        answer: UpstreamAnswer,
        *,
        headers: Mapping[str, str],
        error_body: Callable[[ProxyError], dict[str, Any]],
        reader: AnswerReader,
        error_event: str | None = None,
        before_end: Callable[[], Awaitable[None]] | None = None,
        after: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._answer = answer
        self.status_code = answer.status_code
        self.background = None
        self.init_headers(headers)
        self._error_body = error_body
        self._reader = reader
        self._error_event = b"" if error_event is None else f"event: {error_event}\n".encode()
        self._before_end = before_end
        self._after = after

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        complete = False
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            complete = await self._pump(receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self._answer.aclose()
        if complete and self._after is not None:
            await self._after()

    async def _pump(self, receive: Receive, send: Send) -> bool:
        """Relay until the end; whether the client got the whole answer and it succeeded.

        A client may close as soon as it has read the answer's last event (the ``openai`` client
        does, at ``[DONE]``), so a disconnect after the reader saw it is not a loss.
        """
        reader = self._reader
        try:
            await unless_client_leaves(receive, self._relay(self._answer.aiter_bytes(), send))
        except ClientGone:
            if not reader.done:
                log_client_gone()
        finished = reader.done and not reader.failed
        if finished and self._before_end is not None:
            await self._before_end()
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return finished

    async def _relay(self, chunks: AsyncIterator[bytes], send: Send) -> None:
        reader = self._reader
        error: ProxyError
        unfinished: list[bytes] = []
        """The pieces of the last line so far, when no newline has ended it yet."""
        try:
            async for chunk in chunks:
                reader.feed(chunk)
                end = chunk.rfind(b"\n") + 1
                if not end:
                    unfinished.append(chunk)
                    continue
                lines = chunk
                if end < len(chunk) or unfinished:  # usually neither: events come whole
                    lines = b"".join([*unfinished, chunk[:end]])
                    unfinished = [chunk[end:]] if end < len(chunk) else []
                if reader.failed:
                    lines = scrubbed(lines)
                await send({"type": "http.response.body", "body": lines, "more_body": True})
        except UpstreamError as exc:
            error = exc
        else:
            if reader.done:
                await self._send_unfinished(unfinished, send)
                return
            error = UpstreamBrokeOff("the upstream's stream ended before its answer was complete")
        await self._send_unfinished(unfinished, send)
        logger.warning("%s", error)
        data = json.dumps(self._error_body(error)).encode()
        event = self._error_event + b"data: " + data + b"\n\n"
        await send({"type": "http.response.body", "body": event, "more_body": True})

    @staticmethod
    async def _send_unfinished(pieces: list[bytes], send: Send) -> None:
        """A last line no newline ended, scrubbed: it is no whole event, so nothing says it is
        an answer's content."""
        if pieces:
            body = scrubbed(b"".join(pieces))
            await send({"type": "http.response.body", "body": body, "more_body": True})
