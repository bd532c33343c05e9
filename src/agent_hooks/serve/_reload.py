"""Loading the manifest file, at start and again without a restart (SPEC 17).

A reload is asked for by SIGHUP (:meth:`Reloader.request`, safe in a signal handler: it only
schedules the work on the event loop) or, with ``--watch``, by the file changing. Requests that
arrive while a reload is pending are that reload, and any that arrive while one runs are one
more after it (the file may have changed since it was read): a burst of signals or writes costs
one or two, each counted once. A reload reads and validates the file as the start did (preview
gate included), builds the next :class:`~agent_hooks.serve._generations.Generation` and only
then swaps it in; a manifest that cannot be read or does not validate leaves the current one
serving, with one ``error:`` line per problem.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from agent_hooks._reasons import reason_for
from agent_hooks.config import ApplicationConfig
from agent_hooks.config.application import read_manifest
from agent_hooks.errors import ConfigError
from agent_hooks.serve._generations import Generation, Generations

__all__ = ["WATCH_INTERVAL_SECONDS", "Reloader", "load_manifest"]

logger = logging.getLogger("agent_hooks.serve")

WATCH_INTERVAL_SECONDS = 1.0
"""How often ``--watch`` looks at the file. A change is loaded once two looks in a row saw the
same content, so a file caught half-written is not loaded (nor reported as invalid)."""

ReloadCounter = Callable[[str], None]
"""Counts one reload by its result: ``ok`` or ``invalid`` (the manifest was not loaded)."""


def load_manifest(data: bytes, *, hooks: bool, source: str) -> ApplicationConfig:
    """Validate the manifest read from ``source``. Hooks are validated whatever the preview gate
    says (a bad hook is an error, not ignored); with the gate closed the config is then read
    without them, which logs the usual warning that they are ignored.

    Raises:
        ConfigError: the bytes cannot be decoded, or the manifest is invalid.
    """
    config = ApplicationConfig.from_bytes(data, preview=True, source=source)
    return config if hooks else ApplicationConfig.from_bytes(data, source=source)


class Reloader:
    """Loads ``path`` into ``generations`` when asked to, and watches it with ``watch``."""

    def __init__(
        self,
        path: Path,
        *,
        hooks: bool,
        on_reload: ReloadCounter,
        watch: bool = False,
        fallback: bytes | None = None,
    ) -> None:
        """Load the manifest for the start; when ``path`` cannot be loaded, ``fallback``.

        A ``--workers`` process falls back on the bytes the parent read and checked: a pipe
        (``serve <(...) --workers 2``) can be read only once, and a worker started in place of
        one that died must not stop the server because the file was since made invalid (the
        other workers kept their manifest too).

        Raises:
            ConfigError: the manifest cannot be loaded (the server does not start).
        """
        self._path = path
        self._hooks = hooks
        self._on_reload = on_reload
        self._watch = watch
        try:
            data = read_manifest(path)
            config = load_manifest(data, hooks=hooks, source=str(path))
        except ConfigError as exc:
            if fallback is None:
                raise
            logger.warning(
                "manifest not loaded from %s (%s): starting from the one the server checked",
                path,
                exc.issues[0],
            )
            data = fallback
            config = load_manifest(data, hooks=hooks, source=str(path))
        self.first_read = data
        """The bytes the start loaded (the parent hands them to its ``--workers``)."""
        self._loaded: str | None = _sha256(data)
        """The content last read (whether it loaded or not): ``--watch`` reloads when the file's
        differs. The file is read once per load and its fingerprint is of those very bytes, so a
        write racing the read causes one more reload, never a missed one, and a pipe (``serve
        <(...)``) is read once."""
        self.generations = Generations(Generation.build(config, hooks=hooks))
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wanted: asyncio.Event | None = None
        self._asked_early = False

    def request(self) -> None:
        """Ask for a reload: from a signal handler or any thread. Before :meth:`run` started,
        the reload happens as soon as it does."""
        loop, wanted = self._loop, self._wanted
        if loop is None or wanted is None:
            self._asked_early = True
        else:
            loop.call_soon_threadsafe(wanted.set)

    async def run(self) -> None:
        """Reload whenever asked, until cancelled; with ``watch``, ask when the file changes."""
        wanted = self._wanted = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._asked_early:
            wanted.set()
        try:
            async with asyncio.TaskGroup() as watching:
                if self._watch:
                    watching.create_task(self._watch_file())
                while True:
                    await wanted.wait()
                    wanted.clear()
                    self.reload()
        finally:
            self._loop = None  # a signal after this must not reach a loop that may be closed

    def reload(self) -> bool:
        """Load the file into a new generation and swap it in; whether it loaded.

        Runs on the event loop, between requests' steps: reading and validating a manifest takes
        milliseconds, and nothing is connected until a hook needs it.
        """
        current = self.generations.current
        self._loaded = None
        try:
            data = read_manifest(self._path)
            self._loaded = _sha256(data)
            config = load_manifest(data, hooks=self._hooks, source=str(self._path))
            generation = Generation.build(config, hooks=self._hooks, reused=current.reusable())
        except ConfigError as exc:
            for issue in exc.issues:
                logger.error("error: %s", issue)
            self._not_loaded(f"{len(exc.issues)} error(s)")
            return False
        except Exception as exc:  # the reloads after this one must still happen
            logger.error("error: %s", reason_for(exc))
            self._not_loaded("it could not be loaded")
            return False
        self.generations.replace(generation)
        self._on_reload("ok")
        kept = {id(toolset) for toolset in current.toolsets}
        logger.info(
            "manifest reloaded from %s: hooks=%s toolsets kept=%s new=%s",
            self._path,
            _names(generation.hook_names) if generation.runner is not None else "off",
            _names(t.name for t in generation.toolsets if id(t) in kept),
            _names(t.name for t in generation.toolsets if id(t) not in kept),
        )
        return True

    def _not_loaded(self, why: str) -> None:
        self._on_reload("invalid")
        logger.warning(
            "manifest not reloaded from %s (%s): the previous one stays", self._path, why
        )

    async def _watch_file(self) -> None:
        seen = self._loaded
        while True:
            await asyncio.sleep(WATCH_INTERVAL_SECONDS)
            now = await asyncio.to_thread(_fingerprint, self._path)
            if now != self._loaded and now == seen:
                self.request()
            seen = now


def _fingerprint(path: Path) -> str | None:
    """The SHA-256 of the file's bytes; ``None`` when it cannot be read (a reload then says
    why)."""
    try:
        return _sha256(path.read_bytes())
    except OSError:
        return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _names(names: Iterable[str]) -> str:
    return ",".join(names) or "-"
