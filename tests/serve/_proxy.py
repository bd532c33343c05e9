"""Running ``agent-hooks serve`` as a child process, the way an operator does, for the e2e tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.servers.processes import STARTUP_DEADLINE_SECONDS, free_port, stop

CLIENT_KEY = "client-secret-key-1234"


@dataclass(frozen=True)
class Proxy:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _clients: list[openai.OpenAI] = field(default_factory=list)

    def client(self, **options: Any) -> openai.OpenAI:
        """An OpenAI client for the proxy, closed with it; no retries: one call, one request."""
        client = openai.OpenAI(
            base_url=f"{self.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=20, **options
        )
        self._clients.append(client)
        return client

    def close_clients(self) -> None:
        for client in self._clients:
            client.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def running_proxy(
    manifest: Mapping[str, Any],
    workdir: Path,
    *options: str,
    env: Mapping[str, str] | None = None,
) -> Iterator[Proxy]:
    """``python -m agent_hooks.serve`` on a free port until the block ends; SQLite state in
    ``workdir`` unless ``options`` name a ``--state``."""
    workdir.mkdir(parents=True, exist_ok=True)
    manifest_path = workdir / "manifest.json"
    manifest_path.write_text(json.dumps(manifest))
    port = free_port()
    state = [] if "--state" in options else ["--state", f"sqlite:///{workdir}/state.db"]
    args = [sys.executable, "-m", "agent_hooks.serve", str(manifest_path), "--port", str(port)]
    log_path = workdir / f"proxy-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [*args, *state, *options],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "ENABLE_PREVIEW_FEATURES": "true", **(env or {})},
        )
    proxy = Proxy(f"http://127.0.0.1:{port}", process, log_path)
    try:
        wait_until_healthy(proxy)
        yield proxy
    finally:
        proxy.close_clients()
        stop(process)


def wait_until_healthy(proxy: Proxy) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{proxy.url}/healthz", timeout=0.5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        try:
            code = proxy.process.wait(timeout=0.05)  # paces the poll and notices a crash
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"proxy exited with {code}:\n{proxy.log()}")
    raise TimeoutError(f"proxy not healthy after {STARTUP_DEADLINE_SECONDS}s:\n{proxy.log()}")
