"""A list of a few unwatched objects for a web view section, made at most every `LIST_TTL` seconds.

The JobFlowTemplates and JobFlowTriggers sections list through the user's client when a page asks;
a cluster without the CRD, or an error, gives an empty list and a note saying why.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Final

from informers.errors import ApiStatusError, NotFoundError

LIST_TTL: Final = 5.0


class TimedList:
    """`list_items()` at most every `LIST_TTL` seconds; `kind` names the objects in the notes."""

    def __init__(
        self, list_items: Callable[[], list[Any]], kind: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._list_items, self._kind, self._clock = list_items, kind, clock
        self._lock = threading.Lock()
        self._listed: tuple[float, list[Any], str] | None = None

    def items(self) -> tuple[list[Any], str]:
        """The objects and a note (empty, or why there are none)."""
        with self._lock:
            if self._listed is not None and self._clock() - self._listed[0] < LIST_TTL:
                return self._listed[1], self._listed[2]
        try:
            items, note = self._list_items(), ""
        except NotFoundError:
            items, note = [], f"the {self._kind} CRD is not installed"
        except ApiStatusError as err:
            items, note = [], f"cannot list {self._kind}s: {err.message}"
        except (ConnectionError, OSError) as err:
            items, note = [], f"cannot reach the API server: {err}"
        with self._lock:
            self._listed = (self._clock(), items, note)
        return items, note
