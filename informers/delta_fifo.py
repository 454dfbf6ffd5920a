"""``DeltaFIFO``: the queue between the reflector and the informer's cache (client-go ``delta_fifo.go``).

It keeps, per object key, the list of changes ("deltas") not yet processed, and hands keys out in
the order they were first queued. Two properties matter to everything downstream:

* nothing is coalesced except two consecutive deletions of the same object, so handlers see every
  Added/Updated in order;
* a relist (:meth:`DeltaFIFO.replace`) turns objects that vanished while we were not watching into
  deletions carrying a :class:`DeletedFinalStateUnknown` tombstone.

This is the classic DeltaFIFO, which client-go informers used through 1.32 and still document; the
newer ``RealFIFO`` (no per-key coalescing at all) is not ported.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from informers.errors import KeyFuncError
from informers.keys import KeyFunc, meta_namespace_key_func
from informers.store import KeyListerGetter
from informers.tombstone import DeletedFinalStateUnknown
from informers.transforms import TransformFunc

logger = logging.getLogger(__name__)


class DeltaType(StrEnum):
    """What happened to an object."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    # A relist delivered this object (only with ``emit_delta_type_replaced``; otherwise Sync).
    REPLACED = "Replaced"
    # A periodic resync replayed this object from the cache.
    SYNC = "Sync"


@dataclass(frozen=True, slots=True)
class Delta:
    """One change: its type and the object after it (a tombstone for unknown-state deletions)."""

    type: DeltaType
    object: Any


class Deltas(list[Delta]):
    """The pending changes of one object, oldest first."""

    def oldest(self) -> Delta | None:
        return self[0] if self else None

    def newest(self) -> Delta | None:
        return self[-1] if self else None


class FIFOClosedError(Exception):
    """``pop`` on a closed, empty queue (client-go ``ErrFIFOClosed``)."""

    def __init__(self) -> None:
        super().__init__("DeltaFIFO: manipulating with closed queue")


class ZeroLengthDeltasError(ValueError):
    """``key_of`` was given an empty :class:`Deltas`."""

    def __init__(self) -> None:
        super().__init__("0 length Deltas object; can't get key")


PopProcessFunc = Callable[[Deltas, bool], None]


class DeltaFIFO:
    """A producer/consumer queue of per-key :class:`Deltas`.

    ``known_objects`` is the cache the consumer maintains (the informer's indexer). With it, a
    relist can synthesize deletions for objects the cache holds but the list no longer has, and a
    resync can replay the cache. ``emit_delta_type_replaced`` makes relisted objects ``Replaced``
    instead of ``Sync`` (informers set it). ``transformer`` is applied exactly once to every object
    that enters the queue, except tombstones and resync replays (those were transformed already).
    """

    def __init__(
        self,
        *,
        key_function: KeyFunc = meta_namespace_key_func,
        known_objects: KeyListerGetter | None = None,
        emit_delta_type_replaced: bool = False,
        transformer: TransformFunc | None = None,
        name: str = "",
    ) -> None:
        self._key_func = key_function
        self._known_objects = known_objects
        self._emit_delta_type_replaced = emit_delta_type_replaced
        self._transformer = transformer
        self.name = name
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._items: dict[str, Deltas] = {}
        # A key is in ``_queue`` iff it is in ``_items``; its position is fixed at first insertion.
        self._queue: deque[str] = deque()
        # True once anything was added or the first replace happened: the start of "synced".
        self._populated = False
        # How many items of the first replace (plus its deletions) are still queued.
        self._initial_population_count = 0
        self._closed = False

    # -- keys -----------------------------------------------------------------------------------

    def key_of(self, obj: Any) -> str:
        """The key of an object, of a tombstone (its key) or of :class:`Deltas` (its newest object)."""
        if isinstance(obj, Deltas):
            newest = obj.newest()
            if newest is None:
                raise KeyFuncError(obj, ZeroLengthDeltasError())
            obj = newest.object
        if isinstance(obj, DeletedFinalStateUnknown):
            return obj.key
        try:
            return self._key_func(obj)
        except Exception as err:
            raise KeyFuncError(obj, err) from err

    # -- producers ------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._queue_action_locked(DeltaType.ADDED, obj)

    def update(self, obj: Any) -> None:
        with self._lock:
            self._populated = True
            self._queue_action_locked(DeltaType.UPDATED, obj)

    def delete(self, obj: Any) -> None:
        """Queue a deletion, unless we know nothing about the object.

        Without known objects, a key with nothing queued is dropped ("presumably deleted when a
        relist happened"). With them, it is dropped only if the cache lacks it too.
        """
        key = self.key_of(obj)
        with self._lock:
            self._populated = True
            if self._known_objects is None:
                if key not in self._items:
                    return
            elif key not in self._items:
                try:
                    _, exists = self._known_objects.get_by_key(key)
                except Exception:
                    logger.debug("error looking up %r in known objects", key, exc_info=True)
                    exists = True  # on a lookup error, err on the side of delivering the delete
                if not exists:
                    return
            self._queue_action_locked(DeltaType.DELETED, obj)

    def replace(self, items: Iterable[Any], resource_version: str = "") -> None:
        """Make the queue reflect a fresh list: queue every item, and tombstone what is gone.

        Each listed item is queued as ``Replaced`` (or ``Sync``). Every queued key not in the list
        gets a ``Deleted`` with a tombstone holding its newest queued object; every key the cache
        knows that is neither listed nor queued gets one holding the cache's object.
        """
        del resource_version  # the queue keeps no RV; the reflector does
        with self._lock:
            action = DeltaType.REPLACED if self._emit_delta_type_replaced else DeltaType.SYNC
            keys: set[str] = set()
            for item in items:
                key = self.key_of(item)
                keys.add(key)
                self._queue_action_internal_locked(action, DeltaType.REPLACED, item, key)

            queued_deletions = 0
            for key, old_deltas in list(self._items.items()):
                if key in keys:
                    continue
                deleted_obj: Any = None
                newest = old_deltas.newest()
                if newest is not None:
                    deleted_obj = newest.object
                    if isinstance(deleted_obj, DeletedFinalStateUnknown):
                        deleted_obj = deleted_obj.obj
                queued_deletions += 1
                self._queue_action_locked(DeltaType.DELETED, DeletedFinalStateUnknown(key, deleted_obj))

            if self._known_objects is not None:
                for key in self._known_objects.list_keys():
                    if key in keys or self._items.get(key):
                        continue
                    try:
                        known_obj, exists = self._known_objects.get_by_key(key)
                    except Exception as err:
                        logger.warning("unexpected error looking up %r in known objects: %s", key, err, exc_info=True)
                        known_obj, exists = None, False
                    if not exists:
                        known_obj = None
                        logger.debug("key %r does not exist in known objects store, placing tombstone", key)
                    queued_deletions += 1
                    self._queue_action_locked(DeltaType.DELETED, DeletedFinalStateUnknown(key, known_obj))

            if not self._populated:
                self._populated = True
                self._initial_population_count = len(keys) + queued_deletions

    def resync(self) -> None:
        """Queue a ``Sync`` for every known object that has nothing queued.

        A key with queued deltas is skipped: replaying the cache's (older) copy after them would
        deliver a stale object as the newest state.
        """
        with self._lock:
            if self._known_objects is None:
                return
            for key in self._known_objects.list_keys():
                self._sync_key_locked(key)

    def _sync_key_locked(self, key: str) -> None:
        assert self._known_objects is not None
        try:
            obj, exists = self._known_objects.get_by_key(key)
        except Exception as err:
            logger.warning("unexpected error syncing %r: %s", key, err, exc_info=True)
            return
        if not exists:
            logger.debug("key %r does not exist in known objects store, unable to queue object for sync", key)
            return
        key = self.key_of(obj)
        if self._items.get(key):
            return
        self._queue_action_internal_locked(DeltaType.SYNC, DeltaType.SYNC, obj, key)

    def _queue_action_locked(self, action: DeltaType, obj: Any) -> None:
        self._queue_action_internal_locked(action, action, obj, self.key_of(obj))

    def _queue_action_internal_locked(self, action: DeltaType, internal_action: DeltaType, obj: Any, key: str) -> None:
        # Every object passes here exactly once on its way in, so this is where the transform
        # runs. Tombstones carry an object that was transformed already, and Sync replays the cache.
        if (
            self._transformer is not None
            and not isinstance(obj, DeletedFinalStateUnknown)
            and internal_action != DeltaType.SYNC
        ):
            obj = self._transformer(obj)
        deltas = self._items.get(key)
        is_new = deltas is None
        if deltas is None:
            deltas = Deltas()
        deltas.append(Delta(action, obj))
        _dedup_deltas(deltas)
        if is_new:
            self._queue.append(key)
        self._items[key] = deltas
        self._cond.notify_all()

    # -- consumer -------------------------------------------------------------------------------

    def pop(self, process: PopProcessFunc) -> Deltas:
        """Block until a key is queued, remove it, and call ``process(deltas, is_in_initial_list)``.

        ``process`` runs under the queue lock, so :meth:`has_synced` turns True only after the last
        item of the initial list has been processed. The item is removed before ``process`` runs;
        if ``process`` raises, the exception propagates and the item is not requeued (client-go
        dropped ``ErrRequeue`` in 1.33). Raises :class:`FIFOClosedError` once closed and empty.
        """
        with self._lock:
            while True:
                while not self._queue:
                    if self._closed:
                        raise FIFOClosedError()
                    self._cond.wait()
                is_in_initial_list = not self._has_synced_locked()
                key = self._queue.popleft()
                if self._initial_population_count > 0:
                    self._initial_population_count -= 1
                deltas = self._items.pop(key, None)
                if deltas is None:
                    logger.error("inconceivable: %r was in the queue but not in the items; ignoring", key)
                    continue
                process(deltas, is_in_initial_list)
                return deltas

    def close(self) -> None:
        """Wake every blocked :meth:`pop`; they raise once the queue is drained."""
        with self._lock:
            self._closed = True
            self._cond.notify_all()

    def is_closed(self) -> bool:
        with self._lock:
            return self._closed

    def has_synced(self) -> bool:
        """True once the first replace (or first add/update/delete) has been fully popped."""
        with self._lock:
            return self._has_synced_locked()

    def _has_synced_locked(self) -> bool:
        return self._populated and self._initial_population_count == 0

    # -- inspection (client-go keeps these as test helpers) ---------------------------------------

    def list_keys(self) -> builtins.list[str]:
        with self._lock:
            return list(self._queue)

    def list(self) -> builtins.list[Any]:
        """The newest object of every queued key, in queue order."""
        with self._lock:
            result = []
            for key in self._queue:
                newest = self._items[key].newest()
                if newest is not None:
                    result.append(newest.object)
            return result

    def get_by_key(self, key: str) -> tuple[Deltas | None, bool]:
        """A copy of the deltas queued for ``key``."""
        with self._lock:
            deltas = self._items.get(key)
            if deltas is None:
                return None, False
            return Deltas(deltas), True

    def get(self, obj: Any) -> tuple[Deltas | None, bool]:
        return self.get_by_key(self.key_of(obj))

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue)


def _dedup_deltas(deltas: Deltas) -> None:
    """Collapse the last two deltas if both are deletions; nothing else is ever merged."""
    if len(deltas) < 2:
        return
    newer, older = deltas[-1], deltas[-2]
    if newer.type != DeltaType.DELETED or older.type != DeltaType.DELETED:
        return
    # Keep the real deletion over a tombstone: it carries the true final state.
    kept = newer if isinstance(older.object, DeletedFinalStateUnknown) else older
    deltas[-2:] = [kept]
