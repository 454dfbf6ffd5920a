"""Go's context plumbing for threading.Event: fan-in of several stops, and a deadline after one."""

from __future__ import annotations

import threading


def set_when_any(target: threading.Event, *sources: threading.Event) -> None:
    """Set `target` as soon as any of `sources` is set (Go's select over several channels)."""

    def watch() -> None:
        while not target.is_set():
            for source in sources:
                if source.wait(0.05):
                    target.set()
                    return

    threading.Thread(target=watch, name="stop-fanin", daemon=True).start()


def set_after(target: threading.Event, source: threading.Event, delay: float) -> None:
    """Set `target` `delay` seconds after `source` is set (a context.WithTimeout started by it)."""

    def watch() -> None:
        source.wait()
        if not target.wait(delay):
            target.set()

    threading.Thread(target=watch, name="stop-deadline", daemon=True).start()
