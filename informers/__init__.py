"""client-go's ``tools/cache`` for Python: reflector, DeltaFIFO, indexer, shared informers, listers.

Transport-agnostic by design: everything reaches the API through a :class:`ListerWatcher` handed
in by the caller (the ``kube`` package implements it over the kubernetes client), and this package
imports nothing else of the project. Objects are the API's JSON dicts; what sits in a cache is
shared and must never be mutated.

Names follow client-go in snake_case, so ``cache.NewSharedIndexInformer`` is
:class:`SharedIndexInformer`, ``cache.WaitForCacheSync`` is :func:`wait_for_cache_sync`, and so on.
"""

from informers import labels
from informers.backoff import Backoff, BackoffManager
from informers.clock import REAL_CLOCK, Clock, RealClock
from informers.controller import Config, Controller, process_deltas
from informers.delta_fifo import (
    Delta,
    DeltaFIFO,
    Deltas,
    DeltaType,
    FIFOClosedError,
    ZeroLengthDeltasError,
)
from informers.errors import (
    ApiStatusError,
    ExpiredError,
    KeyFuncError,
    NotFoundError,
    TooManyRequestsError,
    UnexpectedObjectError,
    is_expired,
    is_not_found,
    is_too_large_resource_version,
    is_too_many_requests,
    status_error_from_object,
)
from informers.factory import NewInformerFunc, SharedInformerFactory
from informers.handlers import (
    ResourceEventHandler,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
)
from informers.index import (
    NAMESPACE_INDEX,
    IndexerConflictError,
    Indexers,
    IndexFunc,
    IndexFuncError,
    UnknownIndexError,
    meta_namespace_index_func,
)
from informers.intern import Interner, StringTable
from informers.keys import (
    ExplicitKey,
    KeyFunc,
    ObjectName,
    deletion_handling_meta_namespace_key_func,
    deletion_handling_object_to_name,
    meta_namespace_key_func,
    object_to_name,
    parse_object_name,
    split_meta_namespace_key,
)
from informers.labels import Requirement, Selector
from informers.listers import (
    NAMESPACE_ALL,
    GenericLister,
    GenericNamespaceLister,
    GroupResource,
    list_all,
    list_all_by_namespace,
)
from informers.listwatch import (
    EventType,
    ListerWatcher,
    ListOptions,
    ListResult,
    ListWatch,
    Watch,
    WatchEvent,
    supports_watch_list,
)
from informers.pager import ListPager
from informers.processor_listener import ProcessListener
from informers.reflector import Reflector, VeryShortWatchError, WatchErrorHandler
from informers.shared_informer import (
    MINIMUM_RESYNC_PERIOD,
    InformerStartedError,
    InformerStoppedError,
    ResourceEventHandlerRegistration,
    SharedIndexInformer,
)
from informers.store import Cache, Indexer, KeyListerGetter, Store, new_indexer, new_store
from informers.thread_safe_store import ThreadSafeStore
from informers.tombstone import DeletedFinalStateUnknown
from informers.transforms import TransformFunc, chain_transforms, keep_fields, strip_managed_fields
from informers.wait import wait_for_cache_sync

__all__ = [
    "MINIMUM_RESYNC_PERIOD",
    "NAMESPACE_ALL",
    "NAMESPACE_INDEX",
    "REAL_CLOCK",
    "ApiStatusError",
    "Backoff",
    "BackoffManager",
    "Cache",
    "Clock",
    "Config",
    "Controller",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "Deltas",
    "EventType",
    "ExpiredError",
    "ExplicitKey",
    "FIFOClosedError",
    "GenericLister",
    "GenericNamespaceLister",
    "GroupResource",
    "IndexFunc",
    "IndexFuncError",
    "Indexer",
    "IndexerConflictError",
    "Indexers",
    "InformerStartedError",
    "InformerStoppedError",
    "Interner",
    "KeyFunc",
    "KeyFuncError",
    "KeyListerGetter",
    "ListOptions",
    "ListPager",
    "ListResult",
    "ListWatch",
    "ListerWatcher",
    "NewInformerFunc",
    "NotFoundError",
    "ObjectName",
    "ProcessListener",
    "RealClock",
    "Reflector",
    "Requirement",
    "ResourceEventHandler",
    "ResourceEventHandlerDetailedFuncs",
    "ResourceEventHandlerFuncs",
    "ResourceEventHandlerRegistration",
    "Selector",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "Store",
    "StringTable",
    "ThreadSafeStore",
    "TooManyRequestsError",
    "TransformFunc",
    "UnexpectedObjectError",
    "UnknownIndexError",
    "VeryShortWatchError",
    "Watch",
    "WatchErrorHandler",
    "WatchEvent",
    "ZeroLengthDeltasError",
    "chain_transforms",
    "deletion_handling_meta_namespace_key_func",
    "deletion_handling_object_to_name",
    "is_expired",
    "is_not_found",
    "is_too_large_resource_version",
    "is_too_many_requests",
    "keep_fields",
    "labels",
    "list_all",
    "list_all_by_namespace",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "new_indexer",
    "new_store",
    "object_to_name",
    "parse_object_name",
    "process_deltas",
    "split_meta_namespace_key",
    "status_error_from_object",
    "strip_managed_fields",
    "supports_watch_list",
    "wait_for_cache_sync",
]
