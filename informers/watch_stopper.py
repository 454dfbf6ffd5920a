"""Stopping a watch that blocks in iteration (what Go's ``ctx`` does for the reflector).

A Python watch stream blocks in ``next()`` with no way to pass a context, so one thread per ``stop``
event waits on it and stops the watch the reflector currently iterates.
"""

from __future__ import annotations

import threading

from informers.listwatch import Watch

__all__ = ["WatchStopper"]


class WatchStopper:
    """The reflector's current watch, and the relay thread that stops it when ``stop`` is set."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._current_watch: Watch | None = None
        self._current_stop: threading.Event | None = None
        self._relay_stop: threading.Event | None = None
        self._relay_thread: threading.Thread | None = None

    def ensure_relay(self, stop: threading.Event) -> None:
        """Make sure a thread waits on ``stop`` to stop the current watch (iteration blocks)."""
        with self._lock:
            if self._relay_stop is stop and self._relay_thread is not None and self._relay_thread.is_alive():
                return
            if stop.is_set():
                return
            thread = threading.Thread(target=self._relay, args=(stop,), name=f"{self._name}-stop", daemon=True)
            self._relay_stop = stop
            self._relay_thread = thread
        thread.start()

    def join_relay(self, stop: threading.Event) -> None:
        with self._lock:
            thread = self._relay_thread if self._relay_stop is stop else None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _relay(self, stop: threading.Event) -> None:
        stop.wait()
        with self._lock:
            w = self._current_watch if self._current_stop is stop else None
        if w is not None:
            w.stop()

    def register(self, w: Watch, stop: threading.Event, *, abandoned: bool) -> None:
        """``w`` is now the current watch; stopped at once if ``stop`` (or ``abandoned``) came first."""
        with self._lock:
            self._current_watch = w
            self._current_stop = stop
        if stop.is_set() or abandoned:
            w.stop()  # the relay or the resync thread fired before the watch was registered

    def unregister(self, w: Watch) -> None:
        with self._lock:
            if self._current_watch is w:
                self._current_watch = None
                self._current_stop = None

    def stop_current(self) -> None:
        with self._lock:
            w = self._current_watch
        if w is not None:
            w.stop()
