"""Waiting for the CronJobFlow CRD: the controller starts its informer only once the API serves it.

A cluster upgraded without the new CRD must go on running JobFlows: the CronJobFlow controller logs
one line and looks again every `CRD_POLL_INTERVAL` through discovery, while the other controllers,
the shared caches and /readyz go on as if it were not there (its informer does not exist yet, so it
holds back no cache sync and fills no log with failed lists).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

import structlog

from workqueue import Clock

log = structlog.get_logger(__name__)

#: How often discovery is asked again while the CRD is missing.
CRD_POLL_INTERVAL: Final = 10.0
MESSAGE_WAITING: Final = (
    "the CronJobFlow CRD (cronjobflows.flow.volcano.sh) is not installed; cronjobflow-controller waits for it"
)
MESSAGE_STARTED: Final = "the CronJobFlow CRD is installed; cronjobflow-controller starts"


def wait_for_crd(
    served: Callable[[], bool],
    stop: threading.Event,
    clock: Clock,
    interval: float = CRD_POLL_INTERVAL,
    *,
    waiting: str = MESSAGE_WAITING,
    started: str = MESSAGE_STARTED,
) -> bool:
    """True once `served()` is; False if `stop` is set first. Logs `waiting` once (the CronJobFlow
    CRD's line by default; the JobFlowTrigger controller passes its own)."""
    logged = False
    while not stop.is_set():
        try:
            if served():
                if logged:
                    log.info(started)
                return True
        except Exception as err:  # noqa: BLE001 - discovery failing is "not yet", asked again
            log.debug("discovery failed", error=str(err))
        if not logged:
            log.info(waiting)
            logged = True
        if clock.sleep(interval, stop):
            return False
    return False
