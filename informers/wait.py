"""Waiting for informer caches to sync (client-go ``WaitForCacheSync``).

A controller must not start its workers before its caches hold the first list: a lister that is
still empty would make every object look deleted.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

SYNCED_POLL_PERIOD = 0.1

HasSyncedFunc = Callable[[], bool]


def wait_for_cache_sync(
    stop: threading.Event,
    *has_synced_funcs: HasSyncedFunc,
    timeout: float | None = None,
    poll_period: float = SYNCED_POLL_PERIOD,
) -> bool:
    """Poll (at once, then every 100 ms) until every function returns True.

    Returns False if ``stop`` is set first, or ``timeout`` seconds pass.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if all(f() for f in has_synced_funcs):
            return True
        if stop.is_set():
            return False
        wait = poll_period
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            wait = min(wait, remaining)
        if stop.wait(wait):
            return False
