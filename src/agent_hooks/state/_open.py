"""Opening the store a URL names; the backend's library is imported only when it is chosen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_hooks._scrub import register_url, scrub
from agent_hooks.state._store import ConversationStore

__all__ = ["open_store"]

_SQLITE = "sqlite:///"


def open_store(url: str, *, on_error: Callable[[], None] | None = None) -> ConversationStore:
    """The store ``url`` names: ``sqlite:///PATH`` or ``redis://HOST:PORT/DB`` (``rediss://``).

    A SQLite path is relative to the working directory (``sqlite:////abs/path`` for an absolute
    one); the file and its directory are created now, so a path that cannot hold them fails
    here rather than on a request. Redis connects on first use, so a server that is down only
    costs state until it answers. ``on_error`` is called once per failed store call (after its
    ERROR line), for a metrics counter. Credentials in a Redis URL are never logged.

    Raises:
        ValueError: ``url`` names no store we have (the message shows the accepted forms), or a
            Redis URL that does not parse; the message names the URL, its credentials scrubbed.
        OSError: the SQLite file cannot be created.
    """
    register_url(url)  # first: whatever fails below may quote it
    if url.startswith(_SQLITE) and len(url) > len(_SQLITE):
        from agent_hooks.state._sqlite import SqliteStore

        store = SqliteStore(Path(url.removeprefix(_SQLITE)), on_error=on_error)
        store.open()
        return store
    if url.startswith(("redis://", "rediss://")):
        from agent_hooks.state._redis import RedisStore

        try:
            return RedisStore(url, on_error=on_error)
        except ValueError as exc:  # redis-py's parse: a bad port, a bad query option
            raise ValueError(scrub(f"state URL {url!r}: {exc}")) from exc
    raise ValueError(
        scrub(
            f"unsupported state URL {url!r}: use sqlite:///RELATIVE/PATH,"
            " sqlite:////ABSOLUTE/PATH or redis://HOST:PORT/DB"
        )
    )
