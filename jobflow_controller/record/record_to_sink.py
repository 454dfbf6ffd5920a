"""Writing one event to the sink: correlate, then create or patch, retried (client-go ``recordToSink``).

A transport failure is retried up to ``MAX_TRIES_PER_EVENT`` times, ``DEFAULT_SLEEP_DURATION`` apart
(the first sleep a random fraction of it, so many clients do not hammer a recovering API server
in step), through tenacity with a sleep the broadcaster's shutdown interrupts.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
import tenacity

from jobflow_controller.apis.jsontype import json_copy

from ._log_fields import event_fields
from .events_cache import EventCorrelator
from .sink import EventSink, SinkError
from .types import Event

__all__ = ["DEFAULT_SLEEP_DURATION", "MAX_TRIES_PER_EVENT", "record_event", "record_to_sink"]

_log = structlog.get_logger(__name__)

#: Attempts per event write before giving up.
MAX_TRIES_PER_EVENT = 12
#: Seconds between write attempts (the first sleep is a random fraction of it).
DEFAULT_SLEEP_DURATION = 10.0


@dataclass(frozen=True)
class _Outcome:
    """One write attempt: ``done`` ends the loop (written or given up); ``err`` is why not."""

    done: bool
    err: BaseException | None = None


class _BroadcasterStopped(Exception):
    """Raised from the retry sleep when the broadcaster shuts down, to abandon the event."""


def record_event(
    sink: EventSink,
    event: Event,
    patch: Mapping[str, Any] | None,
    update_existing: bool,
    correlator: EventCorrelator,
) -> _Outcome:
    """One attempt at writing ``event`` (client-go ``recordEvent``)."""
    new_event: Any = None
    err: BaseException | None = None
    if update_existing:
        try:
            new_event = sink.patch(event, patch or {})
        except Exception as exc:  # noqa: BLE001 - any sink failure is classified below
            err = exc
    # The stored event may have expired (events have a TTL); then it is created anew.
    if not update_existing or (isinstance(err, SinkError) and err.not_found):
        event["metadata"].pop("resourceVersion", None)
        err = None
        try:
            new_event = sink.create(event)
        except Exception as exc:  # noqa: BLE001 - any sink failure is classified below
            err = exc
    if err is None:
        if isinstance(new_event, Mapping):
            correlator.update_state(dict(new_event))
            return _Outcome(done=True)
        err = TypeError(f"sink returned {type(new_event).__name__}, not an Event")
    if isinstance(err, SinkError) and not err.retriable:
        if err.status is None:
            _log.error("Unable to construct event (will not retry!)", err=str(err), **event_fields(event))
        elif err.already_exists or err.namespace_terminating:
            _log.debug("Server rejected event (will not retry!)", err=str(err), **event_fields(event))
        else:
            _log.error("Server rejected event (will not retry!)", err=str(err), **event_fields(event))
        return _Outcome(done=True, err=err)
    return _Outcome(done=False, err=err)


def record_to_sink(
    sink: EventSink,
    event: Event,
    correlator: EventCorrelator,
    sleep_duration: float,
    stop: threading.Event,
    *,
    rand: Callable[[], float] = random.random,
) -> None:
    """Correlate ``event`` and write the result, retrying transport failures.

    Up to ``MAX_TRIES_PER_EVENT`` attempts; the first sleep is ``sleep_duration * rand()`` so
    that many clients do not hammer a recovering API server in step, later ones are exactly
    ``sleep_duration``. Setting ``stop`` abandons the event at the next sleep.
    """
    event = json_copy(event)
    result = correlator.event_correlate(event)
    if result.skip or result.event is None:
        return
    to_write = result.event
    update_existing = int(to_write.get("count") or 0) > 1
    # The first attempt is made here: nearly every write succeeds at once, and building the retry
    # policy costs about as much CPU as the request. Only a failure goes on to the policy, which
    # takes this outcome as its attempt 1 (so its sleeps, logs and limit are unchanged).
    first = record_event(sink, to_write, result.patch, update_existing, correlator)
    if first.done:
        return
    outcomes = [first]

    def attempt() -> _Outcome:
        if outcomes:
            return outcomes.pop()
        return record_event(sink, to_write, result.patch, update_existing, correlator)

    try:
        _retrying(to_write, sleep_duration, stop, rand)(attempt)
    except _BroadcasterStopped:
        _log.error("Unable to write event (broadcaster is shut down)", **event_fields(to_write))


def _last_error(state: tenacity.RetryCallState) -> BaseException | None:
    outcome = state.outcome.result() if state.outcome is not None else None
    return outcome.err if isinstance(outcome, _Outcome) else None


def _retrying(
    to_write: Event, sleep_duration: float, stop: threading.Event, rand: Callable[[], float]
) -> tenacity.Retrying:
    """The retry policy of one event's writes: jittered first sleep, stop-aware, logged as client-go does."""

    def wait(state: tenacity.RetryCallState) -> float:
        return sleep_duration * rand() if state.attempt_number == 1 else sleep_duration

    def sleep(seconds: float) -> None:
        if stop.wait(seconds):
            raise _BroadcasterStopped

    def before_sleep(state: tenacity.RetryCallState) -> None:
        err = _last_error(state)
        _log.error(
            "Unable to write event (may retry after sleeping)",
            err=str(err),
            errType=type(err).__name__,
            attempt=state.attempt_number,
            sleepSeconds=round(state.upcoming_sleep, 3),
            **event_fields(to_write),
        )

    def give_up(state: tenacity.RetryCallState) -> _Outcome:
        if stop.is_set():
            _log.error("Unable to write event (broadcaster is shut down)", **event_fields(to_write))
        else:
            _log.error(
                "Unable to write event (retry limit exceeded!)",
                err=str(_last_error(state)),
                attempts=state.attempt_number,
                **event_fields(to_write),
            )
        return _Outcome(done=False)

    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(MAX_TRIES_PER_EVENT) | tenacity.stop_when_event_set(stop),
        wait=wait,
        sleep=sleep,
        retry=tenacity.retry_if_result(lambda outcome: not outcome.done),
        before_sleep=before_sleep,
        retry_error_callback=give_up,
    )
