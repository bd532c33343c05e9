"""``unless_client_leaves``: the work stops when the client goes, and only then.

Driven with a hand-written ASGI ``receive`` (a queue of messages), so each ordering of
"the work ends" and "the client leaves" is produced on purpose rather than by timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_hooks.serve._relay import ClientGone, unless_client_leaves


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
