"""A stdio "MCP server" that starts at once and never answers ``initialize``.

Run as ``python runtime_mute_server.py START_LOG``. It appends its process id to START_LOG, then
ignores SIGTERM and the end of its stdin and sleeps for ever, so only a kill stops it. It imports
nothing heavy, so a short hook deadline is spent waiting for the handshake, not for imports.
"""

from __future__ import annotations

import os
import signal
import sys
import time

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\n")
    while True:
        time.sleep(60)
