"""``record.FakeRecorder`` for controller unit tests.

A controller test wants to assert *which* events were recorded, not to run a broadcaster, so
the fake renders each call as ``"<type> <reason> <message>"`` into :attr:`FakeRecorder.events`,
a queue standing in for client-go's ``Events chan string``. Tests compare those strings exactly,
the same strings Go tests compare.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Mapping
from typing import Any

from ._gofmt import go_string, sprintf

__all__ = ["FakeRecorder"]


class FakeRecorder:
    """Records events as strings instead of sending them anywhere.

    ``buffer_size`` bounds :attr:`events` (0 means unbounded; a full bounded queue blocks the
    caller, like a full Go channel). ``include_object`` appends
    ``" involvedObject{kind=<kind>,apiVersion=<apiVersion>}"``; non-empty annotations append
    ``" map[k:v ...]"``. With ``discard`` nothing is kept (client-go's nil channel).
    Event types are not validated, as in client-go.
    """

    def __init__(self, buffer_size: int = 0, *, include_object: bool = False, discard: bool = False) -> None:
        self.events: queue.Queue[str] | None = None if discard else queue.Queue(maxsize=buffer_size)
        self.include_object = include_object
        self._lock = threading.Lock()
        self._history: list[str] = []

    def event(self, obj: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        self._write(obj, None, f"{event_type} {reason} {message}")

    def eventf(self, obj: Mapping[str, Any], event_type: str, reason: str, message_fmt: str, *args: Any) -> None:
        self._write(obj, None, f"{event_type} {reason} {sprintf(message_fmt, *args)}")

    def annotated_eventf(
        self,
        obj: Mapping[str, Any],
        annotations: Mapping[str, str] | None,
        event_type: str,
        reason: str,
        message_fmt: str,
        *args: Any,
    ) -> None:
        self._write(obj, annotations, f"{event_type} {reason} {sprintf(message_fmt, *args)}")

    def drain(self) -> list[str]:
        """Take every event currently queued, oldest first, without blocking."""
        drained: list[str] = []
        if self.events is None:
            return drained
        while True:
            try:
                drained.append(self.events.get_nowait())
            except queue.Empty:
                return drained

    @property
    def history(self) -> list[str]:
        """Every event recorded so far, whether or not it was taken from :attr:`events`."""
        with self._lock:
            return list(self._history)

    def _write(self, obj: Mapping[str, Any], annotations: Mapping[str, str] | None, text: str) -> None:
        if self.events is None:
            return
        if self.include_object:
            kind = obj.get("kind", "") if isinstance(obj, Mapping) else ""
            api_version = obj.get("apiVersion", "") if isinstance(obj, Mapping) else ""
            text += f" involvedObject{{kind={kind},apiVersion={api_version}}}"
        if annotations:
            text += " " + go_string(dict(annotations))
        with self._lock:
            self._history.append(text)
        self.events.put(text)
