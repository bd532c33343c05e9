"""A store that fails costs the state, never the request or the process (SPEC 12.1).

Every fault is real: a Redis that is down, killed or blackholed (a socket that accepts and never
answers), a SQLite file deleted under the store or on a disk that refuses writes.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from agent_hooks.state import open_store
from agent_hooks.state._redis import RedisStore
from agent_hooks.state._store import CALL_TIMEOUT_SECONDS, PAUSE_SECONDS
from tests._support import pair
from tests.servers.redis import RedisServer, blackholed_port

PAIRS = [pair("clock", "12:00")]
BOUND = CALL_TIMEOUT_SECONDS + 0.5
"""What a failing call may cost at most, with room for the test's own scheduling."""


def state_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "agent_hooks.state"]


class Clock:
    """A monotonic clock the test moves, for the pause after a failure."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_a_blackholed_redis_costs_one_call_two_seconds_and_the_next_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures: list[None] = []
    clock = Clock()
    with blackholed_port() as port:
        url = f"redis://127.0.0.1:{port}/0"
        store = RedisStore(url, on_error=lambda: failures.append(None), monotonic=clock)
        with anyio.fail_after(BOUND):
            assert await store.load("c1", tenant="t") == []
        with anyio.fail_after(0.5):  # paused: the backend is not asked
            await store.save("c1", PAIRS, tenant="t")
            assert await store.load("c1", tenant="t") == []
        clock.now += PAUSE_SECONDS
        with anyio.fail_after(BOUND):  # after the pause it is asked again
            await store.save("c1", PAIRS, tenant="t")
        await store.aclose()
    assert len(failures) == 4
    errors = state_errors(caplog)
    assert len(errors) == 2
    assert all("redis store: no answer within 2 s" in line for line in errors)


async def test_a_redis_down_at_start_serves_state_once_it_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = RedisServer(tmp_path)
    clock = Clock()
    store = RedisStore(server.url, monotonic=clock)
    with anyio.fail_after(BOUND):
        await store.save("c1", PAIRS, tenant="t")  # nobody listens yet
    assert len(state_errors(caplog)) == 1
    server.start()
    clock.now += PAUSE_SECONDS
    try:
        await store.save("c1", PAIRS, tenant="t")
        assert await store.load("c1", tenant="t") == PAIRS
        server.kill()
        with anyio.fail_after(BOUND):
            assert await store.load("c1", tenant="t") == []
        server.start()  # a new, empty server on the same port: the client reconnects
        clock.now += PAUSE_SECONDS
        assert await store.load("c1", tenant="t") == []
        await store.save("c1", PAIRS, tenant="t")
        assert await store.load("c1", tenant="t") == PAIRS
    finally:
        await store.aclose()
        server.kill()
    assert len(state_errors(caplog)) == 2


async def test_a_deleted_sqlite_file_is_reported_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"
    store = open_store(f"sqlite:///{path}")
    await store.save("c1", PAIRS, tenant="t")
    path.unlink()
    assert await store.load("c1", tenant="t") == []
    assert path.exists()
    await store.save("c1", PAIRS, tenant="t")
    assert await store.load("c1", tenant="t") == PAIRS
    await store.aclose()
    assert [line for line in state_errors(caplog) if "deleted" in line] != []


async def test_a_damaged_sqlite_file_is_set_aside_at_open_and_while_running(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"not a database, whatever an OS crash left" * 100)
    store = open_store(f"sqlite:///{path}")
    assert (tmp_path / "state.db.corrupt").exists()
    await store.save("c1", PAIRS, tenant="t")
    with path.open("r+b") as damaged:  # the same file, overwritten in place
        damaged.write(b"\0garbage" * 4096)
    assert await store.load("c1", tenant="t") == []
    store._paused_until = float("-inf")  # type: ignore[attr-defined]  # skip the pause
    await store.save("c1", PAIRS, tenant="t")
    assert await store.load("c1", tenant="t") == PAIRS
    await store.aclose()
    assert sum("is damaged: moved to" in line for line in state_errors(caplog)) == 2


async def test_a_sqlite_file_that_cannot_come_back_costs_the_state_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "state"
    store = open_store(f"sqlite:///{directory}/state.db")
    (directory / "state.db").unlink()
    directory.rmdir()
    directory.write_text("a file where the directory was")
    assert await store.load("c1", tenant="t") == []
    await store.save("c1", PAIRS, tenant="t")
    await store.aclose()
    assert sum("sqlite store" in line for line in state_errors(caplog)) == 1  # then paused


def test_a_disk_that_refuses_writes_never_kills_the_process(tmp_path: Path) -> None:
    """A file-size limit makes every write past it fail (EFBIG), as a full disk does. With a
    memory-mapped WAL index that is a SIGBUS; the store must log errors and carry on."""
    script = textwrap.dedent(
        f"""
        import asyncio, logging, resource, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from agent_hooks.state import open_store
        from tests._support import pair

        async def main():
            store = open_store("sqlite:///{tmp_path}/state.db")
            await store.save("warm", [pair("clock", "x")], tenant="t")
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
            failures = 0
            for n in range(50):
                store._paused_until = float("-inf")  # ask the disk every time
                await store.save(f"c{{n}}", [pair("kb", "y" * 5000)], tenant="t")
                if await store.load(f"c{{n}}", tenant="t") == []:
                    failures += 1
            await store.aclose()
            print("failures", failures)

        logging.basicConfig(level=logging.ERROR)
        asyncio.run(main())
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "failures 50" in done.stdout
    assert "ERROR:agent_hooks.state" in done.stderr


@contextmanager
def locked_by_another_process(path: Path, seconds: float) -> Iterator[None]:
    """``path`` held under an exclusive SQLite lock by another process for ``seconds`` from when
    the block starts (as a worker's write would hold it, only longer)."""
    script = f"""
import sqlite3, time
db = sqlite3.connect({str(path)!r}, isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep({seconds})
db.execute("COMMIT")
"""
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    assert writer.stdout.readline() == "locked\n"
    try:
        yield
    finally:
        writer.communicate()


async def test_a_load_while_another_process_writes_waits_its_turn_off_the_event_loop(
    tmp_path: Path,
) -> None:
    """Loads are read on the event loop only when nothing can make them wait: a file another
    process holds locked sends the read to the store's thread, which waits for the lock, while
    the loop serves everything else."""
    path = tmp_path / "state.db"
    store = open_store(f"sqlite:///{path}")
    await store.save("c1", PAIRS, tenant="t")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.01)

    with locked_by_another_process(path, 0.5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(tick)
            loaded = await store.load("c1", tenant="t")
            tasks.cancel_scope.cancel()
    await store.aclose()
    assert loaded == PAIRS  # waited for the lock instead of failing at once
    assert ticks >= 10  # the loop went on meanwhile (0.5 s of 10 ms ticks: about 40)
