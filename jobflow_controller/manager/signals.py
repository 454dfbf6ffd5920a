"""sample-controller's pkg/signals: the first SIGTERM/SIGINT sets `stop`; a second exits 1 at once.

A Python signal handler runs on the main thread between two bytecodes, wherever that thread is:
also inside `threading.Event.wait`, holding the Event's own lock, or inside a log write, holding the
stream's. A handler that set the Event or logged from there waited for a lock its own thread held:
the process never stopped (seen as a controller still syncing 45 s after SIGTERM). So the handler
does nothing in Python: the interpreter's C handler writes the signal's number to a pipe
(`signal.set_wakeup_fd`), and a thread of its own reads it, logs and sets `stop`, holding no lock of
the main thread's.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Final

import structlog

log = structlog.get_logger(__name__)

#: The signals that stop the controller (sample-controller's `shutdownSignals`).
SHUTDOWN_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)


def _nothing(signum: int, frame: object) -> None:
    """The Python-level handler: the wakeup pipe carries the signal to `watch_signals`."""


def watch_signals(read_fd: int, stop: threading.Event, on_second: Callable[[], None] | None = None) -> None:
    """Read signal numbers from the wakeup pipe until it closes; act on the shutdown signals only."""
    while True:
        try:
            received = os.read(read_fd, 64)
        except InterruptedError:
            continue
        if not received:
            return
        for signum in received:
            if signum not in SHUTDOWN_SIGNALS:
                continue  # another handled signal (SIGUSR2: heap snapshots) woke the pipe too
            if stop.is_set():
                if on_second is not None:
                    on_second()
                os._exit(1)
            log.info("received signal, shutting down", signal=signal.Signals(signum).name)
            stop.set()


def install_signal_handlers(stop: threading.Event, on_second: Callable[[], None] | None = None) -> None:
    """Route SIGTERM/SIGINT to `stop` through the wakeup pipe (call from the main thread, once)."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C handler must never block on a full pipe
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    for signum in SHUTDOWN_SIGNALS:
        signal.signal(signum, _nothing)
    threading.Thread(target=watch_signals, args=(read_fd, stop, on_second), name="signals", daemon=True).start()
