"""A port of client-go's ``util/workqueue``: the queues controllers drain, and what spaces their retries.

* ``Queue``: fair, stingy (one worker per item at a time, duplicate adds collapse), re-adds an item
  added while it was being processed, drains on shutdown.
* ``DelayingQueue``: plus ``add_after``, with earliest-wins deduplication of waiting items.
* ``RateLimitingQueue``: plus ``add_rate_limited``/``forget``/``num_requeues`` over a rate limiter.
* ``PriorityStorage``: the ready items in lanes by priority (controller-runtime's priority queue),
  plugged into any of them; ``add_with_priority`` and ``add_after(..., priority=)`` choose the lane.
* Rate limiters, ``default_controller_rate_limiter`` (client-go's default) among them.
* ``PrometheusMetricsProvider``: the component-base ``workqueue_*`` metrics, for named queues only.
* ``RealClock``/``FakeClock``: every queue and limiter reads time from an injected clock.

Items are any hashable values; durations are float seconds. This package imports nothing else of the
project, so any part of it (and its tests) can use it.
"""

from workqueue.clock import Clock, FakeClock, RealClock
from workqueue.delaying_queue import MAX_WAIT, DelayingInterface, DelayingQueue
from workqueue.fair_share import FairShare
from workqueue.metrics import (
    DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD,
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    NoopMetricsProvider,
    SettableGaugeMetric,
    set_provider,
)
from workqueue.priority import DEFAULT_PRIORITY, PriorityStorage
from workqueue.prometheus import PrometheusMetricsProvider
from workqueue.queue import Interface, Queue, QueueStorage, default_queue
from workqueue.rate_limiters import (
    INF_DURATION,
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from workqueue.rate_limiting_queue import RateLimitingInterface, RateLimitingQueue

__all__ = [
    "DEFAULT_PRIORITY",
    "DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD",
    "INF_DURATION",
    "MAX_WAIT",
    "BucketRateLimiter",
    "Clock",
    "CounterMetric",
    "DelayingInterface",
    "DelayingQueue",
    "FairShare",
    "FakeClock",
    "GaugeMetric",
    "HistogramMetric",
    "Interface",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "NoopMetricsProvider",
    "PriorityStorage",
    "PrometheusMetricsProvider",
    "Queue",
    "QueueStorage",
    "RateLimiter",
    "RateLimitingInterface",
    "RateLimitingQueue",
    "RealClock",
    "SettableGaugeMetric",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "default_queue",
    "set_provider",
]
