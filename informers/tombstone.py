"""``DeletedFinalStateUnknown``: the tombstone for a deletion the watch never showed us.

When a relist no longer contains an object we had, the DeltaFIFO queues a delete carrying this
tombstone: the key, and the last state we knew (possibly stale, possibly ``None``). Every
``on_delete`` handler must be ready to unwrap it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """An object deleted while we were disconnected; ``obj`` is its last known (maybe stale) state."""

    key: str
    obj: Any
