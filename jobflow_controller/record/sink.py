"""The sink the broadcaster writes events to, and the errors it may raise.

client-go decides whether to retry an event write from the *type* of the error (a request it
could not build, an API status, a transport failure). Python clients do not share those types,
so the contract is explicit here: a sink raises :class:`SinkError` with flags saying what went
wrong, and any other exception is treated like a transport error (retried), as client-go's
``default`` branch does. ``jobflow_controller.kube.event_sink`` maps the ``kubernetes`` client's
errors onto these flags; the record package never imports that client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from .types import Event

__all__ = ["EventSink", "SinkError"]


@runtime_checkable
class EventSink(Protocol):
    """``record.EventSink``: where correlated events are written (the core/v1 Events API)."""

    def create(self, event: Event) -> Event:
        """POST the event into ``event.metadata.namespace``; return the server's copy."""
        ...

    def update(self, event: Event) -> Event:
        """PUT the event; return the server's copy. Unused by the recorder, kept for parity."""
        ...

    def patch(self, event: Event, data: Mapping[str, Any]) -> Event:
        """Strategic-merge-PATCH ``data`` onto the existing event named like ``event``."""
        ...


class SinkError(Exception):
    """A failed event write, classified the way ``recordEvent`` needs it.

    * ``not_found``: the event to PATCH is gone (expired by the API server's event TTL); the
      caller creates it anew.
    * ``already_exists``: a create collided with an existing name; dropped quietly.
    * ``namespace_terminating``: the namespace is being deleted; dropped quietly.
    * ``retriable``: the server could not be reached or asked us to come back later; the event
      is retried. Everything else with ``retriable=False`` is a rejection, never retried, because
      the same request would be rejected again.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        reason: str = "",
        not_found: bool = False,
        already_exists: bool = False,
        namespace_terminating: bool = False,
        retriable: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason
        self.not_found = not_found
        self.already_exists = already_exists
        self.namespace_terminating = namespace_terminating
        self.retriable = retriable

    def __repr__(self) -> str:
        flags = [
            name
            for name in ("not_found", "already_exists", "namespace_terminating", "retriable")
            if getattr(self, name)
        ]
        return f"SinkError({self.message!r}, status={self.status!r}, reason={self.reason!r}, flags={flags})"
