"""How a reflector's list and watch fail, and how those failures are told (client-go ``reflector.go``).

Shared by the reflector and its watch and watch-list handlers, which each end a stream on them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from informers.errors import is_expired

if TYPE_CHECKING:
    from informers.reflector import Reflector

__all__ = [
    "INITIAL_EVENTS_END_ANNOTATION",
    "VERY_SHORT_WATCH_SECONDS",
    "VeryShortWatchError",
    "WatchListNotSupportedError",
    "default_watch_error_handler",
    "describe_error",
]

logger = logging.getLogger("informers.reflector")

VERY_SHORT_WATCH_SECONDS = 1.0
#: The annotation of the BOOKMARK that ends a watch-list's initial events.
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"


class VeryShortWatchError(Exception):
    """The watch closed in under a second without a single event: something is wrong upstream."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"very short watch: {name}: Unexpected watch close - watch lasted less than a second and no items received"
        )
        self.name = name


class WatchListNotSupportedError(Exception):
    """A plain BOOKMARK came before the end of the initial events: the server ignored the watch-list."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name}: a bookmark without {INITIAL_EVENTS_END_ANNOTATION} during a watch-list")


def describe_error(err: BaseException) -> str:
    """``str(err)`` prefixed by the context notes the reflector attached (``failed to list ...``)."""
    notes = getattr(err, "__notes__", None) or []
    return ": ".join([*notes, str(err) or type(err).__name__])


def default_watch_error_handler(reflector: Reflector, err: BaseException) -> None:
    """Log a failed list-and-watch: expiry is routine (debug), anything else is an error."""
    if is_expired(err):
        logger.debug("%s: watch closed with: %s", reflector.name, describe_error(err))
    else:
        logger.error("%s: Failed to watch: %s", reflector.name, describe_error(err))
