"""``GET /metrics``: the proxy's counters in Prometheus text, through ``prometheus-client``.

The names and labels are SPEC 12.1's, and nothing else: no content, no tenant and no
conversation id ever becomes a label (a label per user would also grow without bound). Each app
has its own registry, so two servers in one process (tests) never share counts.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from agent_hooks import HookRunRecord

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


class Metrics:
    """The five metrics of SPEC 12.1, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "agent_hooks_requests_total",
            "Requests answered, by route and HTTP status.",
            ["route", "status"],
            registry=self.registry,
        )
        self._request_seconds = Histogram(
            "agent_hooks_request_duration_seconds",
            "Time from a request's arrival to its answer's last byte, by route.",
            ["route"],
            registry=self.registry,
        )
        self._hook_runs = Counter(
            "agent_hooks_hook_runs_total",
            "Hook runs, by hook name and outcome.",
            ["hook", "outcome"],
            registry=self.registry,
        )
        self._hook_seconds = Histogram(
            "agent_hooks_hook_duration_seconds",
            "Time one hook took, by hook name.",
            ["hook"],
            registry=self.registry,
        )
        self._state_errors = Counter(
            "agent_hooks_state_errors_total",
            "Conversation store calls that failed or timed out (the request went on without).",
            registry=self.registry,
        )

    def request(self, route: str, status: int, seconds: float) -> None:
        self._requests.labels(route=route, status=str(status)).inc()
        self._request_seconds.labels(route=route).observe(seconds)

    def hooks(self, records: Iterable[HookRunRecord]) -> None:
        for record in records:
            self._hook_runs.labels(hook=record.hook, outcome=str(record.outcome)).inc()
            self._hook_seconds.labels(hook=record.hook).observe(record.latency_ms / 1000)

    def state_error(self) -> None:
        self._state_errors.inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
