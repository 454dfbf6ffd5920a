"""The manager's Prometheus registry and its /metrics exposition.

prometheus_client appends `_total` to a counter's HELP and TYPE lines even when its samples carry
the bare name; Go's client_golang does not. `exposition()` rewrites those two lines for counters
whose samples have no `_total`, so `volcano_jobflow_succeed_phase_count` reads exactly as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric

#: Ours: how many entries each per-JobFlow memory of the JobFlow controller holds (label `memory`).
MEMORY_OBJECTS = "jobflow_controller_memory_objects"

_HEADER = re.compile(rb"^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*)_total( .*)$")


class _WithSamples:
    """The registry's metric families that have samples: client_golang writes nothing for a vector
    with no children, where prometheus_client would still print its HELP and TYPE lines."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        return (m for m in self.registry.collect() if m.samples)


def exposition(registry: CollectorRegistry) -> bytes:
    text = generate_latest(_WithSamples(registry))

    def has_samples(name: bytes) -> bool:
        # Every sample line follows a newline (the text starts with a HELP line): no set of all names.
        return b"\n" + name + b"{" in text or b"\n" + name + b" " in text

    out = []
    for line in text.split(b"\n"):
        match = _HEADER.match(line) if line.startswith(b"# ") else None
        if match and not has_samples(match.group(2) + b"_total") and has_samples(match.group(2)):
            line = b"# " + match.group(1) + b" " + match.group(2) + match.group(3)
        out.append(line)
    return b"\n".join(out)


class RestClientMetrics:
    """client-go's `rest_client_requests_total`, `rest_client_request_duration_seconds` and
    `rest_client_rate_limiter_duration_seconds`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=registry,
        )
        self.latency = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
            registry=registry,
        )
        self.rate_limiter_latency = Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            ["verb", "host"],
            buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
            registry=registry,
        )

    def observe(self, verb: str, host: str, code: str, seconds: float) -> None:
        self.requests.labels(code=code, method=verb, host=host).inc()
        self.latency.labels(verb=verb, host=host).observe(seconds)

    def observe_rate_limiter(self, verb: str, host: str, seconds: float) -> None:
        self.rate_limiter_latency.labels(verb=verb, host=host).observe(seconds)


class MemoryCollector:
    """`jobflow_controller_memory_objects{memory=...}`, read at scrape time from every running
    JobFlow controller (summed over shard units): a memory that does not fall back once its
    JobFlows are gone is a leak, and a soak can only see that from outside the process."""

    def __init__(self, sizes: Callable[[], Iterable[Mapping[str, int]]]) -> None:
        self._sizes = sizes

    def collect(self) -> Iterator[Metric]:
        totals: dict[str, int] = {}
        for sizes in self._sizes():
            for memory, count in sizes.items():
                totals[memory] = totals.get(memory, 0) + count
        family = GaugeMetricFamily(
            MEMORY_OBJECTS, "Entries held by each per-JobFlow memory of the JobFlow controller.", labels=["memory"]
        )
        for memory, count in sorted(totals.items()):
            family.add_metric([memory], float(count))
        yield family

    def describe(self) -> Iterator[Metric]:
        """Nothing at registration: collect() must not run before the controllers exist."""
        return iter(())
