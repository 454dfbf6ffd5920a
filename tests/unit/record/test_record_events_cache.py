"""client-go's ``events_cache_test.go``: the correlator's aggregation, dedup and spam filter.

The main table is ``TestEventCorrelator`` with its inputs and expected outputs. The clock is a
``SimpleIntervalClock`` stepping ``interval`` seconds per read, and each correlation reads it
three times (the test stamps the event, the aggregator, the spam filter), as upstream.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pytest
from record_fakes import (
    ManualClock,
    SimpleIntervalClock,
    make_event,
    make_events,
    make_object_reference,
    make_similar_events,
    make_unique_events,
    set_count,
)

from jobflow_controller.record import CorrelatorOptions, Event, EventCorrelator
from jobflow_controller.record.events_cache import (
    DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS,
    DEFAULT_AGGREGATE_MAX_EVENTS,
    DEFAULT_SPAM_BURST,
    MAX_LRU_CACHE_ENTRIES,
    EventSpamKeyFunc,
    TokenBucketPassiveRateLimiter,
    event_aggregator_by_reason_func,
    event_aggregator_by_reason_message_func,
    get_event_key,
    get_spam_key,
)
from jobflow_controller.record.lru import LRUCache
from jobflow_controller.record.types import format_time

POD = make_object_reference("Pod", "my-pod", "my-ns")
FIRST = make_event("first", "i am first", POD)
DUPLICATE = make_event("duplicate", "me again", POD)
UNIQUE = make_event("unique", "snowflake", POD)
SIMILAR = make_event("similar", "similar message", {**POD, "fieldPath": "spec.containers{container1}"})
AGGREGATE = make_event("similar", event_aggregator_by_reason_message_func(SIMILAR), SIMILAR["involvedObject"])
SIMILAR_OTHER_CONTAINER = make_event("similar", "similar message", {**POD, "fieldPath": "spec.containers{container2}"})


@dataclass
class Scenario:
    previous: list[Event] = field(default_factory=list)
    new: Event = field(default_factory=dict)
    expected: Event | None = None
    interval: float = 5
    expect_skip: bool = False


SCENARIOS = {
    "create-a-single-event": Scenario(new=FIRST, expected=set_count(FIRST, 1)),
    "the-same-event-should-just-count": Scenario(
        previous=make_events(1, DUPLICATE), new=DUPLICATE, expected=set_count(DUPLICATE, 2)
    ),
    "the-same-event-should-just-count-even-if-more-than-aggregate": Scenario(
        previous=make_events(DEFAULT_AGGREGATE_MAX_EVENTS, DUPLICATE),
        new=DUPLICATE,
        expected=set_count(DUPLICATE, DEFAULT_AGGREGATE_MAX_EVENTS + 1),
        interval=30,
    ),
    "the-same-event-is-spam-if-happens-too-frequently": Scenario(
        previous=make_events(DEFAULT_SPAM_BURST + 1, DUPLICATE), new=DUPLICATE, expect_skip=True, interval=1
    ),
    "create-many-unique-events": Scenario(previous=make_unique_events(30), new=UNIQUE, expected=set_count(UNIQUE, 1)),
    "similar-events-should-aggregate-event": Scenario(
        previous=make_similar_events(DEFAULT_AGGREGATE_MAX_EVENTS - 1, SIMILAR, SIMILAR["message"]),
        new=SIMILAR,
        expected=set_count(AGGREGATE, 1),
    ),
    "similar-events-many-times-should-count-the-aggregate": Scenario(
        previous=make_similar_events(DEFAULT_AGGREGATE_MAX_EVENTS, SIMILAR, SIMILAR["message"]),
        new=SIMILAR,
        expected=set_count(AGGREGATE, 2),
    ),
    "events-from-different-containers-do-not-aggregate": Scenario(
        previous=make_events(1, SIMILAR_OTHER_CONTAINER), new=SIMILAR, expected=set_count(SIMILAR, 1)
    ),
    "similar-events-whose-interval-is-greater-than-aggregate-interval-do-not-aggregate": Scenario(
        previous=make_similar_events(DEFAULT_AGGREGATE_MAX_EVENTS - 1, SIMILAR, SIMILAR["message"]),
        new=SIMILAR,
        expected=set_count(SIMILAR, 1),
        interval=DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS,
    ),
}


def _stamp(event: Event, clock: SimpleIntervalClock) -> Event:
    stamped = copy.deepcopy(event)
    clock.now()
    stamped["firstTimestamp"] = stamped["lastTimestamp"] = format_time(clock.wall())
    return stamped


def _validate_event(actual: Event, expected: Event) -> None:
    """client-go's ``validateEvent``: timestamps say whether compression happened, the name
    has the expected prefix, every other field is equal."""
    assert actual["firstTimestamp"] and actual["lastTimestamp"], "timestamp wasn't set"
    if expected["count"] > 1:
        assert actual["firstTimestamp"] != actual["lastTimestamp"], "compression must show in timestamps"
    else:
        assert actual["firstTimestamp"] == actual["lastTimestamp"]
    assert actual["metadata"].get("name", "").startswith(expected["metadata"].get("name", ""))
    for field_name in ("reason", "message", "involvedObject", "source", "count", "type"):
        assert actual[field_name] == expected[field_name], field_name


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_event_correlator(name: str) -> None:
    scenario = SCENARIOS[name]
    clock = SimpleIntervalClock(step=scenario.interval)
    correlator = EventCorrelator(clock)
    for previous in scenario.previous:
        result = correlator.event_correlate(_stamp(previous, clock))
        if not result.skip:
            assert result.event is not None
            correlator.update_state(result.event)

    result = correlator.event_correlate(_stamp(scenario.new, clock))

    assert result.skip is scenario.expect_skip
    if scenario.expect_skip:
        return
    assert result.event is not None and scenario.expected is not None
    _validate_event(result.event, scenario.expected)


def test_aggregate_event_carries_the_combined_message_and_drops_reporting_fields() -> None:
    clock = SimpleIntervalClock(step=5)
    correlator = EventCorrelator(clock)
    for event in make_similar_events(DEFAULT_AGGREGATE_MAX_EVENTS - 1, SIMILAR, "m"):
        correlator.event_correlate({**event, "reportingComponent": "kubelet"})

    result = correlator.event_correlate({**SIMILAR, "reportingComponent": "kubelet"})

    assert result.event is not None
    assert result.event["message"] == "(combined from similar events): similar message"
    assert result.event["reportingComponent"] == ""
    assert result.event["reportingInstance"] == ""
    assert result.event["metadata"]["name"].startswith("my-pod.")
    assert result.patch is None


def test_the_tenth_distinct_message_aggregates_but_the_ninth_does_not() -> None:
    correlator = EventCorrelator(SimpleIntervalClock(step=1))
    messages = []
    for event in make_similar_events(DEFAULT_AGGREGATE_MAX_EVENTS, SIMILAR, "x"):
        result = correlator.event_correlate(event)
        assert result.event is not None
        messages.append(result.event["message"])

    assert not any(m.startswith("(combined") for m in messages[:9])
    assert messages[9] == "(combined from similar events): x-9-similar message"


def test_dedup_patch_carries_count_last_timestamp_and_message() -> None:
    clock = ManualClock()
    correlator = EventCorrelator(clock)
    first = correlator.event_correlate(copy.deepcopy(DUPLICATE))
    assert first.event is not None and first.patch is None
    server_copy = copy.deepcopy(first.event)
    server_copy["metadata"].update(name="my-pod.abc", resourceVersion="7")
    correlator.update_state(server_copy)

    repeat = copy.deepcopy(DUPLICATE)
    repeat["lastTimestamp"] = "2026-03-01T12:05:00Z"
    second = correlator.event_correlate(repeat)

    assert second.event is not None
    assert second.event["count"] == 2
    assert second.event["metadata"]["name"] == "my-pod.abc"
    assert second.event["metadata"]["resourceVersion"] == "7"
    assert second.event["firstTimestamp"] == DUPLICATE["firstTimestamp"]
    assert second.patch == {"count": 2, "lastTimestamp": "2026-03-01T12:05:00Z", "message": "me again"}


def test_correlate_does_not_modify_its_input() -> None:
    correlator = EventCorrelator(ManualClock())
    event = copy.deepcopy(DUPLICATE)
    correlator.event_correlate(copy.deepcopy(event))
    before = copy.deepcopy(event)

    correlator.event_correlate(event)

    assert event == before


def test_skipped_repeats_still_advance_the_count() -> None:
    """The logger runs before the spam filter, so the first write after a throttled burst
    carries the count of every repeat, skipped ones included."""
    clock = ManualClock()
    correlator = EventCorrelator(clock)
    counts = []
    for _ in range(DEFAULT_SPAM_BURST + 3):
        result = correlator.event_correlate(copy.deepcopy(DUPLICATE))
        counts.append(None if result.skip else result.event["count"] if result.event else None)
    assert counts[:DEFAULT_SPAM_BURST] == list(range(1, DEFAULT_SPAM_BURST + 1))
    assert counts[DEFAULT_SPAM_BURST:] == [None, None, None]

    clock.step(300)  # one token
    result = correlator.event_correlate(copy.deepcopy(DUPLICATE))

    assert result.event is not None and result.event["count"] == DEFAULT_SPAM_BURST + 4


def test_spam_filter_refills_one_token_per_five_minutes() -> None:
    clock = ManualClock()
    correlator = EventCorrelator(clock)
    accepted = sum(not correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip for _ in range(DEFAULT_SPAM_BURST + 5))
    assert accepted == DEFAULT_SPAM_BURST

    clock.step(299)
    assert correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip
    clock.step(1)
    assert not correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip
    assert correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip


def test_spam_filter_keys_by_type() -> None:
    correlator = EventCorrelator(ManualClock(), CorrelatorOptions(burst_size=1))
    assert not correlator.event_correlate(copy.deepcopy(FIRST)).skip
    warning = {**copy.deepcopy(FIRST), "type": "Warning"}
    assert not correlator.event_correlate(warning).skip


def test_aggregator_by_reason_func() -> None:
    pod = make_object_reference("Pod", "pod1", "other")
    event1 = make_event("end-of-world", "it was fun", pod)
    event2 = make_event("end-of-world", "it was awful", pod)
    event3 = make_event("nevermind", "it was a bug", pod)

    agg_key1, local_key1 = event_aggregator_by_reason_func(event1)
    agg_key2, local_key2 = event_aggregator_by_reason_func(event2)
    agg_key3, _ = event_aggregator_by_reason_func(event3)

    assert agg_key1 == agg_key2
    assert local_key1 != local_key2
    assert agg_key1 != agg_key3


def test_aggregator_by_reason_message_func() -> None:
    event = make_event("end-of-world", "it was fun", make_object_reference("Pod", "pod1", "other"))
    assert event_aggregator_by_reason_message_func(event) == "(combined from similar events): it was fun"


def _spam_key_by_object_and_reason(event: Event) -> str:
    source, ref = event["source"], event["involvedObject"]
    return "".join(
        (
            source.get("component", ""),
            source.get("host", ""),
            ref.get("kind", ""),
            ref.get("namespace", ""),
            ref.get("name", ""),
            ref.get("uid", ""),
            ref.get("apiVersion", ""),
            event.get("reason", ""),
        )
    )


ORIGINAL = make_event("original", "don't run", POD)
DIFFERENT_REASON = make_event("duplicate", "don't run", POD)


@pytest.mark.parametrize(
    ("pre_events", "spam_key_func", "expect_skip"),
    [
        pytest.param([ORIGINAL], None, True, id="same-object-is-spam-with-default-key"),
        pytest.param([ORIGINAL], _spam_key_by_object_and_reason, False, id="different-reason-not-spam-with-reason-key"),
        pytest.param(
            [DIFFERENT_REASON], _spam_key_by_object_and_reason, True, id="same-reason-is-spam-with-reason-key"
        ),
    ],
)
def test_event_spam_filter(pre_events: list[Event], spam_key_func: EventSpamKeyFunc | None, expect_skip: bool) -> None:
    options = CorrelatorOptions(
        clock=SimpleIntervalClock(step=1),
        burst_size=1,
        spam_key_func=spam_key_func,
    )
    correlator = EventCorrelator(options=options)
    for event in pre_events:
        correlator.event_correlate(copy.deepcopy(event))

    result = correlator.event_correlate(copy.deepcopy(DIFFERENT_REASON))

    assert result.skip is expect_skip


def test_event_key_includes_field_path_and_message_but_not_resource_version() -> None:
    base = make_event("r", "m", POD)
    assert get_event_key(base) != get_event_key({**base, "message": "other"})
    other_path = {**base, "involvedObject": {**POD, "fieldPath": "spec.containers{other}"}}
    assert get_event_key(base) != get_event_key(other_path)
    new_rv = {**base, "involvedObject": {**POD, "resourceVersion": "42"}}
    assert get_event_key(base) == get_event_key(new_rv)


def test_spam_key_ignores_reason_and_message() -> None:
    base = make_event("r", "m", POD)
    assert get_spam_key(base) == get_spam_key({**base, "reason": "x", "message": "y"})
    assert get_spam_key(base) != get_spam_key({**base, "type": "Warning"})


def test_token_bucket_starts_full_and_never_exceeds_burst() -> None:
    clock = ManualClock()
    bucket = TokenBucketPassiveRateLimiter(qps=1.0, burst=3, clock=clock)
    assert [bucket.try_accept() for _ in range(4)] == [True, True, True, False]
    clock.step(100)
    assert [bucket.try_accept() for _ in range(4)] == [True, True, True, False]


def test_lru_cache_evicts_least_recently_used() -> None:
    cache: LRUCache[int] = LRUCache(2)
    cache.add("a", 1)
    cache.add("b", 2)
    assert cache.get("a") == 1  # "b" is now the oldest
    cache.add("c", 3)
    assert cache.get("b") is None
    assert cache.get("a") == 1 and cache.get("c") == 3
    assert MAX_LRU_CACHE_ENTRIES == 4096


def test_dedup_cache_forgets_beyond_its_size() -> None:
    correlator = EventCorrelator(ManualClock(), CorrelatorOptions(lru_cache_size=2, burst_size=100))
    events = make_unique_events(3)
    for event in events:
        correlator.event_correlate(copy.deepcopy(event))

    again = correlator.event_correlate(copy.deepcopy(events[0]))

    assert again.event is not None and again.event["count"] == 1


def _cached(correlator: EventCorrelator) -> tuple[int, int, int]:
    """Entries held by the aggregator, the logger and the spam filter."""
    return len(correlator._aggregator._cache), len(correlator._logger._cache), len(correlator._spam_filter._cache)


def test_expired_aggregate_records_and_full_spam_buckets_are_forgotten() -> None:
    """A record past its window and a bucket refilled to its burst would be started afresh when
    next met: the correlator drops them as it goes, so a long-running controller's caches hold
    what is recent, not the last 4096 objects. The logger keeps its entries (a repeat PATCHes)."""
    clock = ManualClock()
    correlator = EventCorrelator(clock)
    for event in make_unique_events(5):  # five objects, one event each
        correlator.event_correlate(copy.deepcopy(event))
    assert _cached(correlator) == (5, 5, 5)

    # One token spent of 25, back after 300 s; the aggregation window is 600 s.
    clock.step(DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS + 1)
    correlator.event_correlate(copy.deepcopy(FIRST))
    assert _cached(correlator) == (1, 6, 1)


def test_a_spam_bucket_still_refilling_is_kept() -> None:
    clock = ManualClock()
    correlator = EventCorrelator(clock)
    for _ in range(DEFAULT_SPAM_BURST):  # the bucket of DUPLICATE's object is empty
        correlator.event_correlate(copy.deepcopy(DUPLICATE))
    clock.step(301)  # one token back, 24 short of full
    other = make_event("other", "on another object", make_object_reference("Pod", "other-pod", "my-ns"))
    correlator.event_correlate(other)
    assert _cached(correlator)[2] == 2
    # Its state is the one that decides: one event passes, the next is skipped.
    assert not correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip
    assert correlator.event_correlate(copy.deepcopy(DUPLICATE)).skip


@pytest.mark.parametrize("gap", [1.0, 299.0, 601.0, 7600.0])
def test_forgetting_changes_no_decision(gap: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same stream, correlated by caches that forget and by caches that cannot (their `oldest`
    hidden), gives the same events, counts and skips, whatever the gaps."""

    def run() -> tuple[list[tuple[bool, str, int]], tuple[int, int, int]]:
        clock = ManualClock()
        correlator = EventCorrelator(clock)
        out = []
        for round_ in range(4):
            stream = [*make_similar_events(4, SIMILAR, f"r{round_}"), *[DUPLICATE] * 12, UNIQUE, FIRST]
            for event in stream:
                result = correlator.event_correlate(copy.deepcopy(event))
                written = result.event or {}
                out.append((result.skip, str(written.get("message")), int(written.get("count") or 0)))
            clock.step(gap)
        correlator.event_correlate(copy.deepcopy(FIRST))
        return out, _cached(correlator)

    forgetting, forgetting_sizes = run()
    monkeypatch.setattr(LRUCache, "oldest", lambda self: None)
    keeping, keeping_sizes = run()
    assert forgetting == keeping
    if gap > DEFAULT_AGGREGATE_INTERVAL_IN_SECONDS:
        assert forgetting_sizes < keeping_sizes
