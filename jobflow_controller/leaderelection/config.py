"""What a leader elector is built from (client-go's `LeaderElectionConfig`, `LeaderCallbacks`).

The durations, the callbacks and the lock, with `NewLeaderElector`'s checks (`validate`) in its
order and with its messages; plus the clock the elector reads and `wait.Jitter`.
"""

from __future__ import annotations

import datetime
import math
import random
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from workqueue import RealClock as WorkqueueRealClock

from .healthz import HealthzAdaptor
from .resourcelock import ResourceLock

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "Clock",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "RealClock",
    "default_identity",
    "jitter",
    "nanos",
    "validate",
]

#: client-go's `JitterFactor`: acquire retries wait `retry_period * [1, 2.2)`.
JITTER_FACTOR = 1.2

# component-base's RecommendedDefaultLeaderElectionConfiguration, used by kube-controller-manager
# and vc-controller-manager. client-go itself has no defaults.
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0


class Clock(Protocol):
    """The time source the elector needs; the workqueue's RealClock/FakeClock satisfy it.

    `now` is monotonic seconds (lease expiry is judged on it), `wall` is the aware-UTC time written
    into the record, and `sleep` returns True as soon as `stop` is set (False when the time ran out).
    """

    def now(self) -> float: ...

    def wall(self) -> datetime.datetime: ...

    def sleep(self, seconds: float, stop: threading.Event | None = None, /) -> bool: ...


# The project's one real clock satisfies `Clock`; re-exported so callers need not know where it lives.
RealClock = WorkqueueRealClock


def jitter(duration: float, max_factor: float, rng: random.Random | None = None) -> float:
    """`wait.Jitter`: a duration in [duration, duration * (1 + max_factor)); factor <= 0 means 1."""
    if max_factor <= 0.0:
        max_factor = 1.0
    r = rng.random() if rng is not None else random.random()
    return duration + r * max_factor * duration


def default_identity() -> str:
    """`<hostname>_<uuid>`, as controller managers build it: the hostname tells operators which
    pod leads, the uuid keeps two processes on one host (or a restarted pod) apart."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True, slots=True)
class LeaderCallbacks:
    """client-go's `LeaderCallbacks`.

    `on_started_leading(leading)` runs on its own thread once the lease is acquired; `leading` is
    set when leadership ends. `on_stopped_leading()` runs on `run`'s thread when `run` returns,
    **always**, even if leadership was never acquired, so do not assume it follows a start.
    `on_new_leader(identity)` runs on its own thread whenever the observed holder changes,
    including the first observation, ourselves, and "" after a release.
    """

    on_started_leading: Callable[[threading.Event], None] | None = None
    on_stopped_leading: Callable[[], None] | None = None
    on_new_leader: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """client-go's `LeaderElectionConfig`; durations are seconds.

    `lease_duration`: how long a candidate waits, from the last *observed change* of the record,
    before it may take over. `renew_deadline`: how long the leader keeps retrying a renewal before
    it gives up leadership. `retry_period`: the interval between attempts. They must satisfy
    lease_duration > renew_deadline > JITTER_FACTOR * retry_period > 0.

    `release_on_cancel`: on stop, clear the holder so a successor need not wait out the lease. Set
    it only if everything guarded by the lease has finished before the stop event is set;
    otherwise two processes may act at once. `name` labels the metrics and the health error.
    `watch_dog` is tied to the elector by `run_or_die`, as in client-go.

    `may_acquire` (ours, not client-go's): asked before every attempt to take a Lease this
    candidate does not hold; False makes the attempt fail quietly while the record is still read
    and its changes timed, so a candidate that is later allowed takes an expired Lease at once
    (the elastic shards' quota, sharding/rebalance.py). Renewals are never gated.
    """

    lock: ResourceLock
    callbacks: LeaderCallbacks
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    watch_dog: HealthzAdaptor | None = None
    release_on_cancel: bool = False
    name: str = ""
    may_acquire: Callable[[], bool] = lambda: True


def nanos(seconds: float) -> int:
    """A duration as Go's integer nanoseconds, so validation compares exactly as Go's does."""
    return math.floor(seconds * 1e9 + 0.5)


def validate(config: LeaderElectionConfig) -> None:
    """`NewLeaderElector`'s checks, in its order and with its messages."""
    lease = nanos(config.lease_duration)
    renew = nanos(config.renew_deadline)
    retry = nanos(config.retry_period)
    if lease <= renew:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if renew <= int(JITTER_FACTOR * float(retry)):
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if lease < 1:
        raise ValueError("leaseDuration must be greater than zero")
    if renew < 1:
        raise ValueError("renewDeadline must be greater than zero")
    if retry < 1:
        raise ValueError("retryPeriod must be greater than zero")
    if config.callbacks.on_started_leading is None:
        raise ValueError("OnStartedLeading callback must not be nil")
    if config.callbacks.on_stopped_leading is None:
        raise ValueError("OnStoppedLeading callback must not be nil")
    if config.lock is None:
        raise ValueError("Lock must not be nil.")
    if config.lock.identity() == "":
        raise ValueError("Lock identity is empty")
