"""``agent_hooks_upstream_tokens_total{route,kind}`` end to end: ``agent-hooks serve`` in front of
an upstream whose answers report their usage, in each dialect, streamed and not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy
from tests.servers.processes import free_port, running_server

USAGE_UPSTREAM = Path(__file__).resolve().parent / "usage_upstream.py"
USER = {"role": "user", "content": "What time is it?"}
ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": ("/v1/chat/completions", {"messages": [USER]}),
    "responses": ("/v1/responses", {"input": "What time is it?"}),
    "anthropic": ("/v1/messages", {"max_tokens": 8, "messages": [USER]}),
}
EXPECTED = {
    "chat": {"input": 40, "cached_input": 60, "output": 7},
    "responses": {"input": 40, "cached_input": 60, "output": 7},
    "anthropic": {"input": 40, "cached_input": 60, "cache_write": 5, "output": 7},
}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("usage-upstream") / "server.log"
    with running_server([str(USAGE_UPSTREAM), str(port)], port=port, log_path=log) as url:
        yield url


@pytest.fixture(scope="module", params=["no hooks", "completion hook"])
def proxy(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, upstream: str
) -> Iterator[Proxy]:
    """Without hooks the proxy looks for the usage in an answer it does not otherwise read; a
    completion hook makes it read every answer."""
    manifest: dict[str, Any] = {"hooks": []}
    if request.param == "completion hook":
        manifest = {
            "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
            "hooks": [
                {
                    "kind": "tool_call",
                    "event": "on_completion",
                    "name": "after",
                    "tool_name": "current_time",
                }
            ],
        }
    workdir = tmp_path_factory.mktemp("usage-proxy")
    with running_proxy(manifest, workdir, "--upstream", upstream) as running:
        yield running


def tokens(proxy: Proxy, route: str) -> dict[str, float]:
    """The route's token counts by kind, as ``/metrics`` shows them."""
    text = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    return {
        sample.labels["kind"]: sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "agent_hooks_upstream_tokens"
        for sample in family.samples
        if sample.name.endswith("_total") and sample.labels["route"] == route
    }


def post(proxy: Proxy, route: str, model: str, *, stream: bool) -> httpx.Response:
    path, body = ROUTES[route]
    headers = {"authorization": f"Bearer {CLIENT_KEY}", "x-api-key": CLIENT_KEY}
    answer = httpx.post(
        f"{proxy.url}{path}",
        json={"model": model, **body, "stream": stream},
        headers={**headers, "anthropic-version": "2023-06-01"},
        timeout=20,
    )
    assert answer.status_code == 200, answer.text
    return answer


@pytest.mark.parametrize("stream", [False, True], ids=["json", "streamed"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_each_answers_usage_is_counted_by_route_and_kind(
    proxy: Proxy, route: str, stream: bool
) -> None:
    before = tokens(proxy, route)
    post(proxy, route, "m", stream=stream)
    after = tokens(proxy, route)
    added = {kind: after[kind] - before.get(kind, 0.0) for kind in after}
    assert {kind: count for kind, count in added.items() if count} == EXPECTED[route]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "streamed"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_usage_that_is_no_usage_counts_nothing_and_the_answer_goes_through(
    proxy: Proxy, route: str, stream: bool
) -> None:
    before = tokens(proxy, route)
    answer = post(proxy, route, "garbage", stream=stream)
    assert "It is noon." in answer.text
    assert tokens(proxy, route) == before
