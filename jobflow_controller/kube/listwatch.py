"""ListerWatchers over the REST layer: what a Reflector needs, for any resource.

The watch stream is decoded here rather than with `kubernetes.watch.Watch`, which loses the
resourceVersion of BOOKMARK events, swallows 410s into a retry loop of its own and splits JSON lines
that arrive across chunk boundaries. Every line is one `WatchEvent`; an ERROR event carries the
Status object so the Reflector can tell a 410 (relist) from anything else.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import urllib3

from informers import ListOptions, ListResult, WatchEvent
from jobflow_controller.kube.resources import Resource
from jobflow_controller.kube.rest import RestClient, decode_json

#: Extra seconds beyond the server-side watch timeout before the client gives up on a silent stream.
WATCH_READ_SLACK = 30.0


class StreamWatch:
    """One open watch: iterate its events; `stop()` from any thread ends the iteration.

    Iterating again resumes after the last event delivered (a watch-list reads its initial
    events, then the reflector's watch loop reads on), so the stream is read by one generator.
    """

    def __init__(self, response: urllib3.BaseHTTPResponse) -> None:
        self._response = response
        self._stopped = threading.Event()
        self._events: Iterator[WatchEvent] | None = None

    def stop(self) -> None:
        self._stopped.set()
        try:
            shutdown = getattr(self._response, "shutdown", None)
            if shutdown is not None:
                shutdown()  # unblocks a reader stuck in recv(), which close() alone does not
            self._response.close()
        except Exception:  # noqa: BLE001 - closing a dead socket may fail in many ways; it is closed
            pass

    def __iter__(self) -> Iterator[WatchEvent]:
        if self._events is None:
            self._events = self._read()
        return self._events

    def _read(self) -> Iterator[WatchEvent]:
        # One event per line. A chunk holds many lines during a watch-list's initial burst: they
        # are decoded in place (memoryview slices), never by re-splitting the rest of the chunk.
        pending = b""
        try:
            for chunk in self._response.stream(amt=None, decode_content=True):
                if self._stopped.is_set():
                    return
                if pending:
                    chunk = pending + chunk
                view = memoryview(chunk)
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    event = _decode(view[start:end])
                    start = end + 1
                    if event is not None:
                        yield event
                pending = chunk[start:]
            if pending.strip() and not self._stopped.is_set():
                event = _decode(memoryview(pending))
                if event is not None:
                    yield event
        except (urllib3.exceptions.HTTPError, OSError, ValueError):
            if self._stopped.is_set():
                return
            raise
        finally:
            self._response.release_conn()


def _decode(line: memoryview) -> WatchEvent | None:
    if len(line) < 8 and not line.tobytes().strip():
        return None  # a blank line (the shortest event is far longer)
    payload: Any = decode_json(line)
    return WatchEvent(type=str(payload.get("type") or ""), object=payload.get("object") or {})


class ResourceListerWatcher:
    """client-go's `cache.NewListWatchFromClient` for one resource, optionally one namespace."""

    def __init__(
        self,
        client: RestClient,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector

    def _query(self, options: ListOptions) -> dict[str, str | int | bool | None]:
        return {
            # "" and None both mean "no resourceVersion"; "0" is a real value ("any version").
            "resourceVersion": options.resource_version or None,
            "resourceVersionMatch": options.resource_version_match or None,
            "labelSelector": options.label_selector or self.label_selector,
            "fieldSelector": options.field_selector or self.field_selector,
        }

    def list(self, options: ListOptions) -> ListResult:
        query = self._query(options)
        query["limit"] = options.limit
        query["continue"] = options.continue_token
        query["timeoutSeconds"] = options.timeout_seconds
        body = self.client.get(self.resource.path(self.namespace), query)
        metadata = body.get("metadata") or {}
        items = body.get("items") or []
        # A list's items carry no apiVersion/kind; give them back so handlers see whole objects.
        for item in items:
            item.setdefault("apiVersion", self.resource.group_version)
            item.setdefault("kind", self.resource.kind)
        return ListResult(
            items=items,
            resource_version=str(metadata.get("resourceVersion") or ""),
            continue_token=metadata.get("continue") or None,
        )

    def is_watch_list_semantics_supported(self) -> bool:
        """The API server streams the initial state on a watch (`sendInitialEvents`, Kubernetes
        1.27+ behind a gate, on by default since 1.32); an older server refuses the parameter and
        the reflector falls back to LIST."""
        return True

    def watch(self, options: ListOptions) -> StreamWatch:
        query = self._query(options)
        query["watch"] = True
        query["allowWatchBookmarks"] = options.allow_watch_bookmarks or None
        query["sendInitialEvents"] = options.send_initial_events or None
        query["timeoutSeconds"] = options.timeout_seconds
        read_timeout = float(options.timeout_seconds or 300) + WATCH_READ_SLACK
        response = self.client.stream(self.resource.path(self.namespace), query=query, read_timeout=read_timeout)
        return StreamWatch(response)
