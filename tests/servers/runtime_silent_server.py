"""A TCP server that accepts every connection, reads what it is sent, and never answers.

Run as ``python runtime_silent_server.py PORT``. It stands for a REST API that hangs: the request
goes out, the connection stays open, no byte of a response ever comes back.
"""

from __future__ import annotations

import asyncio
import sys


async def _swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while await reader.read(65536):
        pass
    writer.close()


async def _serve(port: int) -> None:
    server = await asyncio.start_server(_swallow, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1])))
