"""Terminating: declared by the API, never set by upstream; a no-op (state/terminating.go)."""

from __future__ import annotations

from jobflow_controller.apis import Action
from jobflow_controller.jobflow.state.factory import _Base


class TerminatingState(_Base):
    def execute(self, action: Action) -> None:
        return None
