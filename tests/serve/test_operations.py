"""Running the proxy (SPEC 12.1): metrics, a state store that does not answer, credentials in the
upstream URL."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.serve._proxy import CLIENT_KEY, running_proxy
from tests.serve.test_proxy import USER, manifest
from tests.servers.fixtures import RecordingServer
from tests.servers.redis import blackholed_port

CONVERSATION = "conv-secret-9f2e"


def metric_samples(url: str) -> dict[str, list[dict[str, str]]]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    samples: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(dict(sample.labels))
    return samples


def test_metrics_have_the_spec_names_and_labels_and_no_ids(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    with running_proxy(manifest(rest_server.url), tmp_path, "--upstream", upstream.url) as proxy:
        proxy.client(default_headers={"X-Conversation-Id": CONVERSATION}).chat.completions.create(
            model="m",
            messages=[USER],  # type: ignore[list-item]
            user="u1",
        )
        httpx.get(f"{proxy.url}/nowhere", timeout=10)
        samples = metric_samples(proxy.url)
    assert {"route": "chat", "status": "200"} in samples["agent_hooks_requests_total"]
    assert {"route": "other", "status": "404"} in samples["agent_hooks_requests_total"]
    assert {"hook": "prefs", "outcome": "injected"} in samples["agent_hooks_hook_runs_total"]
    assert {"route": "chat"} in samples["agent_hooks_request_duration_seconds_count"]
    assert "agent_hooks_hook_duration_seconds_bucket" in samples
    assert samples["agent_hooks_state_errors_total"] == [{}]
    labels = {value for series in samples.values() for label in series for value in label.values()}
    assert not labels & {CONVERSATION, "u1", CLIENT_KEY, f"Bearer {CLIENT_KEY}"}


def test_a_blackholed_redis_costs_a_request_at_most_two_seconds(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    with blackholed_port() as port:
        options = ("--upstream", upstream.url, "--state", f"redis://127.0.0.1:{port}/0")
        with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
            client = proxy.client(default_headers={"X-Conversation-Id": CONVERSATION})
            costs = []
            for _ in range(3):
                started = time.monotonic()
                answer = client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
                costs.append(time.monotonic() - started)
                assert answer.choices[0].message.content
            errors = metric_samples(proxy.url)["agent_hooks_state_errors_total"]
            log = proxy.log()
    assert max(costs) < 2.0 + 1.5  # the store's 2 s, plus the request itself on a busy machine
    assert errors == [{}]
    assert "redis store: no answer within 2 s" in log


def test_credentials_in_the_upstream_url_never_reach_a_log(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    with_credentials = upstream.url.replace("http://", "http://proxyuser:url-pass-7d1c@")
    options = ("--upstream", with_credentials)
    with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        log = proxy.log()
    basic = base64.b64encode(b"proxyuser:url-pass-7d1c").decode()
    assert upstream.received()[-1]["headers"]["authorization"] == f"Basic {basic}"
    assert "url-pass-7d1c" not in log
    assert basic not in log
    assert "status=200" in log  # the request's own line is there, without them
