"""The ``ListerWatcher`` protocol: the only way the informer machinery reaches the API.

``informers`` is transport-agnostic. The ``kube`` package implements :class:`ListerWatcher` over the
kubernetes client; tests use ``FakeListerWatcher`` (tests/unit/informers/informers_fakes.py). ``list`` returns one page,
the :class:`informers.reflector.Reflector` does the paging and all resourceVersion bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


class EventType(StrEnum):
    """Watch event types as the API spells them."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    BOOKMARK = "BOOKMARK"
    ERROR = "ERROR"


RESOURCE_VERSION_MATCH_NOT_OLDER_THAN = "NotOlderThan"


@dataclass(frozen=True, slots=True)
class ListOptions:
    """The query parameters of a LIST or WATCH (``metav1.ListOptions``, the fields we use)."""

    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_token: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    label_selector: str | None = None
    field_selector: str | None = None
    send_initial_events: bool = False


@dataclass(frozen=True, slots=True)
class ListResult:
    """One page of a LIST: the items, the list's resourceVersion and the continue token (if more)."""

    items: list[dict[str, Any]]
    resource_version: str
    continue_token: str | None = None


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event; for ERROR the object is a ``Status``, for BOOKMARK only its RV matters."""

    type: str
    object: dict[str, Any] = field(default_factory=dict)


class Watch(Protocol):
    """An open watch: iterate its events; ``stop`` (callable from any thread) ends the iteration.

    Iteration ends normally when the server closes the stream (timeout, normal close). It may raise
    an :class:`informers.errors.ApiStatusError` (for example an ``ExpiredError``) or a transport error.
    Iterating again resumes after the last event delivered: a watch-list reads the initial events,
    then hands the same watch on to the ordinary watch loop.
    """

    def __iter__(self) -> Iterator[WatchEvent]: ...

    def stop(self) -> None: ...


class ListerWatcher(Protocol):
    """Lists one page and opens watches for one resource (with its selectors already applied)."""

    def list(self, options: ListOptions) -> ListResult: ...

    def watch(self, options: ListOptions) -> Watch: ...


def supports_watch_list(lw: object) -> bool:
    """Whether ``lw``'s watch honours ``send_initial_events`` (client-go's watch-list semantics).

    A ListerWatcher opts in with a method ``is_watch_list_semantics_supported()`` returning True.
    Opt-in, not opt-out as in client-go: a wrapper around a ListerWatcher (a test double, a
    filter) that does not pass the option through would otherwise hang waiting for a bookmark
    that never comes; without the method the reflector simply LISTs.
    """
    check = getattr(lw, "is_watch_list_semantics_supported", None)
    return bool(check()) if callable(check) else False


class ListWatch:
    """A :class:`ListerWatcher` made of two functions (client-go ``cache.ListWatch``)."""

    def __init__(
        self,
        list_func: Callable[[ListOptions], ListResult],
        watch_func: Callable[[ListOptions], Watch],
    ) -> None:
        self._list_func = list_func
        self._watch_func = watch_func

    def list(self, options: ListOptions) -> ListResult:
        return self._list_func(options)

    def watch(self, options: ListOptions) -> Watch:
        return self._watch_func(options)
