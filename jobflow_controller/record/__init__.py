"""Event recording as client-go's ``tools/record`` does it: core/v1 Events that
``kubectl describe`` shows, with aggregation, dedup and a spam filter in front of the API.

Typical wiring (the controller-manager owns the broadcaster and shuts it down at exit)::

    broadcaster = EventBroadcaster()
    broadcaster.start_structured_logging()
    broadcaster.start_recording_to_sink(KubeEventSink(api_client))
    recorder = broadcaster.new_recorder("vc-controller-manager")
    recorder.eventf(jobflow, EVENT_TYPE_NORMAL, "Created", "create a job named %s!", job_name)
    ...
    broadcaster.shutdown()
"""

from .clock import Clock, RealClock
from .event import DEFAULT_SHUTDOWN_TIMEOUT, MAX_QUEUED_EVENTS, EventBroadcaster, EventWatcher
from .events_cache import CorrelatorOptions, EventCorrelateResult, EventCorrelator
from .fake import FakeRecorder
from .record_to_sink import DEFAULT_SLEEP_DURATION, MAX_TRIES_PER_EVENT, record_to_sink
from .recorder import EventRecorder, generate_event_name
from .reference import KindResolver, ObjectReferenceError, get_reference
from .sink import EventSink, SinkError
from .types import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, Event, EventSource
from .util import validate_event_type

__all__ = [
    "DEFAULT_SHUTDOWN_TIMEOUT",
    "DEFAULT_SLEEP_DURATION",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "MAX_QUEUED_EVENTS",
    "MAX_TRIES_PER_EVENT",
    "Clock",
    "CorrelatorOptions",
    "Event",
    "EventBroadcaster",
    "EventCorrelateResult",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "EventSource",
    "EventWatcher",
    "FakeRecorder",
    "KindResolver",
    "ObjectReferenceError",
    "RealClock",
    "SinkError",
    "generate_event_name",
    "get_reference",
    "record_to_sink",
    "validate_event_type",
]
