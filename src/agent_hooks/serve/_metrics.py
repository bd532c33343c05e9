"""``GET /metrics``: the proxy's counters in Prometheus text, through ``prometheus-client``.

The names and labels are SPEC 12.1's (and 15's token counter, 17's reload counter), and nothing
else: no content, no
tenant and no conversation id ever becomes a label (a label per user would also grow without
bound). Each app has its own registry, so two servers in one process (tests) never share counts.

With ``--workers N`` each worker process writes its values to files in a directory the parent
made (prometheus-client's multiprocess mode, chosen by ``PROMETHEUS_MULTIPROC_DIR`` when the
library is first imported), and ``GET /metrics``, whichever worker answers it, adds up every
worker's files. A gauge added here needs a ``multiprocess_mode`` saying how to add them up.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

from agent_hooks import HookRunRecord
from agent_hooks.serve._dialects import Usage

__all__ = ["CONTENT_TYPE_LATEST", "RELOAD_RESULTS", "Metrics"]

RELOAD_RESULTS = ("ok", "invalid")
"""``result`` of a reload: the new manifest serves, or it did not load and the old one stays."""


class Metrics:
    """The five metrics of SPEC 12.1, the upstream's tokens (SPEC 15) and the manifest's
    reloads (SPEC 17), in a registry of their own.

    ``summed_from``: the multiprocess directory every worker of this server writes to; ``render``
    then serves the sum of all of them rather than this process's registry.
    """

    def __init__(self, *, summed_from: Path | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._exposed = self.registry
        if summed_from is not None:
            # A registry of its own with only the collector: the workers' metrics themselves
            # must not be in it, or this process's values would be counted twice.
            self._exposed = CollectorRegistry()
            MultiProcessCollector(  # type: ignore[no-untyped-call]
                self._exposed, path=str(summed_from)
            )
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
        self._upstream_tokens = Counter(
            "agent_hooks_upstream_tokens_total",
            "Tokens the upstream's successful answers say they used, by route and kind"
            " (input, cached_input, cache_write, output).",
            ["route", "kind"],
            registry=self.registry,
        )
        self._reloads = Counter(
            "agent_hooks_manifest_reloads_total",
            "Manifest reloads (SIGHUP, --watch), by result: ok, or invalid (the previous"
            " manifest stays).",
            ["result"],
            registry=self.registry,
        )
        for result in RELOAD_RESULTS:  # both series exist from the start, at 0
            self._reloads.labels(result)
        self._token_series: dict[tuple[str, str], Counter] = {}
        # Each label combination's series, looked up once: prometheus-client's labels() takes a
        # lock and builds a key per call, a few microseconds on every request.
        self._request_series: dict[tuple[str, int], tuple[Counter, Histogram]] = {}
        self._hook_series: dict[tuple[str, str], tuple[Counter, Histogram]] = {}

    def request(self, route: str, status: int, seconds: float) -> None:
        key = (route, status)
        series = self._request_series.get(key)
        if series is None:
            series = self._request_series[key] = (
                self._requests.labels(route, str(status)),
                self._request_seconds.labels(route),
            )
        series[0].inc()
        series[1].observe(seconds)

    def hooks(self, records: Iterable[HookRunRecord]) -> None:
        for record in records:
            key = (record.hook, record.outcome)
            series = self._hook_series.get(key)
            if series is None:
                series = self._hook_series[key] = (
                    self._hook_runs.labels(record.hook, str(record.outcome)),
                    self._hook_seconds.labels(record.hook),
                )
            series[0].inc()
            series[1].observe(record.latency_ms / 1000)

    def upstream_tokens(self, route: str, usage: Usage | None) -> None:
        """Count one successful answer's usage; nothing when it said nothing readable."""
        if usage is None:
            return
        for kind, tokens in usage.kinds():
            if tokens:
                series = self._token_series.get((route, kind))
                if series is None:
                    series = self._token_series[route, kind] = self._upstream_tokens.labels(
                        route, kind
                    )
                series.inc(tokens)

    def reload(self, result: str) -> None:
        """Count one reload: ``result`` is one of :data:`RELOAD_RESULTS`."""
        self._reloads.labels(result).inc()

    def state_error(self) -> None:
        self._state_errors.inc()

    def render(self) -> bytes:
        return generate_latest(self._exposed)
