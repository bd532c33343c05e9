"""The proxy's app in the test process, for tests that send many bodies: Starlette's test client
runs its lifespan (hooks app, store, upstream client) and serves it without a socket, while the
upstream and tools stay real servers on 127.0.0.1 (or the embedded echo model)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from agent_hooks.config import ApplicationConfig
from agent_hooks.serve._app import ServeSettings, create_app
from agent_hooks.serve._generations import Generation, Generations
from agent_hooks.state import open_store


@contextmanager
def in_process_proxy(
    manifest: Mapping[str, Any],
    workdir: Path,
    *,
    upstream: str | None = None,
    api_key: str | None = None,
    tenant_header: str | None = None,
) -> Iterator[TestClient]:
    """A client for the proxy app, serving until the block ends; a 500 is an answer (the tests
    assert there is none), not an exception raised into the test."""
    config = ApplicationConfig.from_dict(dict(manifest), preview=True)
    settings = ServeSettings(
        generations=Generations(Generation.build(config, hooks=True)),
        store=open_store(f"sqlite:///{workdir}/state.db"),
        upstream=upstream,
        upstream_timeout_seconds=10,
        upstream_api_key=api_key,
        forward_auth=False,
        tenant_header=tenant_header,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client
