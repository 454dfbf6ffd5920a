"""Terminating: declared by the API, never set by upstream; a no-op (state/terminating.go)."""

from __future__ import annotations

from jobflow_controller.jobflow.state.base import State


class TerminatingState(State):
    """`execute` does nothing (State's)."""
