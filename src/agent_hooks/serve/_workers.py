"""``serve --workers N``: N processes serving one socket, and the parent that keeps them running.

One process serves with one event loop, so on one core; N processes serve one port with N cores.
The parent has bound the socket and checked the manifest and the store, as one process would
(a busy port, a bad state URL or manifest is still one ``error:`` line and exit 1 or 2). It then
starts N workers with :mod:`multiprocessing`'s *spawn* context: each is a fresh interpreter that
gets the parsed arguments, the socket and the metrics directory, and builds its own store,
injector, MCP sessions and upstream clients (nothing holding a thread or a socket is inherited
through a fork). The workers share the ``--state`` store, so a conversation moves freely between
them.

The parent supervises: SIGTERM or SIGINT stops every worker gracefully (each finishes its
in-flight answers within ``--shutdown-timeout``), SIGHUP is passed on to every worker (each
reloads its manifest), a worker that dies is replaced (one line), and a worker that cannot start
(it exits before serving) stops the others: one ``error:`` line saying why (the worker tells the
parent, which writes it once, however many workers fail alike), exit 1. ``/metrics`` adds up
every worker's counts through prometheus-client's multiprocess mode, in a directory the parent
creates and removes when it exits.

uvicorn's own supervisor (``uvicorn.supervisors.Multiprocess``) is not used: it restarts every
worker on SIGHUP, starts them through a private helper, and knows nothing of the metrics
directory.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnProcess
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Worker", "supervise"]

logger = logging.getLogger("agent_hooks.serve")

MULTIPROCESS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client reads it once, when it is first imported, to choose where values live."""

CLOSE_GRACE_SECONDS = 10.0
"""How long past ``--shutdown-timeout`` a stopping worker may take to close its sessions,
clients and store before it is killed."""

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_NOTED_SIGNALS = (*_STOP_SIGNALS, signal.SIGHUP)


@dataclass(frozen=True)
class Worker:
    """What one worker process gets from the parent (pickled: the socket and the connection
    are passed as descriptors)."""

    listening: socket.socket
    metrics_dir: Path
    manifest: bytes
    """The manifest as the parent read and checked it: what the worker starts from when the
    path does not load (a pipe read once, a file since made invalid)."""
    started: Connection
    """Sent one message: empty once the worker's app has started, so the parent knows it serves;
    or why it cannot start (:meth:`failed`), for the parent to say."""

    def failed(self, reason: str) -> None:
        """Tell the parent why this worker cannot start (one line; it writes it as ``error:``)."""
        self.started.send_bytes((reason or "no reason given").encode())  # empty means serving
        self.started.close()

    def announcing(self, app: ASGIApp) -> ASGIApp:
        """``app``, telling the parent through :attr:`started` when its lifespan has started."""
        started = self.started

        async def announcing_app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "lifespan":
                await app(scope, receive, send)
                return

            async def announcing_send(message: Message) -> None:
                await send(message)
                if message["type"] == "lifespan.startup.complete":
                    started.send_bytes(b"")
                    started.close()

            await app(scope, receive, announcing_send)

        return announcing_app


@dataclass(frozen=True)
class _Logs:
    """The parent's logging, for a worker to log the same way to the same stderr: the levels
    of the root and ``agent_hooks`` loggers and the formats of the root's stream handlers."""

    root_level: int
    package_level: int
    formats: tuple[logging.Formatter | None, ...]

    @classmethod
    def of_this_process(cls) -> _Logs:
        root = logging.getLogger()
        formats = tuple(
            handler.formatter
            for handler in root.handlers
            if type(handler) is logging.StreamHandler  # not files, not a test's capture
        )
        return cls(root.level, logging.getLogger("agent_hooks").level, formats)

    def install(self) -> None:
        root = logging.getLogger()
        root.setLevel(self.root_level)
        logging.getLogger("agent_hooks").setLevel(self.package_level)
        for format_ in self.formats:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(_WorkerLines(format_ or logging.Formatter()))
            root.addHandler(handler)


class _WorkerLines(logging.Formatter):
    """The parent's lines, each after ``[PID]``: N workers write to one stderr, and an operator
    must tell their lines apart (and find the worker a supervisor line names)."""

    def __init__(self, lines: logging.Formatter) -> None:
        super().__init__()
        self._lines = lines
        self._prefix = f"[{os.getpid()}] "

    def format(self, record: logging.LogRecord) -> str:
        return self._prefix + self._lines.format(record)


def supervise(args: argparse.Namespace, listening: socket.socket, manifest: bytes) -> int:
    """Serve ``listening`` with ``args.workers`` processes, each starting from the ``manifest``
    bytes the parent read, until SIGTERM or SIGINT; 0 once
    they all stopped, 1 when one could not start. The socket is closed and the metrics
    directory removed when it returns.

    Raises:
        KeyboardInterrupt: after a graceful stop on SIGINT, as one process serving does.
    """
    metrics_dir = Path(tempfile.mkdtemp(prefix="agent-hooks-metrics-"))
    try:
        with _signals_noted() as noted:
            supervisor = _Supervisor(
                args, listening, manifest, metrics_dir, _Logs.of_this_process()
            )
            status = supervisor.run(noted)
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)
        listening.close()
    if supervisor.interrupted:
        raise KeyboardInterrupt
    return status


@dataclass
class _Running:
    process: SpawnProcess
    started: Connection | None
    """The parent's end until the worker says it serves (or exits first); then ``None``."""
    serving: bool = False
    failure: str | None = None
    """Why it could not start, as it told the parent (:meth:`Worker.failed`)."""
    reload_owed: bool = False
    """A SIGHUP came while it was starting: sent once it serves (its handler is on by then;
    before, the signal would end it)."""


@dataclass
class _Supervisor:
    args: argparse.Namespace
    listening: socket.socket
    manifest: bytes
    metrics_dir: Path
    logs: _Logs
    running: list[_Running] = field(default_factory=list)
    stopping: bool = False
    kill_at: float | None = None
    """While stopping: when the workers still running are killed."""
    status: int = 0
    interrupted: bool = False

    def run(self, noted: int) -> int:
        for _ in range(self.args.workers):
            self._start()
        while self.running:
            timeout = None if self.kill_at is None else max(0.0, self.kill_at - time.monotonic())
            handles: list[Connection | int] = [noted]
            for worker in self.running:
                handles.append(worker.process.sentinel)
                if worker.started is not None:
                    handles.append(worker.started)
            ready = wait(handles, timeout)
            if noted in ready:  # first: a worker stopped by the same signal is not replaced
                self._signalled(os.read(noted, 64))
            for worker in list(self.running):
                if worker.started is not None and worker.started in ready:
                    self._heard_from(worker)
                if worker.process.sentinel in ready:
                    self._exited(worker)
            if self.kill_at is not None and time.monotonic() >= self.kill_at:
                self.kill_at = None
                for worker in self.running:
                    worker.process.kill()
        return self.status

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=False)
        worker = Worker(self.listening, self.metrics_dir, self.manifest, theirs)
        process = context.Process(
            target=_work, args=(self.args, worker, self.logs), name="agent-hooks-worker"
        )
        process.start()
        theirs.close()  # the worker has its own copy now
        self.running.append(_Running(process, ours))

    def _stop(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self.kill_at = time.monotonic() + self.args.shutdown_timeout + CLOSE_GRACE_SECONDS
        for worker in self.running:
            worker.process.terminate()  # SIGTERM: uvicorn's graceful shutdown

    def _signalled(self, signals: bytes) -> None:
        if any(signum in signals for signum in _STOP_SIGNALS):
            self.interrupted = self.interrupted or signal.SIGINT in signals
            self._stop()
        elif not self.stopping:
            for worker in self.running:
                worker.reload_owed = True
                self._reload_if_serving(worker)

    def _reload_if_serving(self, worker: _Running) -> None:
        if worker.serving and worker.reload_owed and worker.process.pid is not None:
            worker.reload_owed = False
            os.kill(worker.process.pid, signal.SIGHUP)

    def _heard_from(self, worker: _Running) -> None:
        assert worker.started is not None
        with contextlib.suppress(EOFError):  # it exited first: its sentinel says so next
            message = worker.started.recv_bytes()
            if message:
                worker.failure = message.decode(errors="replace")
            else:
                worker.serving = True
        worker.started.close()
        worker.started = None
        self._reload_if_serving(worker)

    def _exited(self, worker: _Running) -> None:
        self.running.remove(worker)
        if worker.started is not None and worker.started.poll():
            self._heard_from(worker)  # what it said just before it exited
        if worker.started is not None:
            worker.started.close()
        worker.process.join()
        pid, code = worker.process.pid, worker.process.exitcode
        worker.process.close()
        # Not imported at the top: a worker imports this module before it may import the library.
        from prometheus_client.multiprocess import mark_process_dead

        mark_process_dead(pid, str(self.metrics_dir))  # type: ignore[no-untyped-call]
        if self.stopping:
            return
        if not worker.serving:
            # Not imported at the top, like mark_process_dead: it loads the library.
            from agent_hooks.serve._command import startup_failed

            why = worker.failure or f"exited with code {code} before it served"
            self.status = startup_failed(f"worker {pid} could not start: {why}")
            self._stop()
            return
        logger.warning("worker %s exited with code %s: starting another", pid, code)
        self._start()


@contextlib.contextmanager
def _signals_noted() -> Iterator[int]:
    """A descriptor that turns readable with each SIGTERM, SIGINT or SIGHUP's number (a signal
    handler can only write; the supervisor's wait watches the descriptor); the previous handlers
    are put back after. Off the main thread, where Python handles no signals, it never turns
    readable."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    def note(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(BlockingIOError):  # a full pipe has said enough
            os.write(write_end, bytes([signum]))

    on_main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, note) for sig in _NOTED_SIGNALS if on_main_thread}
    try:
        yield read_end
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(read_end)
        os.close(write_end)


def _work(args: argparse.Namespace, worker: Worker, logs: _Logs) -> None:
    """A worker process's life: serve ``worker.listening`` until the parent stops it."""
    # Before prometheus-client is first imported (below, with the app): its values then live in
    # files the metrics directory collects, one per process.
    os.environ[MULTIPROCESS_DIR_ENV] = str(worker.metrics_dir)
    # Ctrl-C reaches every process of the terminal's group; the parent decides and sends SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _stop_with_parent()
    logs.install()
    from agent_hooks.serve._command import _serve, serve_logging

    with serve_logging():
        sys.exit(_serve(args, worker))


def _stop_with_parent() -> None:
    """Stop gracefully when the parent is gone (killed, so it could not stop us): a worker
    must not keep serving the port on its own."""
    parent = multiprocessing.parent_process()
    assert parent is not None  # a spawned worker always has one

    def watch() -> None:
        wait([parent.sentinel])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="agent-hooks-parent-watch", daemon=True).start()
