"""An example MCP server: memories per user, stored in SQLite.

Tools: ``get_memories(user_id)``, ``search_memories(query, user_id=None)`` and
``add_memory(user_id, text)``: what a memory-backed assistant reads at the start of a request
and writes after its answer (see ``examples/memory-app``).

Run it over stdio (how an ``mcp`` toolset with ``"transport": "stdio"`` spawns it)::

    python examples/memory-server/memory_server.py

or over streamable HTTP (an ``mcp`` toolset with ``"transport": "streamable_http"`` and
``"url": "http://127.0.0.1:8765/mcp"``)::

    python examples/memory-server/memory_server.py --transport streamable-http --port 8765

The database is ``--db``, else ``$MEMORY_SERVER_DB``, else ``memories.sqlite3`` next to this file.
A new database starts with two memories for the user ``current``, so the demo has something to
show. Only the standard library and the ``mcp`` package are needed.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from mcp.server.mcpserver import MCPServer

DB_ENV_VAR = "MEMORY_SERVER_DB"
DEFAULT_DB = Path(__file__).with_name("memories.sqlite3")
SEED_MEMORIES = (
    ("current", "Prefers short answers with a concrete example."),
    ("current", "Works on the agent-hooks project, in Python 3.11."),
)
_SCHEMA_VERSION = 1
_MIN_SEARCH_WORD = 4
"""Shorter words ("the", "how") match almost every memory."""
_MAX_SEARCH_RESULTS = 5


@contextmanager
def _connect(db_path: Path) -> Iterator[sqlite3.Connection]:
    """One connection per call: tools run in worker threads, and SQLite connections are not
    shared between threads. The transaction commits when the block succeeds."""
    with closing(sqlite3.connect(db_path)) as db, db:
        yield db


def init_db(db_path: Path) -> None:
    """Create the table, seeding a brand-new database once."""
    with _connect(db_path) as db:
        (version,) = db.execute("PRAGMA user_version").fetchone()
        if version >= _SCHEMA_VERSION:
            return
        db.execute(
            "CREATE TABLE IF NOT EXISTS memories ("
            " id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, text TEXT NOT NULL)"
        )
        db.executemany("INSERT INTO memories (user_id, text) VALUES (?, ?)", SEED_MEMORIES)
        db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")


def build_server(db_path: Path) -> MCPServer:
    """The MCP server with its three tools, reading and writing ``db_path``."""
    server = MCPServer("memory-server")

    @server.tool()
    def get_memories(user_id: str) -> str:
        """Everything remembered about a user, one memory per line, oldest first."""
        with _connect(db_path) as db:
            rows = db.execute(
                "SELECT text FROM memories WHERE user_id = ? ORDER BY id", (user_id,)
            ).fetchall()
        if not rows:
            return f"No memories for user {user_id!r}."
        return "\n".join(f"- {text}" for (text,) in rows)

    @server.tool()
    def search_memories(query: str, user_id: str | None = None) -> str:
        """Memories that share words with ``query`` (of one user when ``user_id`` is given),
        best match first, at most five, one per line."""
        words = {word.strip(".,;:!?'\"()").lower() for word in query.split()}
        words = {word for word in words if len(word) >= _MIN_SEARCH_WORD}
        if not words:
            return "No search words in the query."
        with _connect(db_path) as db:
            sql = "SELECT text FROM memories" + (" WHERE user_id = ?" if user_id else "")
            rows = db.execute(sql + " ORDER BY id", (user_id,) if user_id else ()).fetchall()
        scored = [(sum(word in text.lower() for word in words), text) for (text,) in rows]
        found = sorted((item for item in scored if item[0]), key=lambda item: -item[0])
        if not found:
            return "No related memories."
        return "\n".join(f"- {text}" for _, text in found[:_MAX_SEARCH_RESULTS])

    @server.tool()
    def add_memory(user_id: str, text: str) -> str:
        """Remember ``text`` about a user."""
        with _connect(db_path) as db:
            db.execute("INSERT INTO memories (user_id, text) VALUES (?, ?)", (user_id, text))
        return f"Remembered for user {user_id!r}."

    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An example MCP server: memories per user.")
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db", type=Path, default=Path(os.environ.get(DB_ENV_VAR, DEFAULT_DB)))
    args = parser.parse_args(argv)
    init_db(args.db)
    server = build_server(args.db)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=args.host, port=args.port)


if __name__ == "__main__":
    main()
