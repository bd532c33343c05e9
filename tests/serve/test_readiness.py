"""``GET /readyz`` (SPEC 17): 200 only while the manifest is loaded and the store answers, 503
with the reason otherwise; ``/healthz`` stays "the process is up" whatever the store does."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.serve._proxy import running_proxy
from tests.serve.test_proxy import manifest
from tests.servers.fixtures import RecordingServer
from tests.servers.redis import RedisServer, blackholed_port


def probe(url: str, path: str) -> httpx.Response:
    return httpx.get(f"{url}{path}", timeout=10)


def test_ready_with_sqlite_state(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    with running_proxy(manifest(rest_server.url), tmp_path, "--upstream", upstream.url) as proxy:
        ready = probe(proxy.url, "/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready"}


def test_readiness_follows_a_redis_that_stops_and_starts_again(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        options = ("--upstream", upstream.url, "--state", redis.url)
        with running_proxy(manifest(rest_server.url), tmp_path / "proxy", *options) as proxy:
            assert probe(proxy.url, "/readyz").status_code == 200
            redis.kill()
            down = probe(proxy.url, "/readyz")
            alive = probe(proxy.url, "/healthz")
            redis.start()  # the same port: the pool reconnects
            again = probe(proxy.url, "/readyz")
    finally:
        redis.kill()
    assert down.status_code == 503
    assert down.json()["status"] == "unavailable"
    assert down.json()["reason"].startswith("redis store: ")
    assert alive.status_code == 200
    assert again.status_code == 200


def test_a_blackholed_redis_is_not_ready_within_the_store_bound(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    with blackholed_port() as port:
        options = ("--upstream", upstream.url, "--state", f"redis://127.0.0.1:{port}/0")
        with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
            down = probe(proxy.url, "/readyz")
    assert down.status_code == 503
    assert down.json()["reason"] == "redis store: no answer within 2 s"
