"""Fan-out of an informer's notifications to its handlers (client-go ``sharedProcessor`` and
``processorListener``).

Each handler gets its own thread and its own unbounded buffer: the informer never waits for a
handler, one slow handler never delays another, and each handler sees its notifications strictly
in order. The price is memory: a handler that cannot keep up makes its buffer grow without bound.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from informers.clock import Clock
from informers.handlers import ResourceEventHandler, ResourceEventHandlerDetailedFuncs, ResourceEventHandlerFuncs

logger = logging.getLogger(__name__)

# After a handler raises, its next call is delayed this long (client-go's crash-loop damping).
HANDLER_ERROR_DELAY = 1.0


@dataclass(frozen=True, slots=True)
class AddNotification:
    new_obj: Any
    is_in_initial_list: bool = False


@dataclass(frozen=True, slots=True)
class UpdateNotification:
    old_obj: Any
    new_obj: Any


@dataclass(frozen=True, slots=True)
class DeleteNotification:
    old_obj: Any


Notification = AddNotification | UpdateNotification | DeleteNotification


def determine_resync_period(desired: float, check: float) -> float:
    """The period a listener actually gets, given the informer's resync check period."""
    if desired == 0:
        return 0.0
    if check == 0:
        logger.warning("the specified resync period %ss is invalid because this informer doesn't resync", desired)
        return 0.0
    if desired < check:
        logger.warning(
            "the specified resync period %ss is being increased to the minimum resync check period %ss",
            desired,
            check,
        )
        return check
    return desired


def handles(handler: ResourceEventHandler, notification: Notification) -> bool:
    """False when `handler` is a funcs adapter without the function for this kind of notification.

    Calling it would do nothing, so it is not queued: the handler's thread is not woken for it (the
    JobTemplate controller's add-only handler on Jobs would otherwise wake for every Job update).
    Read at each notification, so a function set later is honoured from then on.
    """
    if not isinstance(handler, ResourceEventHandlerFuncs | ResourceEventHandlerDetailedFuncs):
        return True
    if isinstance(notification, UpdateNotification):
        return handler.update_func is not None
    if isinstance(notification, AddNotification):
        return handler.add_func is not None
    return handler.delete_func is not None


class ProcessListener:
    """One handler's buffer, thread and resync schedule; also its registration handle.

    ``has_synced`` is True once the informer has synced *and* every initial-list add queued for
    this handler has been handled (a handler that raises on an initial add never syncs, exactly
    as upstream).
    """

    def __init__(
        self,
        handler: ResourceEventHandler,
        requested_resync_period: float,
        resync_period: float,
        now: float,
        upstream_has_synced: Callable[[], bool],
        clock: Clock,
        name: str = "handler",
    ) -> None:
        self.handler = handler
        self.name = name
        self._clock = clock
        self._upstream_has_synced = upstream_has_synced
        self._cond = threading.Condition()
        self._buffer: deque[Notification] = deque()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Initial-list adds queued or in flight; the registration is synced when this is 0.
        self._pending_initial = 0
        self._resync_lock = threading.Lock()
        self._requested_resync_period = requested_resync_period
        self._resync_period = resync_period
        self._next_resync = now + resync_period

    # -- registration handle --------------------------------------------------------------------

    def has_synced(self) -> bool:
        # Ask upstream first: once it says yes, every initial add has been queued here already.
        if not self._upstream_has_synced():
            return False
        with self._cond:
            return self._pending_initial <= 0

    # -- buffer and thread ----------------------------------------------------------------------

    def add(self, notification: Notification) -> None:
        """Queue a notification; never blocks. One the handler would do nothing with is not queued."""
        if not handles(self.handler, notification):
            return
        with self._cond:
            if self._stop.is_set():
                return
            if isinstance(notification, AddNotification) and notification.is_in_initial_list:
                self._pending_initial += 1
            self._buffer.append(notification)
            self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._buffer)

    def start(self) -> None:
        with self._cond:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop after the notification in flight; queued ones are dropped. Does not wait."""
        with self._cond:
            self._stop.set()
            self._buffer.clear()
            self._cond.notify_all()

    def join(self, timeout: float | None = None) -> None:
        with self._cond:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._buffer and not self._stop.is_set():
                    self._cond.wait()
                if self._stop.is_set():
                    return
                notification = self._buffer.popleft()
            # Damp a handler that keeps failing, as client-go does when it does not crash.
            if not self._deliver(notification) and self._clock.sleep(HANDLER_ERROR_DELAY, self._stop):
                return

    def _deliver(self, notification: Notification) -> bool:
        try:
            if isinstance(notification, AddNotification):
                self.handler.on_add(notification.new_obj, notification.is_in_initial_list)
                if notification.is_in_initial_list:
                    with self._cond:
                        self._pending_initial -= 1
            elif isinstance(notification, UpdateNotification):
                self.handler.on_update(notification.old_obj, notification.new_obj)
            else:
                self.handler.on_delete(notification.old_obj)
        except Exception as err:
            logger.error("Observed a panic in event handler %s: %s", self.name, err, exc_info=True)
            return False
        return True

    # -- resync schedule ------------------------------------------------------------------------

    @property
    def requested_resync_period(self) -> float:
        return self._requested_resync_period

    @property
    def resync_period(self) -> float:
        with self._resync_lock:
            return self._resync_period

    def set_resync_period(self, period: float) -> None:
        with self._resync_lock:
            self._resync_period = period

    def should_resync(self, now: float) -> bool:
        with self._resync_lock:
            return self._resync_period != 0 and now >= self._next_resync

    def determine_next_resync(self, now: float) -> None:
        with self._resync_lock:
            self._next_resync = now + self._resync_period


class SharedProcessor:
    """The set of listeners of one informer and whether each is due for a resync."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        # listener -> "is syncing": due for the resync in progress, so it gets sync notifications.
        self._listeners: dict[ProcessListener, bool] = {}
        self._started = False

    def add_listener(self, listener: ProcessListener) -> ProcessListener:
        with self._lock:
            self._listeners[listener] = False
            if self._started:
                listener.start()
        return listener

    def remove_listener(self, listener: object) -> None:
        """Stop and forget ``listener``; an unknown (or foreign) handle is a no-op."""
        with self._lock:
            if not isinstance(listener, ProcessListener) or listener not in self._listeners:
                return
            del self._listeners[listener]
        listener.stop()

    def has_listener(self, listener: object) -> bool:
        with self._lock:
            return isinstance(listener, ProcessListener) and listener in self._listeners

    def listener_count(self) -> int:
        with self._lock:
            return len(self._listeners)

    def distribute(self, notification: Notification, sync: bool) -> None:
        """Give a notification to every listener, or only to the ones syncing if it is a sync."""
        with self._lock:
            for listener, is_syncing in self._listeners.items():
                if not sync or is_syncing:
                    listener.add(notification)

    def start(self) -> None:
        with self._lock:
            self._started = True
            for listener in self._listeners:
                listener.start()

    def stop(self) -> None:
        """Stop every listener and wait for their threads."""
        with self._lock:
            self._started = False
            listeners = list(self._listeners)
        for listener in listeners:
            listener.stop()
        for listener in listeners:
            listener.join()

    def should_resync(self) -> bool:
        """Mark the listeners due for resync now; True if any is (the reflector then resyncs)."""
        with self._lock:
            now = self._clock.now()
            resync_needed = False
            for listener in self._listeners:
                due = listener.should_resync(now)
                self._listeners[listener] = due
                if due:
                    resync_needed = True
                    listener.determine_next_resync(now)
            return resync_needed

    def resync_check_period_changed(self, resync_check_period: float) -> None:
        with self._lock:
            for listener in self._listeners:
                listener.set_resync_period(
                    determine_resync_period(listener.requested_resync_period, resync_check_period)
                )
