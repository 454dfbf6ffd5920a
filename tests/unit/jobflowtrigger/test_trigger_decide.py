"""concurrencyPolicy on a firing (jobflowtrigger/decide.py), and the rate limiter, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from jobflow_controller.jobflowtrigger.decide import FireDecision, decide_fire
from jobflow_controller.jobflowtrigger.ratelimit import TriggerRateLimiter

ACTIVE = [{"name": "t-abcde", "uid": "u1"}]


def trigger(policy: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"jobFlowTemplateRef": {"name": "etl"}, "http": {}}
    if policy is not None:
        spec["concurrencyPolicy"] = policy
    return {"metadata": {"name": "t", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize(
    ("policy", "active", "decision"),
    [
        (None, [], FireDecision(True)),
        (None, ACTIVE, FireDecision(True)),
        ("Allow", ACTIVE, FireDecision(True)),
        ("Forbid", [], FireDecision(True)),
        ("Forbid", ACTIVE, FireDecision(False, blocked_by="t-abcde")),
        ("Replace", [], FireDecision(True)),
        ("Replace", ACTIVE, FireDecision(True, replace=ACTIVE)),
    ],
)
def test_concurrency_policy_decides_a_firing(policy: str | None, active: list[Any], decision: FireDecision) -> None:
    assert decide_fire(trigger(policy), active) == decision


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_trigger_fires_its_burst_then_is_limited() -> None:
    clock = Clock()
    limiter = TriggerRateLimiter(1.0, 5, clock=clock)
    assert [limiter.allow("ns/t") for _ in range(6)] == [True] * 5 + [False]
    assert limiter.retry_after("ns/t") == pytest.approx(1.0)


def test_the_bucket_refills_at_the_rate() -> None:
    clock = Clock()
    limiter = TriggerRateLimiter(1.0, 5, clock=clock)
    for _ in range(5):
        limiter.allow("ns/t")
    clock.now += 2.0
    assert [limiter.allow("ns/t") for _ in range(3)] == [True, True, False]


def test_each_trigger_has_its_own_bucket() -> None:
    limiter = TriggerRateLimiter(1.0, 1, clock=Clock())
    assert limiter.allow("ns/a") and limiter.allow("ns/b")
    assert not limiter.allow("ns/a")


def test_the_buckets_kept_are_bounded() -> None:
    limiter = TriggerRateLimiter(1.0, 1, clock=Clock(), max_buckets=2)
    for key in ("a", "b", "c"):
        limiter.allow(key)
    assert len(limiter._buckets) == 2
