"""EventBroadcaster (client-go ``tools/record/event.go``); the recorder is recorder.py.

The shape is client-go's, on threads:

* ``EventRecorder.event``/``eventf`` builds a core/v1 Event dict and hands it to the broadcaster
  without blocking. The broadcaster's incoming queue holds ``MAX_QUEUED_EVENTS`` (1000) events;
  when it is full the event is dropped with a log line (``watch.DropIfChannelFull``), because
  recording an event must never stall a controller's worker.
* One distribution thread copies each event to every watcher. Each watcher (the API sink, the
  logger) has its own 1000-slot buffer and thread, so a slow API server never delays the log
  and vice versa; a full buffer drops, again like client-go.
* ``start_recording_to_sink`` gives its watcher a fresh :class:`EventCorrelator` and writes with
  :func:`record_to_sink` (record_to_sink.py): correlate, then create or patch, retried on transport errors up to 12
  attempts, 10 s apart with a random first sleep, through tenacity with a sleep that ``shutdown``
  interrupts.
* ``shutdown`` stops intake, lets everything already queued reach the watchers, cancels retry
  sleeps (client-go cancels its context at the same point), and waits a bounded time for the
  watchers to finish writing what they hold.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable

import structlog

from ._log_fields import event_fields, object_key
from .clock import Clock, RealClock
from .events_cache import CorrelatorOptions, EventCorrelator
from .record_to_sink import DEFAULT_SLEEP_DURATION, record_to_sink
from .recorder import EventNamer, EventRecorder, RecorderImpl
from .reference import KindResolver
from .sink import EventSink
from .types import Event, EventSource

__all__ = ["DEFAULT_SHUTDOWN_TIMEOUT", "MAX_QUEUED_EVENTS", "EventBroadcaster", "EventWatcher"]

_log = structlog.get_logger(__name__)

#: Capacity of the broadcaster's incoming queue and of each watcher's buffer.
MAX_QUEUED_EVENTS = 1000
#: How long ``shutdown`` waits, by default, for queued events to be written.
DEFAULT_SHUTDOWN_TIMEOUT = 5.0


class EventWatcher:
    """One consumer of the broadcaster's events with its own buffer and thread.

    ``stop`` detaches it; events already buffered are still handled, as a closed Go channel
    still yields what it holds.
    """

    def __init__(
        self,
        detach: Callable[[EventWatcher], bool],
        handler: Callable[[Event], None],
        name: str,
        capacity: int,
    ) -> None:
        self._detach = detach
        self._handler = handler
        self._name = name
        self._capacity = capacity
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    @property
    def name(self) -> str:
        return self._name

    def stop(self) -> None:
        """Stop receiving events; what is buffered is still handled."""
        if self._detach(self):
            self._close()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the watcher's thread to finish; True when it did."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def pending(self) -> int:
        """Events buffered but not handled yet."""
        return self._queue.qsize()

    def _start(self) -> None:
        self._thread.start()

    def _offer(self, event: Event) -> None:
        # Only the distribution thread offers, so the size check cannot race another producer.
        if self._queue.qsize() >= self._capacity:
            _log.error(
                "Unable to deliver event: watcher buffer full, dropped event",
                watcher=self._name,
                **event_fields(event),
            )
            return
        self._queue.put(event)

    def _close(self) -> None:
        self._queue.put(None)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            try:
                self._handler(event)
            except Exception:  # noqa: BLE001 - one bad event must not kill the watcher
                _log.exception("Event handler failed", watcher=self._name, **event_fields(event))


class EventBroadcaster:
    """``record.EventBroadcaster``: fans recorded events out to the sink and the log.

    ``sleep_duration`` is the retry interval of sink writes (10 s; tests pass 0), ``clock``
    stamps events and drives the correlators, ``rand`` draws the first retry's jitter.
    The distribution thread starts with the broadcaster, as in client-go; call
    :meth:`shutdown` to stop it.
    """

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        sleep_duration: float = DEFAULT_SLEEP_DURATION,
        correlator_options: CorrelatorOptions | None = None,
        max_queued_events: int = MAX_QUEUED_EVENTS,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._clock: Clock = clock or RealClock()
        self._sleep_duration = sleep_duration
        self._correlator_options = correlator_options
        self._capacity = max_queued_events
        self._rand = rand
        self._namer = EventNamer()
        self._incoming: queue.Queue[Event | None] = queue.Queue(maxsize=max_queued_events)
        self._lock = threading.Lock()
        self._watchers: list[EventWatcher] = []
        self._started_watchers: list[EventWatcher] = []
        self._watcher_seq = 0
        self._stopped = False
        # Cancelled at shutdown once queued events are distributed: retry sleeps end early.
        self._cancel = threading.Event()
        self._distributor = threading.Thread(target=self._distribute, name="event-broadcaster", daemon=True)
        self._distributor.start()

    # -- consumers ---------------------------------------------------------------------------

    def start_event_watcher(self, handler: Callable[[Event], None]) -> EventWatcher:
        """Call ``handler`` (on a dedicated thread) with every event recorded from now on.

        The event dict is shared with the other watchers: read it, never modify it.
        """
        with self._lock:
            self._watcher_seq += 1
            watcher = EventWatcher(self._remove_watcher, handler, f"event-watcher-{self._watcher_seq}", self._capacity)
            if self._stopped:
                stopped = True
            else:
                stopped = False
                self._watchers.append(watcher)
                self._started_watchers.append(watcher)
                watcher._start()
        if stopped:
            _log.error("Unable to start event watcher: broadcaster already stopped", watcher=watcher.name)
        return watcher

    def start_recording_to_sink(self, sink: EventSink) -> EventWatcher:
        """Write every event to ``sink`` through a correlator of its own."""
        correlator = EventCorrelator(self._clock, self._correlator_options)

        def handler(event: Event) -> None:
            record_to_sink(sink, event, correlator, self._sleep_duration, self._cancel, rand=self._rand)

        return self.start_event_watcher(handler)

    def start_structured_logging(self, verbosity: int = 0) -> EventWatcher:
        """Log each event as ``Event occurred`` with key=value fields.

        klog's ``V(verbosity)`` maps onto levels: 0 logs at info, anything higher at debug.
        """
        at_info = verbosity <= 0

        def handler(event: Event) -> None:
            ref = event.get("involvedObject") or {}
            fields = {
                "object": object_key(ref),
                "fieldPath": ref.get("fieldPath", ""),
                "kind": ref.get("kind", ""),
                "apiVersion": ref.get("apiVersion", ""),
                "type": event.get("type", ""),
                "reason": event.get("reason", ""),
                "message": event.get("message", ""),
            }
            # Resolve the logger method per call: binding it once would freeze the structlog
            # configuration in force when the watcher started.
            if at_info:
                _log.info("Event occurred", **fields)
            else:
                _log.debug("Event occurred", **fields)

        return self.start_event_watcher(handler)

    # -- producers ---------------------------------------------------------------------------

    def new_recorder(
        self,
        source_component: str,
        source_host: str = "",
        *,
        scheme: KindResolver | None = None,
    ) -> EventRecorder:
        """A recorder whose events come from ``source_component`` (``kubectl describe``'s From)."""
        source = EventSource(source_component, source_host)
        return RecorderImpl(self._action_or_drop, source, self._clock, self._namer, scheme)

    # -- lifecycle ---------------------------------------------------------------------------

    def shutdown(self, timeout: float | None = DEFAULT_SHUTDOWN_TIMEOUT) -> bool:
        """Stop intake and flush: True when every queued event was handled within ``timeout``.

        Events recorded afterwards are dropped with a log. Each event still queued gets its
        write attempt, but retry sleeps are cut short, so a dead API server costs at most one
        attempt per event, and never more than ``timeout`` in total (None waits without bound).
        """
        deadline = None if timeout is None else time.monotonic() + timeout

        def remaining() -> float | None:
            return None if deadline is None else max(0.0, deadline - time.monotonic())

        with self._lock:
            first = not self._stopped
            self._stopped = True
            watchers = list(self._started_watchers)
        if first:
            try:
                self._incoming.put(None, timeout=remaining())
            except queue.Full:
                _log.error("Unable to stop event broadcaster: incoming queue stayed full")
        self._distributor.join(remaining())
        self._cancel.set()
        flushed = not self._distributor.is_alive()
        for watcher in watchers:
            flushed = watcher.join(remaining()) and flushed
        if not flushed:
            _log.warning(
                "Event broadcaster shut down before all events were written",
                queued=self._incoming.qsize(),
                buffered=sum(w.pending() for w in watchers),
            )
        return flushed

    def _action_or_drop(self, event: Event) -> None:
        """Enqueue without blocking; drop (and say so) when stopped or full."""
        with self._lock:
            stopped = self._stopped
            sent = False
            if not stopped:
                try:
                    self._incoming.put_nowait(event)
                    sent = True
                except queue.Full:
                    pass
        if stopped:
            _log.error(
                "Unable to record event: will not retry!",
                err="broadcaster already stopped",
                **event_fields(event),
            )
        elif not sent:
            _log.error(
                "Unable to record event: too many queued events, dropped event",
                **event_fields(event),
            )

    def _remove_watcher(self, watcher: EventWatcher) -> bool:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)
                return True
            return False

    def _distribute(self) -> None:
        while True:
            event = self._incoming.get()
            if event is None:
                break
            with self._lock:
                watchers = list(self._watchers)
            for watcher in watchers:
                watcher._offer(event)
        with self._lock:
            watchers = list(self._watchers)
            self._watchers.clear()
        for watcher in watchers:
            watcher._close()
